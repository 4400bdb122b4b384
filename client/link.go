package client

import (
	"net"
	"runtime"
	"sync"
	"sync/atomic"
)

// A link is one connection's life, from a successful handshake to its
// failure. A reconnection makes a new link; stragglers of the old one (a
// writer finishing its batch, a reader draining) only ever touch the old
// one.
//
// Goroutines: callers enqueue; whoever holds the writer role (a caller that
// found the link idle, or the link's writer goroutine) writes; the reader
// goroutine reads and answers. mu guards the fields marked so.
type link struct {
	client *Client
	nc     net.Conn
	rr     *replyReader // owned by the reader goroutine

	mu       sync.Mutex
	queue    []*call // guarded by mu: encoded, not yet taken by a writer
	inflight []*call // guarded by mu: written (or being written), in wire order
	writing  bool    // guarded by mu: someone holds the writer role
	closed   bool    // guarded by mu
	cause    error   // guarded by mu: why it closed (a *ConnError or ErrClosed)

	wake chan struct{} // capacity 1: hands the writer role to the writer goroutine
	down chan struct{} // closed when the link fails

	// Owned by the writer role.
	wbuf  []byte
	batch []*call
	spare []*call

	// Progress counters: equal when no reply is outstanding. The watchdog
	// reads them too.
	written  atomic.Uint64 // calls handed to the socket, by the writer role
	answered atomic.Uint64 // replies read, by the reader
}

func newLink(cl *Client, nc net.Conn) *link {
	return &link{
		client: cl,
		nc:     nc,
		wake:   make(chan struct{}, 1),
		down:   make(chan struct{}),
		wbuf:   make([]byte, 0, 4096),
	}
}

// deadLink is a placeholder for a connection that is down: every call on it
// fails at once with cause.
func deadLink(cl *Client, cause error) *link {
	l := &link{client: cl, closed: true, cause: cause, down: make(chan struct{})}
	close(l.down)
	return l
}

// isUp reports whether the link accepts calls (a racy hint for routing).
func (l *link) isUp() bool {
	select {
	case <-l.down:
		return false
	default:
		return true
	}
}

// enqueue queues c. If nobody holds the writer role, the call takes it:
// on an idle link (no reply outstanding) the calling goroutine writes the
// queue itself at once, saving a hand-off when calls are sparse; on a busy
// link it wakes the writer goroutine, which by the time it runs usually
// finds more calls to send with this one. It returns the link's failure
// instead if the link is down.
func (l *link) enqueue(c *call) error {
	l.mu.Lock()
	if l.closed {
		err := l.cause
		l.mu.Unlock()
		return err
	}
	l.queue = append(l.queue, c)
	if l.writing {
		l.mu.Unlock()
		return nil
	}
	l.writing = true
	idle := l.written.Load() == l.answered.Load()
	l.mu.Unlock()
	if !idle || l.writeQueued(false) {
		// Busy, or more arrived while we wrote: let the writer goroutine go
		// on, so this caller is not kept sending other goroutines' calls.
		l.wake <- struct{}{}
	}
	return nil
}

// writerLoop runs as the link's writer goroutine: woken when the writer
// role is handed to it, it writes until the queue is empty.
func (l *link) writerLoop() {
	defer l.client.wg.Done()
	for {
		select {
		case <-l.wake:
		case <-l.down:
			return
		}
		for l.writeQueued(true) {
		}
	}
}

// writeQueued is called by the holder of the writer role. It takes
// everything queued and writes it in batches of at most MaxBatchBytes. It
// returns true if more calls were queued meanwhile (the role is kept), or
// false after giving up the role (the queue was empty, or the link failed).
// With yield, it lets other goroutines run once before giving up the role:
// callers just woken by replies then queue their next calls for this
// writer instead of each writing alone.
func (l *link) writeQueued(yield bool) bool {
	l.mu.Lock()
	if l.closed || len(l.queue) == 0 {
		l.writing = false
		l.mu.Unlock()
		return false
	}
	taken := l.queue
	l.queue = l.spare[:0]
	l.mu.Unlock()

	limit := l.client.opts.MaxBatchBytes
	for i := 0; i < len(taken); {
		l.wbuf = l.wbuf[:0]
		l.batch = l.batch[:0]
		for ; i < len(taken); i++ {
			c := taken[i]
			if len(l.wbuf) > 0 && len(l.wbuf)+len(c.buf) > limit {
				break
			}
			taken[i] = nil
			if !c.state.CompareAndSwap(stateQueued, stateWritten) {
				putCall(c) // abandoned before it was sent: never send it
				continue
			}
			l.batch = append(l.batch, c)
			if len(l.batch) == 1 && len(c.buf) >= limit {
				i++
				break // sent alone, from its own buffer
			}
			l.wbuf = append(l.wbuf, c.buf...)
		}
		if len(l.batch) == 0 {
			continue
		}
		out := l.wbuf
		if len(out) == 0 {
			out = l.batch[0].buf
		}
		if !l.send(out) {
			cause := l.failure()
			for _, c := range taken[i:] {
				if c != nil {
					c.fail(stateQueued, cause)
				}
			}
			clear(taken)
			l.spare = taken[:0]
			return false
		}
	}
	l.spare = taken[:0]

	l.mu.Lock()
	if !l.closed && len(l.queue) == 0 && yield {
		l.mu.Unlock()
		runtime.Gosched()
		l.mu.Lock()
	}
	if l.closed || len(l.queue) == 0 {
		l.writing = false
		l.mu.Unlock()
		return false
	}
	l.mu.Unlock()
	return true
}

// send registers l.batch as in flight and writes out. It returns false if
// the link is (or has just become) down; the batch has then been failed.
func (l *link) send(out []byte) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		cause := l.failure()
		for _, c := range l.batch {
			c.fail(stateWritten, cause)
		}
		clear(l.batch)
		return false
	}
	l.inflight = append(l.inflight, l.batch...)
	l.mu.Unlock()
	l.written.Add(uint64(len(l.batch)))
	clear(l.batch)
	if _, err := l.nc.Write(out); err != nil {
		l.fail(err)
		return false
	}
	return true
}

// failure returns why the link closed.
func (l *link) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cause
}

// fail closes the link because of cause (the first cause wins) and fails
// every call it holds in its queue and in-flight FIFO. Calls held by a
// writer's batch or the reader's local FIFO are failed by those holders.
func (l *link) fail(cause error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	if cause != ErrClosed {
		cause = &ConnError{Addr: l.client.opts.Addr, Err: cause}
	}
	l.cause = cause
	queue, inflight := l.queue, l.inflight
	l.queue, l.inflight = nil, nil
	l.mu.Unlock()

	close(l.down)
	_ = l.nc.Close()
	for _, c := range inflight {
		c.fail(stateWritten, cause)
	}
	for _, c := range queue {
		c.fail(stateQueued, cause)
	}
}

// takeInflight moves the in-flight FIFO into dst (which must be empty) for
// the reader, swapping slices so neither side allocates.
func (l *link) takeInflight(dst []*call) []*call {
	l.mu.Lock()
	dst, l.inflight = l.inflight, dst
	l.mu.Unlock()
	return dst
}
