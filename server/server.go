package server

import (
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// Compile-time checks: a typo in a hook's signature would otherwise turn
// the hook off without a word.
var (
	_ eventloop.Handler         = (*Handler)(nil)
	_ eventloop.OpenHandler     = (*Handler)(nil)
	_ eventloop.CloseHandler    = (*Handler)(nil)
	_ eventloop.ShutdownHandler = (*Handler)(nil)
	_ eventloop.BootHandler     = (*Handler)(nil)
	_ kv.Conn                   = (*session)(nil)
	_ kv.Edge                   = (*Handler)(nil)
)

// Handler serves the Redis protocol on eventloop connections: it is the
// edge between the loops, which own the sockets, and a kv.Handler, which
// executes the commands. It implements eventloop.Handler, OpenHandler,
// CloseHandler, ShutdownHandler and BootHandler; its HTTPHandler and
// FrameHandler serve the same keyspace on other listeners of the same
// eventloop.Server. All methods are safe for concurrent use by the loops.
type Handler struct {
	kv  *kv.Handler
	log *slog.Logger

	// server is the eventloop Server h runs on (set by OnBoot), for what
	// only it knows: the port bound, maxclients, connections refused.
	server atomic.Pointer[eventloop.Server]
	// flushBytes is the Server's FlushThreshold, read by the fronts.
	flushBytes atomic.Int64

	metrics metricsRegistry

	// limits are the output limits of each client class
	// (config.ClassNormal, ...), shared by the connections of the
	// class; kv sets them (SetOutputLimit) at boot and on CONFIG SET.
	limits [config.NumClasses]*eventloop.OutputLimit
	// limitCloses counts clients closed at their class's output limits.
	limitCloses [config.NumClasses]atomic.Int64
}

// New returns the edge serving k's commands. Closing k (kv.Handler.Close)
// stays the caller's: the edge's OnShutdown does it.
func New(k *kv.Handler) *Handler {
	h := &Handler{kv: k, log: k.Logger()}
	h.flushBytes.Store(eventloop.DefaultFlushThreshold)
	for class := range h.limits {
		h.limits[class] = eventloop.NewOutputLimit(0, 0, 0)
	}
	return h
}

// KV is the command layer h serves.
func (h *Handler) KV() *kv.Handler { return h.kv }

// session is one RESP connection: the command layer's client state and the
// Conn it is served on, one allocation. It implements kv.Conn.
type session struct {
	kv.Client
	c *eventloop.Conn
}

func (s *session) OutputBuffer() []byte        { return s.c.OutputBuffer() }
func (s *session) SetOutputBuffer(b []byte)    { s.c.SetOutputBuffer(b) }
func (s *session) Write(p []byte) (int, error) { return s.c.Write(p) }
func (s *session) Flush() error                { return s.c.Flush() }
func (s *session) OutputFull() bool            { return s.c.OutputFull() }
func (s *session) Close() error                { return s.c.Close() }
func (s *session) Resume()                     { s.c.Resume() }
func (s *session) Reserve() error              { return s.c.Reserve() }

func (s *session) Run(fn func()) error {
	return s.c.Execute(func(*eventloop.Conn) { fn() })
}

func (s *session) RunReserved(fn func()) error {
	return s.c.ExecuteReserved(func(*eventloop.Conn) { fn() })
}

// AtCycleEnd has the loop call the client's CycleEnd at the end of its
// cycle, before the cycle's output is written (eventloop.Conn.AtCycleEnd).
// It adds nothing to the session: the loop finds it through the Conn's
// context.
func (s *session) AtCycleEnd() error { return s.c.AtCycleEnd(sessionCycleEnd) }

func sessionCycleEnd(c *eventloop.Conn) {
	if s, ok := c.Context().(*session); ok {
		s.CycleEnd()
	}
}

func (s *session) OutputBacklog() int { return s.c.OutputBacklog() }
func (s *session) Abort(reason error) { s.c.Abort(reason) }

// SetOutputClass gives c the class's limits, which its Handler holds.
func (s *session) SetOutputClass(class int) {
	s.c.SetOutputLimit(s.c.Handler().(*Handler).limits[class])
}

// OnBoot implements eventloop.BootHandler: it tells the command layer how
// many loops there are, when a long batch of replies is handed over to be
// written (FlushThreshold) and the output limit, and answers for the
// listener from then on.
func (h *Handler) OnBoot(s *eventloop.Server) {
	h.server.Store(s)
	o := s.Options()
	h.flushBytes.Store(int64(o.FlushThreshold))
	h.kv.Boot(kv.BootInfo{Loops: o.Loops, FlushThreshold: o.FlushThreshold, Edge: h})
}

// OnShutdown implements eventloop.ShutdownHandler: the command layer's
// background work stops.
func (h *Handler) OnShutdown() { h.kv.Close() }

// OnOpen implements eventloop.OpenHandler: protected mode, then the
// client's state.
func (h *Handler) OnOpen(c *eventloop.Conn) {
	if h.refuseUnprotected(c) {
		return
	}
	s := &session{c: c}
	c.SetOutputLimit(h.limits[config.ClassNormal])
	info := kv.ConnInfo{
		RemoteAddr: addrString(c.RemoteAddr()),
		LocalAddr:  addrString(c.LocalAddr()),
		Fd:         c.Fd(),
		Loop:       c.LoopIndex(),
	}
	if sock, ok := c.LocalAddr().(*net.UnixAddr); ok {
		// As Redis 7.0: a Unix socket's clients are "/socket/path:0" on
		// both sides, their own end having no name.
		info.RemoteAddr, info.LocalAddr, info.UnixSocket = sock.Name+":0", sock.Name+":0", true
	}
	h.kv.OpenClient(&s.Client, s, info)
	c.SetContext(s)
}

// OnTraffic implements eventloop.Handler: the command layer executes every
// complete command in `in` and appends the replies to c's output buffer.
func (h *Handler) OnTraffic(c *eventloop.Conn, in []byte) int {
	s, ok := c.Context().(*session)
	if !ok {
		// Refused by protected mode and closing: its input is dropped.
		return len(in)
	}
	return h.kv.Serve(&s.Client, in)
}

// ReadAhead implements eventloop.ReadAheadHandler: the keys of the first
// command of each connection a poll found ready are prefetched together
// (kv.ReadAhead), before the first of them runs.
func (h *Handler) ReadAhead(conns []*eventloop.Conn, ins [][]byte) {
	var r kv.ReadAhead
	for i, c := range conns {
		if s, ok := c.Context().(*session); ok {
			r.Add(&s.Client, ins[i])
		}
	}
	r.Flush()
}

// OnClose implements eventloop.CloseHandler: the client's commands end,
// and a close at a buffer limit is logged, as Redis logs "closing client
// that reached max query buffer length" and output buffer limits.
func (h *Handler) OnClose(c *eventloop.Conn, err error) {
	s, ok := c.Context().(*session)
	if !ok {
		return
	}
	cl := &s.Client
	class := cl.Class() // before CloseClient ends its subscriptions
	h.kv.CloseClient(cl)
	switch {
	case err == nil || errors.Is(err, eventloop.ErrConnClosed):
	case errors.Is(err, eventloop.ErrOutputLimit), errors.Is(err, kv.ErrOutputLimit):
		// Redis: "Client ... scheduled to be closed ASAP for overcoming of
		// output buffer limits."
		h.limitCloses[class].Add(1)
		h.log.Warn("client closed for overcoming of output buffer limits", "id", cl.ID(), "addr", cl.Addr(), "name", cl.Name(), "class", config.ClassName(class), "err", err)
	case errors.Is(err, eventloop.ErrInboundLimit), errors.Is(err, kv.ErrClientEvicted):
		h.log.Warn("client closed at a buffer limit", "id", cl.ID(), "addr", cl.Addr(), "name", cl.Name(), "class", config.ClassName(class), "err", err)
	default:
		h.log.Debug("connection closed", "id", cl.ID(), "addr", cl.Addr(), "err", err)
	}
}

// Listener implements kv.Edge: what the Server h runs on was configured
// with, for CONFIG GET and INFO. Before OnBoot it is all zero.
func (h *Handler) Listener() (port int, bind string, maxClients int, idle time.Duration) {
	s := h.server.Load()
	if s == nil {
		return 0, "", 0, 0
	}
	o := s.Options()
	if a, ok := s.Addr().(*net.TCPAddr); ok {
		port = a.Port
	}
	if host, _, err := net.SplitHostPort(o.Addr); err == nil {
		bind = host
	}
	return port, bind, o.MaxConns, o.IdleTimeout
}

// RejectedConnections implements kv.Edge: connections the Server refused
// over maxclients.
func (h *Handler) RejectedConnections() int64 {
	if s := h.server.Load(); s != nil {
		return s.Rejected()
	}
	return 0
}

// SetMaxClients implements kv.Edge: maxclients for the connections the
// Server accepts from now on.
func (h *Handler) SetMaxClients(n int) {
	if s := h.server.Load(); s != nil {
		s.SetMaxConns(n)
	}
}

// SetOutputLimit implements kv.Edge: the limits of one client class, for
// its connections now and to come.
func (h *Handler) SetOutputLimit(class int, l config.OutputLimit) {
	h.limits[class].Set(l.Hard, l.Soft, l.SoftFor)
}

// OutputMemory implements kv.Edge: what the loops hold, off the Go heap,
// for the output of slow readers.
func (h *Handler) OutputMemory() (held, freed int64) {
	s := h.server.Load()
	if s == nil {
		return 0, 0
	}
	for _, k := range s.Counters() {
		held += k.OutputBacklog
		freed += k.OutputBacklogFreed
	}
	return held, freed
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}
