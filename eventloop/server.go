package eventloop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/eventloop/engine"
)

// Handler serves the traffic of every connection.
//
// If a hook (OnTraffic, OnOpen, OnClose) or a function given to
// Conn.Execute panics, the Server recovers the panic, logs it at error
// level with the stack, counts it (Server.HandlerPanics) and closes that
// connection (OnClose's err wraps ErrHandlerPanic); the other connections
// are served on, as net/http does per connection. The handler's own state
// is as the panic left it: locks held across a panicking call stay held
// unless the handler releases them with defer.
type Handler interface {
	// OnTraffic gets every unconsumed inbound byte of c. `in` is a slice of the loop's
	// shared read buffer (or of c's pooled leftover buffer) valid only during the call.
	// Returns how many bytes were consumed; the rest is kept and presented again with
	// the next bytes appended.
	OnTraffic(c *Conn, in []byte) (consumed int)
}

// OpenHandler is implemented by handlers that want to know of new
// connections. OnOpen runs on c's loop goroutine before any traffic; output
// it writes (a greeting) is sent right away.
type OpenHandler interface{ OnOpen(c *Conn) }

// CloseHandler is implemented by handlers that want to know when a
// connection closes. err is nil on a clean close (the peer hung up, Close,
// or a graceful shutdown) and says why otherwise.
type CloseHandler interface{ OnClose(c *Conn, err error) }

// DrainHandler is implemented by handlers that want to tell their peers
// the server is going away (HTTP/2's GOAWAY). OnDrain runs on c's loop
// goroutine once Shutdown begins, for each open connection, before the
// input already received is answered; output it writes is sent before
// the close. Not on Options.Engine (gnet).
type DrainHandler interface{ OnDrain(c *Conn) }

// ShutdownHandler is implemented by handlers that want to know when the
// server has stopped. OnShutdown runs once per address the handler serves
// (Options.Addr, Options.Listeners), after all loops have stopped.
type ShutdownHandler interface{ OnShutdown() }

// BootHandler is implemented by handlers that want the Server they run on,
// e.g. to report its counters. OnBoot runs in Start, once per address the
// handler serves, after every listener is bound and before any connection
// is accepted.
type BootHandler interface{ OnBoot(s *Server) }

// Server runs a Handler on a set of event loops.
type Server struct {
	listeners []*listener // Options.Addr's, then Options.Listeners'
	opts      Options
	epoch     time.Time

	loops     []*loop
	addr      net.Addr
	readAhead bool // a plaintext listener's handler is a ReadAheadHandler: loops read ahead (readahead.go)
	numConns  atomic.Int64
	maxConns  atomic.Int64  // Options.MaxConns, changed by SetMaxConns
	rejected  atomic.Int64  // connections turned away by MaxConns
	panics    atomic.Uint64 // Handler hooks that panicked (panic.go)
	closing   atomic.Bool   // Shutdown has begun
	forced    atomic.Bool   // Shutdown's ctx ended before the loops drained

	handshakes *handshaker // runs TLS handshakes (tls_handshake.go); nil without a TLS listener

	runner    engine.Runner // Options.Engine once started; nil on the native engine
	engineUp  atomic.Bool   // runner is set: read it first off Start's goroutine (Counters)
	engineErr error         // why Options.Engine stopped, if not by Shutdown; set before done closes

	// Acceptor goroutine only (nil poller and no sockets with ReusePort).
	sockets  []*listenSocket
	acceptor *poller
	stats    []LoopStat

	mu           sync.Mutex // guards started and shut
	started      bool
	shut         bool
	loopsDone    sync.WaitGroup
	acceptorDone chan struct{}
	done         chan struct{} // closed after OnShutdown
}

// NewServer checks opts and returns a Server for h; Start or Serve runs it.
func NewServer(h Handler, opts Options) (*Server, error) {
	if h == nil {
		return nil, errors.New("eventloop: nil Handler")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	extra, err := extraListeners(&o)
	if err != nil {
		return nil, err
	}
	if o.Engine != nil && len(extra) > 0 {
		return nil, fmt.Errorf("eventloop: the %s engine serves one address; Options.Listeners needs the native engine", o.Engine.Name())
	}
	s := &Server{opts: o, epoch: time.Now(),
		acceptorDone: make(chan struct{}), done: make(chan struct{})}
	s.maxConns.Store(int64(o.MaxConns))
	s.listeners = append([]*listener{newListener(o.Network, o.Addr, h, o.RejectMessage, o.TLSConfig)}, extra...)
	if err := s.setupTLS(); err != nil {
		return nil, err
	}
	return s, nil
}

// clock is the monotonic time since the server was created; loops stamp
// activity with it.
func (s *Server) clock() time.Duration { return time.Since(s.epoch) }

var errStarted = errors.New("eventloop: server already started")

// Start listens and starts the loops, and returns once the server accepts
// connections.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return ErrServerClosed
	}
	if s.started {
		return errStarted
	}
	if err := s.start(); err != nil {
		s.cleanup()
		return err
	}
	s.started = true
	return nil
}

func (s *Server) start() error {
	if s.opts.Engine != nil {
		return s.startEngine()
	}
	for _, ln := range s.listeners {
		if ln.tls != nil {
			ln.readAhead = nil
		}
		s.readAhead = s.readAhead || ln.readAhead != nil
	}
	for i := 0; i < s.opts.Loops; i++ {
		l, err := newLoop(s, i)
		if err != nil {
			return err
		}
		s.loops = append(s.loops, l)
	}
	if err := s.bindListeners(); err != nil {
		return err
	}
	s.addr = s.listeners[0].bound
	if !s.opts.ReusePort {
		p, err := openPoller()
		if err != nil {
			return err
		}
		s.acceptor = p
		for _, ls := range s.sockets {
			if err := p.add(ls.fd, true, false); err != nil {
				return err
			}
		}
		s.stats = make([]LoopStat, len(s.loops))
	}
	for _, ln := range s.listeners {
		if b, ok := ln.handler.(BootHandler); ok {
			b.OnBoot(s)
		}
	}
	for _, l := range s.loops {
		s.loopsDone.Add(1)
		go l.run()
	}
	if s.acceptor != nil {
		go s.acceptLoop()
	} else {
		close(s.acceptorDone)
	}
	go s.finish()
	return nil
}

// cleanup releases what a failed start acquired.
func (s *Server) cleanup() {
	for _, l := range s.loops {
		l.sockets = closeSockets(l.sockets)
		l.poller.close()
	}
	s.loops = nil
	s.sockets = closeSockets(s.sockets)
	if s.acceptor != nil {
		s.acceptor.close()
		s.acceptor = nil
	}
	s.removeSocketFiles()
}

// finish waits for every goroutine of the server, then reports shutdown.
func (s *Server) finish() {
	s.loopsDone.Wait()
	<-s.acceptorDone
	if s.acceptor != nil {
		s.acceptor.close()
	}
	s.removeSocketFiles()
	for _, ln := range s.listeners {
		if ln.onShutdown != nil {
			ln.onShutdown.OnShutdown()
		}
	}
	close(s.done)
}

// Serve starts the server if Start has not, and blocks until Shutdown
// completes. It returns nil after a shutdown and the listen error otherwise,
// or, with Options.Engine, why the engine stopped if it stopped on its own.
func (s *Server) Serve() error {
	if err := s.Start(); err != nil && err != errStarted {
		return err
	}
	<-s.done
	return s.engineErr
}

// Addr returns the address the server listens on (with the port the kernel
// chose for ":0"), or nil before Start. With Options.Listeners, it is
// Options.Addr's; Addrs returns them all.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Options returns the options s runs with, defaults filled in: what a
// handler should report (CONFIG GET maxclients, say) instead of keeping a
// copy that could disagree.
func (s *Server) Options() Options {
	o := s.opts
	o.MaxConns = s.MaxConns()
	return o
}

// SetMaxConns changes Options.MaxConns while the server runs (0: no
// limit): connections accepted from now on count against n. Connections
// already open stay, also past a lowered n, as Redis's CONFIG SET
// maxclients leaves them.
func (s *Server) SetMaxConns(n int) { s.maxConns.Store(int64(max(n, 0))) }

// MaxConns reports the limit on open connections now (0: none).
func (s *Server) MaxConns() int { return int(s.maxConns.Load()) }

// NumConns returns the number of open connections.
func (s *Server) NumConns() int { return int(s.numConns.Load()) }

// Rejected returns how many connections MaxConns has turned away since Start.
func (s *Server) Rejected() int64 { return s.rejected.Load() }

// Shutdown stops accepting, lets every loop answer the input it has already
// received, writes pending output and closes every connection, then calls
// OnShutdown and returns nil. Received input includes that of connections
// the kernel had queued on a listener, not yet accepted, when Shutdown
// began: they are accepted and answered before the listener closes. If ctx
// ends first, remaining connections are closed at once (OnClose gets
// ErrServerClosed) and ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	first, started := !s.shut, s.started
	s.shut = true
	s.mu.Unlock()
	if !started {
		return nil
	}
	if s.runner != nil {
		return s.shutdownEngine(ctx)
	}
	if first {
		s.closing.Store(true)
		if s.acceptor != nil {
			_ = s.acceptor.wake()
		}
		<-s.acceptorDone // no registration can follow the shutdown task
		for _, l := range s.loops {
			_ = l.enqueue(task{kind: taskShutdown})
		}
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		s.forced.Store(true)
		for _, l := range s.loops {
			l.wake()
		}
		<-s.done
		return ctx.Err()
	}
}
