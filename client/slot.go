package client

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// A slot is one of the client's Conns connections across reconnections:
// it holds the current link and a supervisor goroutine that watches it and
// replaces it when it fails.
type slot struct {
	client *Client
	link   atomic.Pointer[link]

	mu      sync.Mutex
	changed chan struct{} // guarded by mu: closed when a new link is up
}

// setUp installs a working link and wakes the calls waiting for one.
func (s *slot) setUp(l *link) {
	s.link.Store(l)
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// changes returns a channel closed when the next working link is installed.
func (s *slot) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// supervise runs as the slot's goroutine until the client closes.
func (s *slot) supervise() {
	cl := s.client
	defer cl.wg.Done()
	l := s.link.Load()
	if l.isUp() {
		l.start()
	}
	for {
		if !s.watch(l) {
			return
		}
		s.link.Store(deadLink(cl, &ConnError{Addr: cl.opts.Addr, Reconnecting: true, Err: unwrapConn(l.failure())}, true))
		nl, ok := s.reconnect()
		if !ok {
			return
		}
		l = nl
	}
}

// reconnect dials until it succeeds, waiting between attempts with an
// exponential backoff with jitter. It returns false if the client closes.
func (s *slot) reconnect() (*link, bool) {
	cl := s.client
	backoff := cl.opts.MinBackoff
	for {
		// Wait before each attempt, so a server that accepts and drops
		// connections at once is not hammered.
		wait := backoff/2 + rand.N(backoff/2+1)
		select {
		case <-time.After(wait):
		case <-cl.quit:
			return nil, false
		}
		l, err := cl.connect()
		if err == nil {
			s.setUp(l)
			l.start()
			select {
			case <-cl.quit: // Close may have missed it
				l.fail(ErrClosed)
				return nil, false
			default:
			}
			return l, true
		}
		s.link.Store(deadLink(cl, &ConnError{Addr: cl.opts.Addr, Reconnecting: true, Err: err}, false))
		backoff = min(2*backoff, cl.opts.MaxBackoff)
	}
}

// idleCheckEvery is how often an idle connection is checked for a close by
// the server (a variable for tests).
var idleCheckEvery = time.Second

// watch waits for l to fail, failing it itself if calls are outstanding
// and no reply has come for ReadTimeout. It returns false if the client
// closes.
func (s *slot) watch(l *link) bool {
	cl := s.client
	rt := cl.opts.ReadTimeout
	every := idleCheckEvery
	if rt > 0 {
		every = min(every, rt/2)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	tick := t.C
	// Ticks without a reply, with calls outstanding, before the link is
	// declared dead: stuck for between ReadTimeout and ReadTimeout + every.
	stuckTicks := math.MaxInt
	if rt > 0 {
		stuckTicks = int((rt+every-1)/every) + 1
	}
	last, stuck := l.answered.Load(), 0
	for {
		select {
		case <-l.downCh:
			select {
			case <-cl.quit:
				return false
			default:
				return true
			}
		case <-cl.quit:
			return false
		case <-tick:
			if l.idleAt.Load() != 0 {
				// Idle: nobody reads, so check that the server has not
				// closed it, and reconnect now rather than on the next call.
				l.checkIdle()
				stuck = 0
				continue
			}
			answered, written := l.answered.Load(), l.written.Load()
			if written > answered && answered == last {
				stuck++
			} else {
				stuck = 0
			}
			last = answered
			if stuck >= stuckTicks {
				l.fail(fmt.Errorf("%w: no reply for %v (Options.ReadTimeout) with %d calls waiting",
					os.ErrDeadlineExceeded, rt, written-answered))
			}
		}
	}
}

// start launches l's reader and writer goroutines.
func (l *link) start() {
	l.client.wg.Add(2)
	go l.readerLoop()
	go l.writerLoop()
}

// connect dials a connection and runs the handshake: HELLO 3 (with AUTH)
// for RESP3, else AUTH if there is a password or PING if not; then SELECT
// if a DB is set.
func (cl *Client) connect() (*link, error) {
	o := cl.opts
	ctx, cancel := context.WithTimeout(context.Background(), o.DialTimeout)
	defer cancel()
	go func() { // Close interrupts a dial
		select {
		case <-cl.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	nc, err := o.Dialer(ctx, "tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)

	var cmds [][]string
	if o.Protocol == 3 {
		hello := []string{"HELLO", "3"}
		if o.Password != "" {
			user := o.Username
			if user == "" {
				user = "default"
			}
			hello = append(hello, "AUTH", user, o.Password)
		}
		cmds = append(cmds, hello)
	} else if o.Password != "" {
		if o.Username != "" {
			cmds = append(cmds, []string{"AUTH", o.Username, o.Password})
		} else {
			cmds = append(cmds, []string{"AUTH", o.Password})
		}
	} else {
		cmds = append(cmds, []string{"PING"})
	}
	if o.DB != 0 {
		cmds = append(cmds, []string{"SELECT", fmt.Sprint(o.DB)})
	}
	var out []byte
	for _, c := range cmds {
		out = resp.AppendCommand(out, c...)
	}
	if _, err := nc.Write(out); err != nil {
		nc.Close()
		return nil, err
	}
	rr := newReplyReader(nc)
	for _, c := range cmds {
		r, _, err := rr.next()
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("client: %s handshake with %s: %w", c[0], o.Addr, err)
		}
		if r.Kind == '-' || r.Kind == '!' {
			nc.Close()
			return nil, fmt.Errorf("client: %s refused by %s: %w", c[0], o.Addr, Error(r.Data))
		}
	}
	_ = nc.SetDeadline(time.Time{})
	l := newLink(cl, nc)
	l.rr = rr
	l.slab = make([]byte, 0, slabSize)
	return l, nil
}

// unwrapConn returns the cause inside a *ConnError.
func unwrapConn(err error) error {
	if ce, ok := err.(*ConnError); ok {
		return ce.Err
	}
	return err
}
