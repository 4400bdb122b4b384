package gnetengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/engine"
	"github.com/shoalkv/shoal/eventloop/internal/chunkq"
	"golang.org/x/sys/unix"
)

// Engine is the gnet v2 engine. Set eventloop.Options.Engine to Engine{}.
type Engine struct{}

// Name returns "gnet".
func (Engine) Name() string { return "gnet" }

// Start binds the listener with gnet and returns once gnet accepts
// connections. It refuses a Balancer gnet has no equivalent for.
func (Engine) Start(h engine.Host) (engine.Runner, error) {
	s := h.Server().(*eventloop.Server)
	o := s.Options()
	lb, err := balancing(o)
	if err != nil {
		return nil, err
	}
	if _, port, _ := net.SplitHostPort(o.Addr); o.ReusePort && o.Loops > 1 && port == "0" {
		// gnet binds each loop's listener to the address as given.
		return nil, fmt.Errorf("eventloop: the gnet engine needs an explicit port with ReusePort, not %q: each of the %d loops would bind a port of its own", o.Addr, o.Loops)
	}
	srv := &server{
		host: h, opts: o, handler: h.Handler().(eventloop.Handler),
		booted: make(chan struct{}), ran: make(chan error, 1), stopped: make(chan struct{}),
		conns: map[*gconn]struct{}{}, watch: map[*gconn]struct{}{},
		kick: make(chan struct{}, 1), quit: make(chan struct{}), loopIdx: map[gnet.EventLoop]int{},
		chunks: make([]chunkq.Cache, o.Loops),
	}
	srv.onOpen, _ = srv.handler.(eventloop.OpenHandler)
	srv.onClose, _ = srv.handler.(eventloop.CloseHandler)
	gopts := []gnet.Option{
		gnet.WithNumEventLoop(o.Loops),
		gnet.WithLoadBalancing(lb),
		gnet.WithReusePort(o.ReusePort),
		gnet.WithReuseAddr(true),
		gnet.WithReadBufferCap(o.ReadBufferSize),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(slogLogger{o.Logger}),
	}
	if o.TCPKeepAlive > 0 {
		gopts = append(gopts, gnet.WithTCPKeepAlive(o.TCPKeepAlive), gnet.WithTCPKeepInterval(o.TCPKeepAlive))
	}
	if o.SocketSendBuffer > 0 {
		gopts = append(gopts, gnet.WithSocketSendBuffer(o.SocketSendBuffer))
	}
	if o.SocketRecvBuffer > 0 {
		gopts = append(gopts, gnet.WithSocketRecvBuffer(o.SocketRecvBuffer))
	}
	go func() { srv.ran <- gnet.Run(srv, o.Network+"://"+o.Addr, gopts...) }()
	select {
	case <-srv.booted:
	case err := <-srv.ran:
		if srv.bootErr != nil {
			err = srv.bootErr
		}
		return nil, fmt.Errorf("eventloop: gnet engine on %s://%s: %w", o.Network, o.Addr, err)
	}
	go srv.await()
	go srv.housekeep()
	return srv, nil
}

// balancing maps the Balancer onto gnet's load balancing. gnet has no
// load signal, so LoadAware becomes least-connections, which is what
// LoadAware does among idle loops.
func balancing(o eventloop.Options) (gnet.LoadBalancing, error) {
	switch o.Balancer.(type) {
	case *eventloop.RoundRobin:
		return gnet.RoundRobin, nil
	case eventloop.LeastConnections, *eventloop.LeastConnections, *eventloop.LoadAware:
		return gnet.LeastConnections, nil
	}
	return 0, fmt.Errorf("eventloop: the gnet engine supports the RoundRobin, LeastConnections and LoadAware balancers, not %T", o.Balancer)
}

// server is one running gnet engine: gnet's EventHandler, and the
// engine.Runner the eventloop.Server drives.
type server struct {
	gnet.BuiltinEventEngine

	host    engine.Host            // immutable
	opts    eventloop.Options      // immutable
	handler eventloop.Handler      // immutable
	onOpen  eventloop.OpenHandler  // immutable; nil if not implemented
	onClose eventloop.CloseHandler // immutable; nil if not implemented
	addr    net.Addr               // set in OnBoot, before booted closes
	eng     gnet.Engine            // set in OnBoot, before booted closes
	booted  chan struct{}          // closed by OnBoot once the handler is booted
	bootErr error                  // why OnBoot stopped gnet; set before gnet.Run returns
	ran     chan error             // gnet.Run's result
	stopped chan struct{}          // closed once gnet.Run returned
	drain   atomic.Bool            // Shutdown has begun
	forced  atomic.Bool            // Shutdown's ctx ended first
	kick    chan struct{}          // wakes the housekeeper when watch gains a member
	quit    chan struct{}          // closed to stop the housekeeper
	stopMu  sync.Once              // stops gnet once
	asked   atomic.Bool            // stopGnet was called: gnet did not stop on its own
	failed  error                  // why gnet stopped on its own; set before stopped closes
	shutMu  sync.Once              // begins the drain once

	mu      sync.Mutex             // guards conns, watch, loopIdx, empty
	conns   map[*gconn]struct{}    // open connections, lingering ones too
	watch   map[*gconn]struct{}    // connections waiting for output to drain, a drain, or a linger
	loopIdx map[gnet.EventLoop]int // gnet loops in the order they were first seen
	empty   chan struct{}          // closed when conns empties during a drain

	// chunks are each loop's backlog chunks (by loop index; a loop's
	// goroutine uses only its own).
	chunks []chunkq.Cache
}

// OnBoot implements gnet.EventHandler. gnet calls it after binding and
// before its loops serve, so the handler is booted (host.Boot) before any
// client that connected at once is read; before, gnet served while Start
// was still asking for the address, and a restarted shoal on gnet could
// answer INFO before it had taken its snapshot's replication history.
func (s *server) OnBoot(eng gnet.Engine) gnet.Action {
	s.eng = eng
	addr, err := s.boundAddr()
	if err != nil {
		s.bootErr = err
		return gnet.Shutdown
	}
	s.addr = addr
	s.host.Boot(addr)
	close(s.booted)
	return gnet.None
}

// boundAddr asks the listening socket for its address, so that ":0"
// reports the port the kernel chose.
func (s *server) boundAddr() (net.Addr, error) {
	if s.opts.Network == "unix" {
		return &net.UnixAddr{Name: s.opts.Addr, Net: "unix"}, nil
	}
	fd, err := s.eng.Dup()
	if err != nil {
		return nil, fmt.Errorf("eventloop: gnet engine: listener address: %w", err)
	}
	defer unix.Close(fd)
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil, fmt.Errorf("eventloop: gnet engine: listener address: %w", err)
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}, nil
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}, nil
	}
	return nil, fmt.Errorf("eventloop: gnet engine: unexpected listener address %T", sa)
}

// Addr implements engine.Runner.
func (s *server) Addr() net.Addr { return s.addr }

// Wait implements engine.Runner.
func (s *server) Wait() error {
	<-s.stopped
	return s.failed
}

// OnShutdown implements gnet.EventHandler: gnet is about to close every
// connection. If nobody asked it to, something made it give up (gnet
// stops the whole engine when accept fails with EMFILE, say): the
// connections then close with ErrServerClosed, not as if cleanly.
func (s *server) OnShutdown(gnet.Engine) {
	if !s.asked.Load() {
		s.forced.Store(true)
	}
}

// await waits for gnet.Run to return, then stops the housekeeper and
// reports the engine stopped.
func (s *server) await() {
	err := <-s.ran
	if !s.asked.Load() {
		s.failed = fmt.Errorf("eventloop: the gnet engine stopped on its own (a failed accept, such as EMFILE, stops gnet; its log says why); run error: %v", err)
		s.opts.Logger.Error(s.failed.Error())
	} else if err != nil {
		s.opts.Logger.Error("eventloop: gnet engine stopped with an error", "err", err)
	}
	close(s.quit)
	for i := range s.chunks { // the loops have stopped
		s.chunks[i].Release()
	}
	close(s.stopped)
}

// stopGnet stops gnet's loops, closing what connections are left; await
// sees gnet.Run return. (Engine.Stop polls every 500 ms for the end, so
// gnet.Run's return is what is waited for instead.)
func (s *server) stopGnet() {
	s.stopMu.Do(func() {
		s.asked.Store(true)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = s.eng.Stop(ctx)
		}()
	})
}

// Shutdown implements engine.Runner: every connection drains as the
// native engine's do (see gconn.service), then gnet stops.
func (s *server) Shutdown(ctx context.Context) error {
	s.shutMu.Do(func() {
		s.drain.Store(true)
		s.mu.Lock()
		s.empty = make(chan struct{})
		if len(s.conns) == 0 {
			close(s.empty)
		}
		all := make([]*gconn, 0, len(s.conns))
		for g := range s.conns {
			all = append(all, g)
		}
		s.mu.Unlock()
		for _, g := range all {
			g.schedule(g.beginDrain)
		}
	})
	s.mu.Lock()
	empty := s.empty
	s.mu.Unlock()
	select {
	case <-empty:
		s.stopGnet()
		<-s.stopped
		return nil
	case <-s.stopped:
		return nil
	case <-ctx.Done():
		s.forced.Store(true)
		s.stopGnet()
		<-s.stopped
		return ctx.Err()
	}
}

// LoopStats implements engine.Runner. gnet publishes no load, so Load is 0.
func (s *server) LoopStats() []engine.LoopStat {
	out := make([]engine.LoopStat, s.opts.Loops)
	s.mu.Lock()
	for g := range s.conns {
		if i := g.loopIndex; i < len(out) {
			out[i].Conns++
			out[i].OutputBacklog += g.gnetOut.Load()
		}
	}
	s.mu.Unlock()
	for i := range out {
		out[i].OutputBacklog += s.chunks[i].Mapped.Load()
		out[i].OutputBacklogFreed = s.chunks[i].Unmapped.Load()
	}
	return out
}

// unregister drops g once gnet has closed its descriptor.
func (s *server) unregister(g *gconn) {
	s.mu.Lock()
	delete(s.conns, g)
	delete(s.watch, g)
	if s.empty != nil && len(s.conns) == 0 {
		select {
		case <-s.empty:
		default:
			close(s.empty)
		}
	}
	s.mu.Unlock()
}

// setWatched adds g to or removes it from the connections the
// housekeeper looks at every watchInterval.
func (s *server) setWatched(g *gconn, on bool) {
	s.mu.Lock()
	if on {
		s.watch[g] = struct{}{}
	} else {
		delete(s.watch, g)
	}
	s.mu.Unlock()
	if on {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// watchInterval is how often the housekeeper looks at connections that
// wait for something gnet does not report: their output draining (gnet
// has no writable callback), a drain's end, a linger's end.
const watchInterval = 2 * time.Millisecond

// housekeep is the engine's one goroutine of its own. gnet has no idle
// timeouts, no event for "output drained" and no timer per loop, so this
// goroutine checks the watched connections every watchInterval and scans
// for idle ones every IdleTimeout/16; the checks themselves run on each
// connection's loop (gconn.queueCheck).
func (s *server) housekeep() {
	idleTick := s.opts.IdleTimeout / 16
	if s.opts.IdleTimeout > 0 && idleTick < time.Millisecond {
		idleTick = time.Millisecond
	}
	var nextIdle time.Time
	if idleTick > 0 {
		nextIdle = time.Now().Add(idleTick)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var batch []*gconn
	for {
		now := time.Now()
		s.mu.Lock()
		batch = batch[:0]
		for g := range s.watch {
			batch = append(batch, g)
		}
		if idleTick > 0 && !now.Before(nextIdle) {
			nextIdle = now.Add(idleTick)
			// A connection is idle once no scan for IdleTimeout has seen
			// traffic: late by up to two ticks, never early, however late
			// this goroutine runs.
			ns, limit := now.UnixNano(), s.opts.IdleTimeout.Nanoseconds()
			for g := range s.conns {
				if g.active.Swap(false) {
					g.quietSince = ns
				} else if ns-g.quietSince >= limit {
					g.idle.Store(true)
					batch = append(batch, g)
				}
			}
		}
		watching := len(s.watch) > 0
		s.mu.Unlock()
		for _, g := range batch {
			g.queueCheck()
		}
		wait := time.Hour
		if watching {
			wait = watchInterval
		}
		if idleTick > 0 {
			wait = min(wait, time.Until(nextIdle))
		}
		timer.Reset(max(wait, 0))
		select {
		case <-s.quit:
			return
		case <-s.kick:
			timer.Stop() // since Go 1.23 no stale tick is left to drain
		case <-timer.C:
		}
	}
}

// slogLogger hands gnet's log lines to the server's slog.Logger; gnet's
// start-up chatter (Info) goes to Debug.
type slogLogger struct{ l *slog.Logger }

func (g slogLogger) Debugf(f string, a ...any) {
	g.l.Debug("gnet: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (g slogLogger) Infof(f string, a ...any) {
	g.l.Debug("gnet: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (g slogLogger) Warnf(f string, a ...any) {
	g.l.Warn("gnet: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (g slogLogger) Errorf(f string, a ...any) {
	g.l.Error("gnet: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (g slogLogger) Fatalf(f string, a ...any) {
	g.l.Error("gnet: " + strings.TrimSpace(fmt.Sprintf(f, a...)))
	panic(errors.New("gnet: fatal: " + fmt.Sprintf(f, a...)))
}
