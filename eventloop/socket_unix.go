//go:build linux || darwin || freebsd

package eventloop

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// listen opens a non-blocking listening socket and returns its descriptor and
// bound address. The standard library does the address parsing and binding;
// we keep a private duplicate of its descriptor so the loops can poll it.
func listen(network, addr string, reusePort bool) (int, net.Addr, error) {
	lc := net.ListenConfig{}
	if reusePort {
		lc.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	ln, err := lc.Listen(context.Background(), network, addr)
	if err != nil {
		return -1, nil, err
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		// The socket file must outlive this temporary listener; the server
		// removes it at shutdown.
		ul.SetUnlinkOnClose(false)
	}
	defer ln.Close()
	sc, err := ln.(syscall.Conn).SyscallConn()
	if err != nil {
		return -1, nil, err
	}
	fd := -1
	var derr error
	if err := sc.Control(func(orig uintptr) {
		fd, derr = unix.FcntlInt(orig, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, nil, err
	}
	if derr != nil {
		return -1, nil, fmt.Errorf("eventloop: dup listener: %w", derr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return fd, ln.Addr(), nil
}

// setupConn applies per-connection socket options to a descriptor accepted
// on a listener of the given network.
func setupConn(fd int, network string, o *Options) error {
	if network != "unix" { // tcp, tcp4 or tcp6

		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			return err
		}
		if o.TCPKeepAlive > 0 {
			if err := setKeepAlive(fd, o.TCPKeepAlive); err != nil {
				return err
			}
		}
	}
	if o.SocketSendBuffer > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, o.SocketSendBuffer); err != nil {
			return err
		}
	}
	if o.SocketRecvBuffer > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, o.SocketRecvBuffer); err != nil {
			return err
		}
	}
	return nil
}

func setKeepAlive(fd int, d time.Duration) error {
	secs := int(d / time.Second)
	if secs < 1 {
		secs = 1
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, tcpKeepIdle, secs); err != nil {
		return err
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs)
}

// sockaddrToAddr converts a socket address to the net.Addr the standard
// library would report for it.
func sockaddrToAddr(sa unix.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	case *unix.SockaddrInet6:
		tcp := &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
		if a.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(a.ZoneId)); err == nil {
				tcp.Zone = ifi.Name
			}
		}
		return tcp
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	return nil
}
