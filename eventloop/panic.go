package eventloop

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrHandlerPanic is wrapped by the close error (OnClose's err) of a
// connection whose Handler panicked in one of its hooks or in a function
// given to Conn.Execute.
var ErrHandlerPanic = errors.New("eventloop: handler panicked")

// handlerPanicked records a panic recovered from a Handler hook: it is
// logged at error level with the value and the panicking goroutine's stack,
// counted (Server.HandlerPanics), and its error is the connection's close
// error. Called from the deferred recover, so debug.Stack still shows where
// the panic happened.
func (s *Server) handlerPanicked(hook string, fd int, v any) error {
	s.panics.Add(1)
	s.opts.Logger.Error("eventloop: handler panicked; closing its connection",
		"hook", hook, "fd", fd, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return fmt.Errorf("%w in %s: %v", ErrHandlerPanic, hook, v)
}

// HandlerPanics is how many times a Handler hook (OnOpen, OnTraffic,
// OnClose) or a function given to Conn.Execute panicked since Start; each
// closed its connection and the Server kept serving the others.
func (s *Server) HandlerPanics() uint64 { return s.panics.Load() }

// onTraffic calls the Handler's OnTraffic; a panic closes c (ok false).
func (l *loop) onTraffic(c *Conn, in []byte) (consumed int, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			l.abort(c, l.srv.handlerPanicked("OnTraffic", c.fd, v))
			consumed, ok = 0, false
		}
	}()
	return c.ln.handler.OnTraffic(c, in), true
}

// onReadAhead calls h.ReadAhead; a panic is logged and counted, and the
// connections are served as if it had not been called.
func (l *loop) onReadAhead(h ReadAheadHandler, conns []*Conn, ins [][]byte) {
	defer func() {
		if v := recover(); v != nil {
			_ = l.srv.handlerPanicked("ReadAhead", conns[0].fd, v)
		}
	}()
	h.ReadAhead(conns, ins)
}

// onOpen calls h.OnOpen; a panic closes c.
func (l *loop) onOpen(h OpenHandler, c *Conn) {
	defer func() {
		if v := recover(); v != nil {
			l.abort(c, l.srv.handlerPanicked("OnOpen", c.fd, v))
		}
	}()
	h.OnOpen(c)
}

// onDrain calls h.OnDrain; a panic closes c.
func (l *loop) onDrain(h DrainHandler, c *Conn) {
	defer func() {
		if v := recover(); v != nil {
			l.abort(c, l.srv.handlerPanicked("OnDrain", c.fd, v))
		}
	}()
	h.OnDrain(c)
}

// onClose calls h.OnClose; a panic is logged and counted, and the close
// goes on.
func (l *loop) onClose(h CloseHandler, c *Conn, err error) {
	defer func() {
		if v := recover(); v != nil {
			_ = l.srv.handlerPanicked("OnClose", c.fd, v)
		}
	}()
	h.OnClose(c, err)
}

// execute runs a function given to Conn.Execute; a panic closes c.
func (l *loop) execute(fn func(*Conn), c *Conn) {
	defer func() {
		if v := recover(); v != nil {
			l.abort(c, l.srv.handlerPanicked("Execute", c.fd, v))
		}
	}()
	fn(c)
}
