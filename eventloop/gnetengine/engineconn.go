package gnetengine

import (
	"fmt"
	"net"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/engine"
)

// The engine.Conn methods: what eventloop.Conn's methods do on this
// engine. AsyncWrite and Execute may be called from any goroutine, the
// rest on c's loop goroutine, as eventloop.Conn documents.

// pending is the output not yet written: gathered here, or in gnet's
// outbound buffer.
func (g *gconn) pending() int {
	n := 0
	if g.out != nil {
		n = len(g.out.B)
	}
	n += g.backlog.Len()
	if g.state&stDone != 0 {
		return n
	}
	return n + g.gc.OutboundBuffered()
}

func (g *gconn) ensureOut() {
	if g.out == nil {
		g.out = outPool.Get()
	}
}

// writable reports whether the handler may still write to c.
func (g *gconn) writable() bool {
	return g.state&(stCloseCalled|stAbort|stDone) == 0
}

// checkLimits closes c if its unsent output is past its limits
// (Options.OutputHardLimit, or those SetOutputLimit gave), counting what is
// pending, not what is being added, as the native engine does.
func (g *gconn) checkLimits() error {
	p := int64(g.pending())
	if g.limit == nil {
		if limit := int64(g.srv.opts.OutputHardLimit); p > limit {
			return g.overLimit(fmt.Errorf("%w: %d bytes pending, limit %d", eventloop.ErrOutputLimit, p, limit))
		}
		return nil
	}
	hard, soft, softFor := g.limit.Limits()
	if hard > 0 && p > hard {
		return g.overLimit(fmt.Errorf("%w: %d bytes pending, hard limit %d", eventloop.ErrOutputLimit, p, hard))
	}
	if soft == 0 || p <= soft {
		g.softSince = time.Time{}
		return nil
	}
	now := time.Now()
	if g.softSince.IsZero() {
		g.softSince = now
		return nil
	}
	if over := now.Sub(g.softSince); over > softFor {
		return g.overLimit(fmt.Errorf("%w: %d bytes pending, above the soft limit %d for %v (limit %v)", eventloop.ErrOutputLimit, p, soft, over.Round(time.Millisecond), softFor))
	}
	return nil
}

func (g *gconn) overLimit(err error) error {
	g.abort(err)
	return g.closeErr
}

// SetOutputLimit makes l bound c's output in place of
// Options.OutputHardLimit; nil restores that.
func (g *gconn) SetOutputLimit(l engine.OutputLimit) {
	g.limit = l
	g.softSince = time.Time{}
}

// Abort closes c at the next settle point, dropping its output. From a
// task (Execute) the task's settle closes it; inside OnTraffic, its return.
func (g *gconn) Abort(err error) {
	if g.state&stDone != 0 {
		return
	}
	g.abort(err)
}

// OutputBacklog is the backlog, and what gnet's outbound buffer held at
// the last settle.
func (g *gconn) OutputBacklog() int { return g.backlog.Len() + int(g.gnetOut.Load()) }

func (g *gconn) reserve() error {
	if !g.writable() {
		return eventloop.ErrConnClosed
	}
	if err := g.checkLimits(); err != nil {
		return err
	}
	g.ensureOut()
	return nil
}

func (g *gconn) Write(p []byte) (int, error) {
	if err := g.reserve(); err != nil {
		return 0, err
	}
	if len(g.out.B)+len(p) > g.srv.opts.FlushThreshold {
		// Hand over what is gathered rather than grow the buffer, as
		// the native engine does past FlushThreshold.
		g.flush()
		g.ensureOut()
	}
	g.out.B = append(g.out.B, p...)
	return len(p), nil
}

func (g *gconn) WriteString(s string) (int, error) {
	if err := g.reserve(); err != nil {
		return 0, err
	}
	g.out.B = append(g.out.B, s...)
	return len(s), nil
}

func (g *gconn) OutputBuffer() []byte {
	if !g.writable() {
		return nil
	}
	g.ensureOut()
	return g.out.B
}

func (g *gconn) SetOutputBuffer(b []byte) {
	if !g.writable() || g.checkLimits() != nil {
		return
	}
	g.ensureOut()
	g.out.B = b
}

func (g *gconn) OutputFull() bool { return g.pending() > g.srv.opts.OutputHighWater }

func (g *gconn) OutboundBuffered() int { return g.pending() }

func (g *gconn) InboundBuffered() int {
	if g.state&stDone != 0 {
		return 0
	}
	return g.gc.InboundBuffered()
}

// Resume marks c paused: settle, which every caller of a handler callback
// or task runs next, presents gnet's inbound buffer once the output is
// below low water, as it does after backpressure; new input meanwhile
// waits unpresented, as while paused.
func (g *gconn) Resume() {
	if g.writable() && g.gc.InboundBuffered() > 0 {
		g.state |= stPaused
	}
}

func (g *gconn) Flush() error {
	if g.state&stDone != 0 {
		return eventloop.ErrConnClosed
	}
	g.flush()
	if g.state&stAbort != 0 {
		return g.closeErr
	}
	return nil
}

func (g *gconn) Close() error {
	if !g.writable() {
		return eventloop.ErrConnClosed
	}
	// Every caller (OnOpen, OnTraffic, a task) settles c when it returns.
	g.state |= stCloseCalled | stClosing
	return nil
}

func (g *gconn) Fd() int { return g.fd }

// LoopIndex is set when the connection opens, before its *eventloop.Conn
// is handed to anyone, and never changes.
func (g *gconn) LoopIndex() int       { return g.loopIndex }
func (g *gconn) LocalAddr() net.Addr  { return g.local }
func (g *gconn) RemoteAddr() net.Addr { return g.remote }

func (g *gconn) AsyncWrite(p []byte) error {
	if g.closed.Load() {
		return eventloop.ErrConnClosed
	}
	b := outPool.Get()
	b.B = append(b.B[:0], p...)
	if err := g.enqueue(task{data: b}); err != nil {
		outPool.Put(b)
		return err
	}
	return nil
}

func (g *gconn) Execute(fn func()) error {
	if g.closed.Load() {
		return eventloop.ErrConnClosed
	}
	return g.enqueue(task{fn: fn})
}
