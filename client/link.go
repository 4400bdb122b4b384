package client

import (
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
)

// A link is one connection's life, from a successful handshake to its
// failure. A reconnection makes a new link; stragglers of the old one (a
// writer finishing its batch, a reader draining) only ever touch the old
// one.
//
// Two roles move between goroutines. The writer role (writing) belongs to a
// caller that found the link idle, or to the writer goroutine. The reader
// role (reading) is taken by whoever writes while nobody reads: a caller on
// an idle link whose context cannot be cancelled reads its own reply, as a
// connection of its own would, with no goroutine hand-off; otherwise the
// reader goroutine is woken. The reader role is given up when no reply is
// outstanding, so an idle link has no pending read. mu guards the fields
// marked so; the others belong to the holder of a role.
//
// Callers never take mu: a call is pushed on the lock-free stack pending
// and the writer role is taken with a CAS on writing. With thousands of
// goroutines calling, a mutex there went into starvation mode and handed
// itself from goroutine to goroutine, each hand-off a trip through the
// scheduler's queue of thousands, with the writer and the reader waiting
// in the same line (the mutex profile at 10,000 goroutines was 92% this
// lock). mu is taken only by the holders of the roles, once per batch,
// and by failures.
type link struct {
	client *Client
	nc     net.Conn

	pending atomic.Pointer[call] // encoded, not yet taken by a writer: a stack linked by call.next, newest first
	writing atomic.Bool          // someone holds the writer role
	down    atomic.Bool          // set by fail before it empties pending

	mu       sync.Mutex
	inflight []*call // guarded by mu: written (or being written), in wire order
	reading  bool    // guarded by mu: someone holds the reader role
	closed   bool    // guarded by mu
	cause    error   // guarded by mu: why it closed (a *ConnError or ErrClosed)

	wake     chan struct{} // capacity 1: hands the writer role to the writer goroutine
	readWake chan struct{} // capacity 1: hands the reader role to the reader goroutine
	downCh   chan struct{} // closed when the link fails

	// Owned by the writer role.
	wbuf  []byte
	batch []*call
	spare []*call

	// Owned by the reader role.
	rr        *replyReader
	mine      []*call // the reader's share of the in-flight FIFO, from head on
	head      int
	slab      []byte // Get's values are carved from it
	answeredN uint64

	// Progress counters: equal when no reply is outstanding. written is
	// changed under mu. The watchdog reads them too.
	written  atomic.Uint64 // calls handed to the socket
	answered atomic.Uint64 // replies read
	firstTry bool          // a deadLink installed before the first reconnection attempt

	// idleAt is when the reader role was last given up with nothing
	// outstanding (nanoseconds on the client's clock), 0 while a reader holds it.
	idleAt atomic.Int64
}

func newLink(cl *Client, nc net.Conn) *link {
	l := &link{
		client:   cl,
		nc:       nc,
		wake:     make(chan struct{}, 1),
		readWake: make(chan struct{}, 1),
		downCh:   make(chan struct{}),
		wbuf:     make([]byte, 0, 4096),
	}
	l.idleAt.Store(cl.now())
	return l
}

// checkIdle looks at an idle connection's socket without blocking or
// consuming: if the server closed it the link fails; if bytes arrived that
// no call asked for (a RESP3 push, or a desynchronised server), the reader
// goroutine is woken to read them.
func (l *link) checkIdle() {
	sc, ok := l.nc.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	var closed error
	pending := false
	err = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0:
			pending = true
		case n == 0 && err == nil:
			closed = io.EOF
		case err != nil && err != syscall.EAGAIN && err != syscall.EINTR:
			closed = err
		}
	})
	if err != nil {
		closed = err
	}
	if closed != nil {
		l.fail(closed)
		return
	}
	if pending {
		l.mu.Lock()
		wake := !l.reading && !l.closed
		if wake {
			l.reading = true
			l.idleAt.Store(0)
		}
		l.mu.Unlock()
		if wake {
			l.readWake <- struct{}{}
		}
	}
}

// deadLink is a placeholder for a connection that is down: every call on it
// fails at once with cause. firstTry marks the one installed when a working
// connection is lost, before any reconnection attempt has failed.
func deadLink(cl *Client, cause error, firstTry bool) *link {
	l := &link{client: cl, closed: true, cause: cause, downCh: make(chan struct{}), firstTry: firstTry}
	l.down.Store(true)
	close(l.downCh)
	return l
}

// isUp reports whether the link accepts calls (a racy hint for routing).
func (l *link) isUp() bool { return !l.down.Load() }

// enqueue queues c. If nobody holds the writer role, the call takes it:
// on an idle link (no reply outstanding) the calling goroutine writes the
// queue itself at once, saving a hand-off when calls are sparse; on a busy
// link it wakes the writer goroutine, which by the time it runs usually
// finds more calls to send with this one. With mayRead (the caller's
// context cannot be cancelled), a caller that writes on a link nobody reads
// takes the reader role too: enqueue then reports true and the caller must
// call readUntil(c). It returns the link's failure instead if the link is
// down; if the link fails just after c was queued, c is failed like every
// other queued call.
func (l *link) enqueue(c *call, mayRead bool) (reader bool, err error) {
	if l.down.Load() {
		return false, l.failure()
	}
	l.push(c)
	if l.down.Load() {
		// fail may have emptied the stack before c was on it.
		l.failPending(l.failure())
		return false, nil
	}
	if l.writing.Load() || !l.writing.CompareAndSwap(false, true) {
		return false, nil
	}
	if l.written.Load() != l.answered.Load() {
		l.wake <- struct{}{}
		return false, nil
	}
	more, reader := l.writeQueued(false, mayRead)
	if more {
		// More arrived while we wrote: let the writer goroutine go on, so
		// this caller is not kept sending other goroutines' calls.
		l.wake <- struct{}{}
	}
	return reader, nil
}

// push puts c on the pending stack.
func (l *link) push(c *call) {
	for {
		head := l.pending.Load()
		c.next = head
		if l.pending.CompareAndSwap(head, c) {
			return
		}
	}
}

// takePending empties the pending stack into dst (which must be empty) in
// the order the calls were pushed.
func (l *link) takePending(dst []*call) []*call {
	for c := l.pending.Swap(nil); c != nil; c = c.next {
		dst = append(dst, c)
	}
	slices.Reverse(dst)
	return dst
}

// failPending fails every call on the pending stack with cause.
func (l *link) failPending(cause error) {
	for c := l.pending.Swap(nil); c != nil; {
		next := c.next
		c.fail(stateQueued, cause)
		c = next
	}
}

// writerLoop runs as the link's writer goroutine: woken when the writer
// role is handed to it, it writes until the queue is empty.
func (l *link) writerLoop() {
	defer l.client.wg.Done()
	for {
		select {
		case <-l.wake:
		case <-l.downCh:
			return
		}
		for {
			if more, _ := l.writeQueued(true, false); !more {
				break
			}
		}
	}
}

// writeQueued is called by the holder of the writer role. It takes
// everything queued and writes it in batches of at most MaxBatchBytes. It
// returns true if more calls were queued meanwhile (the role is kept), or
// false after giving up the role (the queue was empty, or the link failed).
// With yield, it lets other goroutines run once before giving up the role:
// callers just woken by replies then queue their next calls for this
// writer instead of each writing alone. With mayRead the writer takes the
// reader role if nobody holds it, and reports so.
func (l *link) writeQueued(yield, mayRead bool) (more, reader bool) {
	taken := l.takePending(l.spare[:0])
	if len(taken) == 0 || l.down.Load() {
		l.spare = taken[:0]
		if l.down.Load() {
			l.failPending(l.failure())
			for _, c := range taken {
				c.fail(stateQueued, l.failure())
			}
			clear(taken)
		}
		return l.releaseWriter(), false
	}

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
			// Always copied, also a call bigger than the limit (sent
			// alone): once the call is in flight its reply may complete
			// it and its caller reuse c.buf while this goroutine is
			// still inside Write, and only the copy keeps the two apart
			// (the race detector saw exactly that).
			l.wbuf = append(l.wbuf, c.buf...)
			if len(l.wbuf) >= limit {
				i++
				break
			}
		}
		if len(l.batch) == 0 {
			continue
		}
		out := l.wbuf
		// Read in this goroutine only after a single small write: while it
		// writes it cannot read, and a server whose replies back up stops
		// reading too.
		ok, took := l.send(out, mayRead && i == len(taken) && len(out) <= limit)
		reader = reader || took
		if !ok {
			cause := l.failure()
			for _, c := range taken[i:] {
				if c != nil {
					c.fail(stateQueued, cause)
				}
			}
			clear(taken)
			l.spare = taken[:0]
			return false, reader
		}
	}
	l.spare = taken[:0]
	if cap(l.wbuf) > 4*limit {
		l.wbuf = make([]byte, 0, 4096) // a huge call's copy is not kept
	}

	if yield && l.pending.Load() == nil {
		runtime.Gosched()
	}
	if l.pending.Load() == nil || l.down.Load() {
		return l.releaseWriter(), reader
	}
	return true, reader
}

// releaseWriter gives up the writer role, unless a call was pushed just
// before without taking it (it saw the role held): then the role is taken
// back and it returns true, as writeQueued's more. On a failed link it
// always gives the role up, failing whatever is pending.
func (l *link) releaseWriter() (more bool) {
	for {
		l.writing.Store(false)
		if l.down.Load() {
			l.failPending(l.failure())
			return false
		}
		if l.pending.Load() == nil || !l.writing.CompareAndSwap(false, true) {
			return false
		}
		if l.pending.Load() != nil {
			return true
		}
	}
}

// send registers l.batch as in flight and writes out. If nobody holds the
// reader role it is taken: by this goroutine with mayRead (reported by
// reader), else by waking the reader goroutine. ok is false if the link is
// (or has just become) down; the batch has then been failed.
func (l *link) send(out []byte, mayRead bool) (ok, reader bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		cause := l.failure()
		for _, c := range l.batch {
			c.fail(stateWritten, cause)
		}
		clear(l.batch)
		return false, false
	}
	l.inflight = append(l.inflight, l.batch...)
	l.written.Add(uint64(len(l.batch)))
	takeReader := !l.reading
	if takeReader {
		l.reading = true
		l.idleAt.Store(0)
	}
	l.mu.Unlock()
	clear(l.batch)
	_, err := l.nc.Write(out)
	if takeReader && !mayRead {
		l.readWake <- struct{}{}
	}
	if err != nil {
		l.fail(err)
		return false, takeReader && mayRead
	}
	return true, takeReader && mayRead
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
	inflight := l.inflight
	l.inflight = nil
	l.mu.Unlock()

	// Set before the stack is emptied: a call pushed after that sees it
	// and fails what it pushed itself.
	l.down.Store(true)
	close(l.downCh)
	_ = l.nc.Close()
	for _, c := range inflight {
		c.fail(stateWritten, cause)
	}
	l.failPending(cause)
}

// takeInflight moves the in-flight FIFO into dst (which must be empty) for
// the reader, swapping slices so neither side allocates.
func (l *link) takeInflight(dst []*call) []*call {
	l.mu.Lock()
	dst, l.inflight = l.inflight, dst
	l.mu.Unlock()
	return dst
}
