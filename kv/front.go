package kv

import (
	"strings"

	"github.com/shoalkv/shoal/eventloop"
)

// What the HTTP and frame fronts share with RESP: the keyspace, the
// password and protected mode. A second port must never be a way around
// AUTH, so each front checks the same atomics RESP does, per request.

// protectedModeText is RESP's DENIED refusal without the RESP framing, for
// the fronts to send in their own protocol.
var protectedModeText = strings.TrimSuffix(strings.TrimPrefix(errProtectedMode, "-"), "\r\n") + "\n"

// frontRefused applies protected mode to a new connection of a front as
// refuseUnprotected does for RESP (the caller answers in its protocol and
// closes): while protected mode is on and no password is set, only peers on
// this host are served.
func (h *Handler) frontRefused(c *eventloop.Conn) bool {
	if !h.protectedMode.Load() || h.authRequired.Load() || peerIsLocal(c.RemoteAddr()) {
		return false
	}
	h.opts.Logger.Warn("protected mode: refused a client from another host", "addr", addrString(c.RemoteAddr()))
	return true
}
