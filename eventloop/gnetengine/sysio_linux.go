package gnetengine

import "golang.org/x/sys/unix"

// socketSettled reports whether the peer has acknowledged everything sent
// on fd and nothing unread waits in it.
func socketSettled(fd int) bool {
	out, err := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
	if err != nil || out != 0 {
		return false
	}
	return unreadInput(fd) == 0
}

// unreadInput is how many bytes wait unread in fd's receive queue; -1 if
// it cannot tell.
func unreadInput(fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
	if err != nil {
		return -1
	}
	return n
}
