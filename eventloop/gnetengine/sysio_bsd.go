//go:build darwin || freebsd

package gnetengine

import "golang.org/x/sys/unix"

// socketSettled cannot tell on the BSDs without per-system ioctls; a
// lingering close then waits for the peer's close or the timeout.
func socketSettled(int) bool { return false }

// fionread is _IOR('f', 127, int), the same on darwin and FreeBSD;
// golang.org/x/sys/unix does not export it for them.
const fionread = 0x4004667f

// unreadInput is how many bytes wait unread in fd's receive queue; -1 if
// it cannot tell.
func unreadInput(fd int) int {
	n, err := unix.IoctlGetInt(fd, fionread)
	if err != nil {
		return -1
	}
	return n
}
