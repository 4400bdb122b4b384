package gnetengine

import "github.com/shoalkv/shoal/eventloop/internal/chunkq"

// A slow reader's output, as on the native engine: gnet keeps what the
// socket does not take in its own outbound buffer, on the Go heap, grown
// as a stalled peer's output grows (and the collector's headroom on top).
// So once gnet holds more than spillAt for a connection, further output
// waits in the connection's backlog instead, a chunkq.Queue mapped outside
// the Go heap, and is fed to gnet feedAt at a time as gnet's buffer drains.
// The settle that every callback, task and housekeeper check ends with
// feeds it; a connection with a backlog is watched, so the housekeeper
// looks every watchInterval (gnet reports no "written" event).

const (
	spillAt = 64 << 10  // gnet's buffer may hold this much before output goes to the backlog
	feedAt  = 256 << 10 // handed to gnet per feed
)

// chunks is g's loop's chunk cache.
func (g *gconn) chunks() *chunkq.Cache { return &g.srv.chunks[g.loopIndex] }

// send hands p to gnet, or queues it in the backlog when gnet is behind.
func (g *gconn) send(p []byte) {
	if g.backlog.Empty() && g.gc.OutboundBuffered() <= spillAt {
		_, _ = g.gc.Write(p)
		return
	}
	n := g.backlog.Append(g.chunks(), p)
	if n == len(p) {
		return
	}
	// No chunk could be mapped: gnet takes all of the backlog, then the
	// rest, in order.
	for q := g.backlog.Front(); len(q) > 0; q = g.backlog.Front() {
		if _, err := g.gc.Write(q); err != nil {
			return
		}
		g.backlog.Consume(g.chunks(), len(q))
	}
	_, _ = g.gc.Write(p[n:])
}

// feed hands gnet up to feedAt of the backlog once gnet's own buffer is
// down to spillAt.
func (g *gconn) feed() {
	if g.backlog.Empty() || g.gc.OutboundBuffered() > spillAt {
		return
	}
	for fed := 0; fed < feedAt; {
		p := g.backlog.Front()
		if len(p) == 0 {
			return
		}
		if _, err := g.gc.Write(p); err != nil {
			return
		}
		g.backlog.Consume(g.chunks(), len(p))
		fed += len(p)
	}
}
