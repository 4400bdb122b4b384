// Package engine is the seam between package eventloop and the engines
// other than the native one: what an eventloop.Engine is given (Host) and
// returns (Runner), and what each *eventloop.Conn it serves delegates to
// (Conn). eventloop/gnetengine implements it over gnet v2; a program may
// implement it over another event library (its own io_uring loop, say) and
// set it in eventloop.Options.Engine. The seam is young: it may still
// change with the engines, as the eventloop conformance suite learns what
// an engine must honour.
//
// The types that cross the seam and belong to eventloop (Handler, *Conn,
// *Server) travel as any: package eventloop imports this one, so this one
// cannot name them. They are converted once per connection, never per
// request.
package engine

import (
	"context"
	"net"
	"time"
)

// Host is what a Server gives the engine that serves it.
type Host interface {
	// Server returns the *eventloop.Server being served; its Options
	// method reports the options with defaults filled in.
	Server() any
	// Handler returns the eventloop.Handler to call.
	Handler() any
	// NewConn returns a new *eventloop.Conn whose methods delegate to b.
	NewConn(b Conn) any
	// Boot tells the Server the bound address (with the port the kernel
	// chose for ":0") and runs the handler's OnBoot. The engine calls it
	// once, after binding and before it serves any connection: a client
	// that connects at once must find the handler booted.
	Boot(addr net.Addr)
	// AddConns adds delta to the count Server.NumConns reports and
	// returns the new count.
	AddConns(delta int64) int64
	// AddRejected counts a connection MaxConns turned away.
	AddRejected()
	// MaxConns reports the limit on open connections now (0: none); the
	// server's SetMaxConns changes it while it runs.
	MaxConns() int
	// HandlerPanicked records a panic the engine recovered from a handler
	// hook (hook names it) on the connection fd: logged with the stack
	// (call it from the deferred recover), counted; it returns the error
	// to close the connection with.
	HandlerPanicked(hook string, fd int, v any) error
}

// Runner is a started engine.
type Runner interface {
	// Addr is the bound address (with the port the kernel chose for ":0").
	Addr() net.Addr
	// Wait returns once the engine has stopped and every connection is
	// closed: nil after Shutdown, and why otherwise.
	Wait() error
	// Shutdown stops accepting, answers what each connection has
	// already sent and closes it, as Server.Shutdown documents; if ctx
	// ends first the rest are closed at once and ctx's error returned.
	Shutdown(ctx context.Context) error
	// LoopStats reports each loop's open connections, load and backlog.
	LoopStats() []LoopStat
}

// LoopStat is what an engine reports of one loop, for
// eventloop.Server.Counters.
type LoopStat struct {
	Conns int
	Load  float64
	// OutputBacklog is the output the loop holds for slow readers
	// (eventloop.LoopCounters.OutputBacklog).
	OutputBacklog int64
	// OutputBacklogFreed is eventloop.LoopCounters.OutputBacklogFreed.
	OutputBacklogFreed int64
}

// Conn is what an *eventloop.Conn served by another engine delegates to.
// The methods mean what eventloop.Conn's methods of the same names
// document; AsyncWrite and Execute may be called from any goroutine, the
// rest only on the connection's loop goroutine.
type Conn interface {
	Write(p []byte) (int, error)
	WriteString(s string) (int, error)
	OutputBuffer() []byte
	SetOutputBuffer(b []byte)
	OutputFull() bool
	OutboundBuffered() int
	InboundBuffered() int
	// Resume presents the unconsumed input again, as eventloop.Conn.Resume.
	Resume()
	Flush() error
	Close() error
	Fd() int
	// LoopIndex is the engine loop serving the connection, from 0 to
	// Options.Loops less one, as eventloop.Conn.LoopIndex.
	LoopIndex() int
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
	AsyncWrite(p []byte) error
	// Execute runs fn on the loop goroutine, as eventloop.Conn.Execute.
	Execute(fn func()) error
	// SetOutputLimit bounds the connection's unsent output by l in
	// place of Options.OutputHardLimit (nil: that again), as
	// eventloop.Conn.SetOutputLimit.
	SetOutputLimit(l OutputLimit)
	// OutputBacklog is eventloop.Conn.OutputBacklog: the output waiting
	// because the peer reads slowly; any goroutine may call it.
	OutputBacklog() int
	// Abort closes the connection at once, dropping its output, as
	// eventloop.Conn.Abort.
	Abort(err error)
}

// OutputLimit is what an *eventloop.OutputLimit gives an engine: its
// limits as they are now (they may change between calls).
type OutputLimit interface {
	Limits() (hard, soft int64, softFor time.Duration)
}
