//go:build darwin || freebsd

package eventloop

import "golang.org/x/sys/unix"

// readFd and writeFd are read(2) and write(2) on a non-blocking socket.
// darwin forbids raw system calls (they go through libSystem), so these are
// the ordinary wrappers.
func readFd(fd int, p []byte) (int, error) { return unix.Read(fd, p) }

func writeFd(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

// socketSettled cannot tell on the BSDs without per-system ioctls; a
// lingering close then waits for the peer's close or the timeout.
func socketSettled(int) bool { return false }
