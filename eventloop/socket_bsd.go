//go:build darwin || freebsd

package eventloop

import "golang.org/x/sys/unix"

// acceptConn accepts one connection as a non-blocking, close-on-exec socket.
// darwin has no accept4, so the flags are set afterwards; the loop is the
// only one to see the descriptor before then.
func acceptConn(lfd int) (int, unix.Sockaddr, error) {
	fd, sa, err := unix.Accept(lfd)
	if err != nil {
		return -1, nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return fd, sa, nil
}
