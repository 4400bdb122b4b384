//go:build linux

package eventloop

import "golang.org/x/sys/unix"

const tcpKeepIdle = unix.TCP_KEEPIDLE

// acceptConn accepts one connection as a non-blocking, close-on-exec socket.
func acceptConn(lfd int) (int, unix.Sockaddr, error) {
	return unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}
