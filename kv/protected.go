package kv

import (
	"net"

	"github.com/shoalkv/shoal/eventloop"
)

// errProtectedMode is redis-server 7.0's refusal of a client from another
// host while protected mode is on and no password is set, word for word
// (typo included), so that users searching for it find Redis's advice.
const errProtectedMode = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// refuseUnprotected applies protected mode to a new connection, as Redis
// 7.0 does when it accepts one: while protected mode is on and no password
// is set, a peer that is not on the loopback interface (or a Unix socket)
// gets the DENIED error and is closed. Redis 7.0 applies it whatever the
// bind address, so binding 0.0.0.0 alone does not open the server to the
// network: that takes a password or protected-mode no. It reports whether
// c was refused.
func (h *Handler) refuseUnprotected(c *eventloop.Conn) bool {
	if !h.protectedMode.Load() || h.authRequired.Load() || peerIsLocal(c.RemoteAddr()) {
		return false
	}
	h.opts.Logger.Warn("protected mode: refused a client from another host", "addr", addrString(c.RemoteAddr()))
	_, _ = c.WriteString(errProtectedMode)
	_ = c.Close()
	return true
}

// peerIsLocal reports whether a peer address is on this host's loopback
// interface or a Unix socket. A peer whose address is unknown (it is gone
// already) counts as local: there is nothing left to refuse.
func peerIsLocal(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	case nil:
		return true
	}
	return false
}
