//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package loadgen

import "golang.org/x/sys/unix"

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TIOCGETA)
	return err == nil
}
