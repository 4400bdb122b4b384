package eventloop

import (
	"context"
	"net"

	"github.com/shoalkv/shoal/eventloop/engine"
)

// Engine serves a Server's connections in place of the native epoll/kqueue
// loops; set it in Options.Engine. nil, the default, is the native engine.
// The gnet v2 engine is gnetengine.Engine, in a package of its own so that
// a program that does not choose it does not link gnet.
//
// Every engine runs the same Handler and hands it the same *Conn; what an
// engine cannot honour of this package's promises its documentation says.
// Package eventloop/engine holds the types an Engine is built from, so an
// engine may live outside this module; gnetengine is the example.
type Engine interface {
	// Name is the engine's name as cmd/shoal's --engine flag spells it.
	Name() string
	// Start binds the listener and starts serving; it returns once the
	// engine accepts connections.
	Start(host engine.Host) (engine.Runner, error)
}

// host is the engine.Host a Server gives its engine.
type host struct{ s *Server }

func (h host) Server() any  { return h.s }
func (h host) Handler() any { return h.s.listeners[0].handler }

// Boot records the address and runs the handler's OnBoot, from the
// engine, before it serves a connection.
func (h host) Boot(addr net.Addr) {
	s := h.s
	s.addr = addr
	s.listeners[0].bound = addr
	if b, ok := s.listeners[0].handler.(BootHandler); ok {
		b.OnBoot(s)
	}
}

func (h host) NewConn(b engine.Conn) any {
	return &Conn{eng: &engineConn{b}, fd: b.Fd(), ln: h.s.listeners[0]}
}

// engineConn is the connEngine (conn.go) of a Conn another engine serves:
// it hands each call to the engine's connection, which keeps all of the
// connection's state but the handler's context (Conn.ctx).
type engineConn struct{ b engine.Conn }

func (e *engineConn) connWrite(_ *Conn, p []byte) (int, error)       { return e.b.Write(p) }
func (e *engineConn) connWriteString(_ *Conn, s string) (int, error) { return e.b.WriteString(s) }
func (e *engineConn) connOutputBuffer(*Conn) []byte                  { return e.b.OutputBuffer() }
func (e *engineConn) connSetOutputBuffer(_ *Conn, b []byte)          { e.b.SetOutputBuffer(b) }
func (e *engineConn) connOutputFull(*Conn) bool                      { return e.b.OutputFull() }
func (e *engineConn) connResume(*Conn)                               { e.b.Resume() }
func (e *engineConn) connOutboundBuffered(*Conn) int                 { return e.b.OutboundBuffered() }
func (e *engineConn) connInboundBuffered(*Conn) int                  { return e.b.InboundBuffered() }
func (e *engineConn) connFlush(*Conn) error                          { return e.b.Flush() }
func (e *engineConn) connClose(*Conn) error                          { return e.b.Close() }
func (e *engineConn) connAbort(_ *Conn, err error)                   { e.b.Abort(err) }
func (e *engineConn) connLocalAddr(*Conn) net.Addr                   { return e.b.LocalAddr() }
func (e *engineConn) connRemoteAddr(*Conn) net.Addr                  { return e.b.RemoteAddr() }
func (e *engineConn) connAsyncWrite(_ *Conn, p []byte) error         { return e.b.AsyncWrite(p) }
func (e *engineConn) connOutputBacklog(*Conn) int                    { return e.b.OutputBacklog() }
func (e *engineConn) connLoopIndex() int                             { return e.b.LoopIndex() }

func (e *engineConn) connExecute(c *Conn, fn func(c *Conn)) error {
	return e.b.Execute(func() { fn(c) })
}

// connReserve does nothing: the engine has no reservations, so
// ExecuteReserved is Execute (Conn.Reserve says so).
func (e *engineConn) connReserve(*Conn) error { return nil }

func (e *engineConn) connExecuteReserved(c *Conn, fn func(c *Conn)) error {
	return e.connExecute(c, fn)
}

func (e *engineConn) connSetOutputLimit(_ *Conn, l *OutputLimit) {
	if l == nil {
		e.b.SetOutputLimit(nil) // an untyped nil, not a nil *OutputLimit
		return
	}
	e.b.SetOutputLimit(l)
}

func (h host) AddConns(delta int64) int64 { return h.s.numConns.Add(delta) }
func (h host) AddRejected()               { h.s.rejected.Add(1) }
func (h host) MaxConns() int              { return h.s.MaxConns() }
func (h host) HandlerPanicked(hook string, fd int, v any) error {
	return h.s.handlerPanicked(hook, fd, v)
}

// startEngine runs s on Options.Engine instead of the native loops.
func (s *Server) startEngine() error {
	r, err := s.opts.Engine.Start(host{s})
	if err != nil {
		return err
	}
	s.runner = r // s.addr was set by host.Boot, before the engine served
	// The handler was booted before this (host.Boot), so its goroutines
	// may already call Counters: they look at runner only after engineUp.
	s.engineUp.Store(true)
	go func() {
		s.engineErr = r.Wait() // before done closes: Serve reads it after
		if sh := s.listeners[0].onShutdown; sh != nil {
			sh.OnShutdown()
		}
		close(s.done)
	}()
	return nil
}

// shutdownEngine is Shutdown for a Server on Options.Engine.
func (s *Server) shutdownEngine(ctx context.Context) error {
	s.closing.Store(true)
	err := s.runner.Shutdown(ctx)
	<-s.done
	return err
}

// engineCounters is Counters for a Server on Options.Engine: what the
// engine reports of its loops.
func (s *Server) engineCounters() []LoopCounters {
	st := s.runner.LoopStats()
	out := make([]LoopCounters, len(st))
	for i, l := range st {
		out[i] = LoopCounters{Conns: int64(l.Conns), Load: l.Load, OutputBacklog: l.OutputBacklog, OutputBacklogFreed: l.OutputBacklogFreed}
	}
	return out
}
