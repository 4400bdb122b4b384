package eventloop

import (
	"context"

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

func (h host) NewConn(b engine.Conn) any {
	return &Conn{fd: b.Fd(), ln: h.s.listeners[0], ctx: &extConn{Conn: b}}
}

// extConn is what Conn.ctx holds for a connection another engine serves
// (Conn.loop is nil): the engine's connection, which every method of Conn
// delegates to, and the handler's context. Keeping it in ctx instead of a
// field of its own keeps Conn, and so every native connection, at 144
// bytes (a size class), and the native path's test is on c.loop, which it
// loads anyway.
type extConn struct {
	engine.Conn
	ctx any
}

// ext returns the engine connection serving c; only when c.loop is nil.
func (c *Conn) ext() *extConn { return c.ctx.(*extConn) }

func (h host) AddConns(delta int64) int64 { return h.s.numConns.Add(delta) }
func (h host) AddRejected()               { h.s.rejected.Add(1) }
func (h host) HandlerPanicked(hook string, fd int, v any) error {
	return h.s.handlerPanicked(hook, fd, v)
}

// startEngine runs s on Options.Engine instead of the native loops.
func (s *Server) startEngine() error {
	r, err := s.opts.Engine.Start(host{s})
	if err != nil {
		return err
	}
	s.runner, s.addr = r, r.Addr()
	s.listeners[0].bound = s.addr
	if b, ok := s.listeners[0].handler.(BootHandler); ok {
		b.OnBoot(s)
	}
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
