package server

import (
	"net"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// errProtectedMode is redis-server 7.0's refusal as a RESP error reply.
const errProtectedMode = "-" + kv.ProtectedModeText + "\r\n"

// protectedModeText is the refusal for the fronts to send in their own
// protocol.
const protectedModeText = kv.ProtectedModeText + "\n"

// refused applies Redis 7.0's protected mode to a new connection, on any
// front: while protected mode is on and no password is set, a peer that is
// not on the loopback interface (or a Unix socket) is refused. Redis 7.0
// applies it whatever the bind address, so binding 0.0.0.0 alone does not
// open the server to the network: that takes a password or protected-mode
// no. The caller answers in its protocol and closes.
func (h *Handler) refused(c *eventloop.Conn) bool {
	if !h.kv.ProtectedMode() || h.kv.AuthRequired() || peerIsLocal(c.RemoteAddr()) {
		return false
	}
	h.log.Warn("protected mode: refused a client from another host", "addr", addrString(c.RemoteAddr()))
	return true
}

// refuseUnprotected is refused for RESP: the peer gets the DENIED error and
// the connection closes. It reports whether c was refused.
func (h *Handler) refuseUnprotected(c *eventloop.Conn) bool {
	if !h.refused(c) {
		return false
	}
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
