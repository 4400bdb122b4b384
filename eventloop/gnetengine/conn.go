package gnetengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/engine"
	"github.com/shoalkv/shoal/eventloop/internal/chunkq"
	"github.com/valyala/bytebufferpool"
	"golang.org/x/sys/unix"
)

// outPool holds the buffers replies are gathered in between two flushes.
var outPool bytebufferpool.Pool

// Connection state, loop goroutine only.
const (
	stPaused      uint16 = 1 << iota // output above high water: input waits, unpresented, until below low water
	stCloseCalled                    // Close was called: the handler may write no more
	stClosing                        // close once the output is written and queued tasks ran
	stAbort                          // close at the next settle point, dropping output
	stDrain                          // shutting down: close once answered and the socket is empty
	stLingering                      // closed for the handler; discarding input until the peer closes
	stDone                           // OnClose has run for the handler
	stWatched                        // in server.watch
)

// lingerTimeout bounds a lingering close, as the native engine's does.
const lingerTimeout = 2 * time.Second

// gconn is one connection: the engine.Conn an *eventloop.Conn delegates
// to, on top of a gnet.Conn. Replies are gathered in out and handed to
// gnet with one Write per batch; gnet sends what the socket takes and
// keeps the rest in its own outbound buffer, so pending output is the sum
// of both.
type gconn struct {
	srv       *server         // immutable
	gc        gnet.Conn       // immutable
	c         *eventloop.Conn // immutable
	fd        int             // immutable
	local     net.Addr        // immutable
	remote    net.Addr        // immutable
	loopIndex int             // guarded by srv.mu
	runTasksR gnet.Runnable   // immutable: runs the queued tasks
	checkR    gnet.Runnable   // immutable: runs check

	// Loop goroutine only.
	out         *bytebufferpool.ByteBuffer // gathered replies; nil when none
	state       uint16
	closeErr    error
	lingerUntil time.Time
	lastPending int                // pending output at the last check, to see a slow reader drain
	limit       engine.OutputLimit // nil: Options.OutputHardLimit
	softSince   time.Time          // when the output was first seen above limit's soft limit; zero when below
	gnetOut     atomic.Int64       // gnet's outbound buffer at the last settle (OutputBacklog)
	backlog     chunkq.Queue       // output held back while gnet's buffer is full (backlog.go)
	quietSince  int64              // guarded by srv.mu (the housekeeper): unix ns of the scan that last saw c active

	active       atomic.Bool // traffic since the housekeeper's last idle scan
	idle         atomic.Bool // the housekeeper found c quiet for IdleTimeout; check confirms
	gone         atomic.Bool // gnet has closed the descriptor; tasks still queued find it
	checkQueued  atomic.Bool // a check is in gnet's task queue
	closed       atomic.Bool // set under mu: no task is accepted after it
	mu           sync.Mutex  // guards tasks and trigger, with closed
	tasks        []task      // AsyncWrite and Execute work, in order
	trigger      bool        // runTasks is in gnet's queue
	runningTasks []task      // loop goroutine only: the batch being run
}

// task is work from another goroutine: data to write, or fn to run.
type task struct {
	data *bytebufferpool.ByteBuffer
	fn   func()
}

// OnOpen implements gnet.EventHandler: MaxConns, then the handler's OnOpen.
func (s *server) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	if max := s.host.MaxConns(); max > 0 {
		if n := s.host.AddConns(1); n > int64(max) {
			s.host.AddConns(-1)
			s.host.AddRejected()
			return s.opts.RejectMessage, gnet.Close
		}
	} else {
		s.host.AddConns(1)
	}
	g := &gconn{srv: s, gc: gc, fd: gc.Fd(), local: gc.LocalAddr(), remote: gc.RemoteAddr()}
	g.runTasksR = gnet.RunnableFunc(func(context.Context) error { g.runTasks(); return nil })
	g.checkR = gnet.RunnableFunc(func(context.Context) error { g.check(); return nil })
	s.mu.Lock()
	g.quietSince = time.Now().UnixNano()
	if s.drain.Load() { // accepted as the shutdown began: turned away, as the native engine does
		s.mu.Unlock()
		s.host.AddConns(-1)
		return nil, gnet.Close
	}
	el := gc.EventLoop()
	i, ok := s.loopIdx[el]
	if !ok {
		i = len(s.loopIdx)
		s.loopIdx[el] = i
	}
	g.loopIndex = i
	s.conns[g] = struct{}{}
	s.mu.Unlock()
	g.c = s.host.NewConn(g).(*eventloop.Conn)
	gc.SetContext(g)
	if s.onOpen != nil {
		g.recovering("OnOpen", func() { s.onOpen.OnOpen(g.c) })
	}
	g.flush()
	if g.settle() {
		return nil, gnet.Close
	}
	return nil, gnet.None
}

// OnTraffic implements gnet.EventHandler: gnet calls it once per read.
func (s *server) OnTraffic(gc gnet.Conn) gnet.Action {
	g, _ := gc.Context().(*gconn)
	if g == nil {
		_, _ = gc.Discard(-1)
		return gnet.Close
	}
	if s.opts.IdleTimeout > 0 && !g.active.Load() {
		g.active.Store(true)
	}
	switch {
	case g.state&(stLingering|stCloseCalled|stClosing|stAbort|stDone) != 0:
		_, _ = gc.Discard(-1) // closing: input is no longer presented
	case g.state&stPaused != 0:
		// gnet cannot stop reading a socket, so input waits in its
		// inbound buffer instead of the peer's socket.
		if n, limit := gc.InboundBuffered(), s.opts.MaxInboundBuffer; n > limit {
			g.abort(fmt.Errorf("%w: %d bytes unconsumed, limit %d", eventloop.ErrInboundLimit, n, limit))
		}
	default:
		g.deliver()
		g.flush()
	}
	if g.settle() {
		return gnet.Close
	}
	return gnet.None
}

// errQueuedAtEOF is OnClose's error when gnet closed a connection at the
// peer's EOF with AsyncWrite or Execute work still queued: that work is
// lost, and a nil error would say it was not.
var errQueuedAtEOF = errors.New("eventloop: gnet closed the connection at the peer's EOF with AsyncWrite/Execute work still queued")

// OnClose implements gnet.EventHandler: gnet has closed the descriptor.
func (s *server) OnClose(gc gnet.Conn, err error) gnet.Action {
	g, _ := gc.Context().(*gconn)
	if g == nil {
		return gnet.None
	}
	g.gone.Store(true)
	if g.state&stDone == 0 {
		g.mu.Lock()
		g.closed.Store(true) // under mu: no task is accepted after the check below
		queued := len(g.tasks) > 0 || g.trigger
		g.mu.Unlock()
		switch {
		case g.state&stAbort != 0:
			err = g.closeErr
		case s.forced.Load():
			err = eventloop.ErrServerClosed
		case err == nil || errors.Is(err, io.EOF):
			err = nil // the peer hung up, or the engine stopped after a drain
			if queued {
				err = errQueuedAtEOF
			}
		}
		g.finish(err)
	}
	g.dropTasks()
	s.unregister(g)
	s.host.AddConns(-1)
	return gnet.None
}

// deliver presents every unconsumed byte to the handler and keeps what it
// leaves; gnet's Peek is zero-copy unless an earlier rest is prepended.
func (g *gconn) deliver() {
	in, _ := g.gc.Peek(-1)
	if len(in) == 0 {
		return
	}
	consumed, ok := g.onTraffic(in)
	if !ok {
		return // it panicked: c is closing
	}
	if consumed < 0 || consumed > len(in) {
		g.abort(fmt.Errorf("eventloop: OnTraffic consumed %d of %d bytes", consumed, len(in)))
		return
	}
	if consumed > 0 {
		_, _ = g.gc.Discard(consumed) // Discard(0) would drop everything
	}
	if rest, limit := len(in)-consumed, g.srv.opts.MaxInboundBuffer; rest > limit {
		g.abort(fmt.Errorf("%w: %d bytes unconsumed, limit %d", eventloop.ErrInboundLimit, rest, limit))
		return
	}
	if g.pending() > g.srv.opts.OutputHighWater {
		g.state |= stPaused
	}
}

// flush hands the gathered replies to gnet with one Write. gnet writes
// them at once if its own buffer is empty and keeps what the socket does
// not take. A failed write makes gnet close c (OnClose runs inside Write).
func (g *gconn) flush() {
	b := g.out
	if b == nil {
		return
	}
	g.out = nil
	if len(b.B) > 0 && g.state&(stAbort|stDone) == 0 {
		g.send(b.B)
	}
	outPool.Put(b)
}

// settle applies what a callback or task decided, as the native engine's
// settle does; it reports whether gnet should close the descriptor now.
func (g *gconn) settle() bool {
	if g.state&stDone != 0 {
		return g.state&stLingering != 0 && g.lingerOver()
	}
	if g.state&stAbort != 0 {
		return true
	}
	low := g.srv.opts.OutputLowWater
	for g.state&stPaused != 0 && g.pending() <= low {
		// Present the input left while the output was full, without
		// waiting for the peer to send more.
		g.state &^= stPaused
		if g.state&stCloseCalled == 0 && g.gc.InboundBuffered() > 0 {
			g.deliver()
			g.flush()
			if g.state&(stAbort|stDone) != 0 {
				return g.state&stAbort != 0
			}
		}
	}
	pending := g.pending()
	if g.state&stDone == 0 {
		g.feed()
		g.gnetOut.Store(int64(g.gc.OutboundBuffered()))
	}
	if g.state&(stDrain|stClosing|stPaused) == stDrain && pending == 0 && unreadInput(g.fd) <= 0 {
		g.state |= stClosing // answered everything the peer sent
	}
	if g.state&stClosing != 0 && pending == 0 {
		if closeNow, ok := g.closeGraceful(); ok {
			return closeNow
		}
	}
	// A backlog is watched too, so that OutputBacklog follows it down as
	// gnet writes it out without calling back.
	g.setWatched(g.state&(stPaused|stClosing|stDrain|stLingering) != 0 || g.gnetOut.Load() > 0 || !g.backlog.Empty())
	return false
}

// closeGraceful ends c for the handler once no task is queued for it, and
// lingers like the native engine: half-close, then discard input until
// the peer closes, acknowledges everything, or lingerTimeout passes. ok
// is false if tasks are queued (their run settles c again); closeNow
// says the descriptor can be closed at once.
func (g *gconn) closeGraceful() (closeNow, ok bool) {
	g.mu.Lock()
	if len(g.tasks) > 0 || g.trigger {
		g.mu.Unlock()
		return false, false
	}
	g.closed.Store(true)
	g.mu.Unlock()
	g.finish(nil)
	if socketSettled(g.fd) || unix.Shutdown(g.fd, unix.SHUT_WR) != nil {
		return true, true
	}
	g.state |= stLingering
	g.lingerUntil = time.Now().Add(lingerTimeout)
	g.setWatched(true)
	return false, true
}

func (g *gconn) lingerOver() bool {
	return socketSettled(g.fd) || !time.Now().Before(g.lingerUntil)
}

// finish runs the handler's OnClose once and frees c's buffer.
func (g *gconn) finish(err error) {
	g.closed.Store(true) // also under mu where it matters (closeGraceful)
	g.state |= stDone
	g.gnetOut.Store(0)
	g.backlog.Reset(g.chunks())
	if g.out != nil {
		outPool.Put(g.out)
		g.out = nil
	}
	if h := g.srv.onClose; h != nil {
		g.recovering("OnClose", func() { h.OnClose(g.c, err) })
	}
}

// abort marks c to be closed at the next settle point and logs why.
func (g *gconn) abort(err error) {
	if g.state&stAbort != 0 {
		return
	}
	g.state |= stAbort
	g.closeErr = err
	if g.srv.onClose == nil { // else OnClose is told, as on the native engine
		g.srv.opts.Logger.Warn("eventloop: closing connection", "fd", g.fd, "reason", err.Error())
	}
}

func (g *gconn) setWatched(on bool) {
	if on == (g.state&stWatched != 0) {
		return
	}
	g.state ^= stWatched
	g.srv.setWatched(g, on)
}

// closeNow closes the descriptor from a task (outside OnTraffic, whose
// return value does it there).
func (g *gconn) closeNow() { _ = g.gc.EventLoop().Close(g.gc) }

// check is what the housekeeper has each watched or idle-looking
// connection's loop run.
func (g *gconn) check() {
	g.checkQueued.Store(false)
	if g.gone.Load() {
		return
	}
	if to := g.srv.opts.IdleTimeout; to > 0 && g.state&stDone == 0 {
		// Output that moved since the last check is traffic too: a slow
		// reader draining its replies is not idle.
		if p := g.pending(); p != g.lastPending {
			g.lastPending = p
			g.active.Store(true)
		}
		if g.idle.Swap(false) && !g.active.Load() && g.state&stAbort == 0 {
			g.state |= stAbort
			g.closeErr = fmt.Errorf("%w: no traffic for %v", eventloop.ErrIdleTimeout, to)
		}
	}
	if g.settle() {
		g.closeNow()
	}
}

// beginDrain starts a graceful shutdown of c: keep answering what it
// sends until its output is written and its socket is empty, then close.
func (g *gconn) beginDrain() {
	if g.gone.Load() || g.state&stDone != 0 {
		return
	}
	g.state |= stDrain
	if g.settle() {
		g.closeNow()
	}
}

// schedule runs fn on c's loop.
func (g *gconn) schedule(fn func()) {
	_ = g.gc.EventLoop().Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		fn()
		return nil
	}))
}

// queueCheck has c's loop run check, once however often it is asked
// before the check runs.
func (g *gconn) queueCheck() {
	if g.checkQueued.CompareAndSwap(false, true) {
		if g.gc.EventLoop().Execute(context.Background(), g.checkR) != nil {
			g.checkQueued.Store(false)
		}
	}
}

// enqueue hands t to c's loop, in order with the other tasks for c: one
// gnet task runs the whole queue, so gnet's two priority queues cannot
// reorder them.
func (g *gconn) enqueue(t task) error {
	g.mu.Lock()
	if g.closed.Load() {
		g.mu.Unlock()
		return eventloop.ErrConnClosed
	}
	g.tasks = append(g.tasks, t)
	first := !g.trigger
	g.trigger = true
	g.mu.Unlock()
	if first {
		if err := g.gc.EventLoop().Execute(context.Background(), g.runTasksR); err != nil {
			g.mu.Lock()
			g.tasks = g.tasks[:len(g.tasks)-1]
			g.trigger = false
			g.mu.Unlock()
			return eventloop.ErrServerClosed
		}
	}
	return nil
}

// runTasks runs c's queued tasks on its loop, then flushes once.
func (g *gconn) runTasks() {
	g.mu.Lock()
	g.runningTasks, g.tasks = g.tasks, g.runningTasks[:0]
	g.trigger = false
	g.mu.Unlock()
	gone := g.gone.Load()
	for i, t := range g.runningTasks {
		if !gone && g.state&(stAbort|stDone) == 0 {
			if t.data != nil {
				// Not Write: data accepted before a Close is still sent.
				if g.checkLimits() == nil {
					g.ensureOut()
					g.out.B = append(g.out.B, t.data.B...)
				}
			} else {
				g.recovering("Execute", t.fn)
			}
		}
		if t.data != nil {
			outPool.Put(t.data)
		}
		g.runningTasks[i] = task{}
	}
	if gone {
		return
	}
	g.flush()
	if g.settle() {
		g.closeNow()
	}
}

// dropTasks releases what tasks still hold once gnet closed c.
func (g *gconn) dropTasks() {
	g.mu.Lock()
	for _, t := range g.tasks {
		if t.data != nil {
			outPool.Put(t.data)
		}
	}
	g.tasks = nil
	g.mu.Unlock()
}

// onTraffic calls the handler's OnTraffic; a panic closes c (ok false),
// as the native engine does.
func (g *gconn) onTraffic(in []byte) (consumed int, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			g.abort(g.srv.host.HandlerPanicked("OnTraffic", g.fd, v))
			consumed, ok = 0, false
		}
	}()
	return g.srv.handler.OnTraffic(g.c, in), true
}

// recovering runs a handler hook other than OnTraffic; a panic closes c
// (after OnClose it is only logged and counted: c is closing already).
func (g *gconn) recovering(hook string, fn func()) {
	defer func() {
		if v := recover(); v != nil {
			err := g.srv.host.HandlerPanicked(hook, g.fd, v)
			if g.state&stDone == 0 {
				g.abort(err)
			}
		}
	}()
	fn()
}
