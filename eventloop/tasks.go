package eventloop

import (
	"github.com/valyala/bytebufferpool"
)

type taskKind uint8

const (
	taskRegister taskKind = iota // adopt an accepted descriptor
	taskWrite                    // AsyncWrite
	taskExecute                  // Execute
	taskShutdown                 // start draining
)

// task is work handed to a loop by another goroutine.
type task struct {
	kind taskKind
	fd   int
	ln   *listener // taskRegister: where fd was accepted
	c    *Conn
	data *bytebufferpool.ByteBuffer
	fn   func(*Conn)
	// reserved: the task settles a Conn.Reserve, which already counted it
	// in c.queued.
	reserved bool
}

// enqueue hands t to the loop from any goroutine. Only the first task of a
// batch writes to the wake descriptor; the loop clears wakePending before it
// takes the batch, so a task queued after that wakes it again.
func (l *loop) enqueue(t task) error {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return ErrServerClosed
	}
	if t.c != nil {
		if t.c.isClosed() { // closed since the caller's unlocked check
			l.mu.Unlock()
			return ErrConnClosed
		}
		if !t.reserved {
			t.c.queued.Add(1)
		}
	}
	l.tasks = append(l.tasks, t)
	var err error
	// Waking under mu keeps the poller open: stop closes it only after
	// setting stopped under mu.
	if l.wakePending.CompareAndSwap(false, true) {
		err = l.poller.wake()
	}
	l.mu.Unlock()
	return err
}

// wake makes the loop run a cycle, e.g. to notice a forced shutdown.
func (l *loop) wake() {
	l.mu.Lock()
	if !l.stopped {
		_ = l.poller.wake()
	}
	l.mu.Unlock()
}

func (l *loop) runTasks() {
	l.wakePending.Store(false)
	l.mu.Lock()
	l.tasks, l.running = l.running[:0], l.tasks
	l.mu.Unlock()
	for i := range l.running {
		t := &l.running[i]
		switch t.kind {
		case taskRegister:
			l.register(t.fd, t.ln)
		case taskWrite:
			t.c.queued.Add(-1)
			if c := t.c; !c.isClosed() && c.flags&flagAbort == 0 {
				// Not Write: data accepted before a Close is still sent.
				if l.checkLimits(c) == nil {
					l.appendOutput(c, t.data.B)
				}
				l.markDirty(c) // also to settle an abort by checkLimits
			}
			l.outBufs.put(t.data)
		case taskExecute:
			t.c.queued.Add(-1)
			if !t.c.isClosed() && t.c.flags&flagAbort == 0 {
				l.execute(t.fn, t.c)
			}
			l.markDirty(t.c)
		case taskShutdown:
			l.beginDrain()
		}
		*t = task{}
	}
	l.flushDirty()
}

// flushDirty sends the output that tasks produced, one write per connection.
func (l *loop) flushDirty() {
	for i, c := range l.dirty {
		c.flags &^= flagDirty
		l.loopFlush(c)
		l.settle(c)
		l.dirty[i] = nil
	}
	l.dirty = l.dirty[:0]
}

// beginDrain starts a graceful shutdown of this loop: stop accepting, answer
// what each connection has already sent, then close each one once its
// output is written. "Already sent" is everything in the socket's receive
// buffer, and what the peer still holds because the backpressure closed our
// receive window: a connection keeps being read (under the usual
// backpressure) until its output is all written and a read then finds the
// socket empty; only then is it marked closing. A peer that never stops
// sending is cut off by Shutdown's context deadline. The connections
// queued on the loop's own listeners (ReusePort) are accepted first and
// drained with the rest; the acceptor does the same for its listeners
// before this runs (see acceptQueued).
func (l *loop) beginDrain() {
	l.srv.acceptQueued(l.sockets, l.poller, l) // before draining: register turns connections away then
	l.draining = true
	l.sockets = closeSockets(l.sockets)
	for _, c := range l.conns {
		if c == nil || c.isClosed() || c.flags&flagClosing != 0 {
			continue
		}
		c.flags |= flagDrainInput
		if h := c.ln.onDrain; h != nil && (c.ln.tls == nil || l.tlsOpened(c)) {
			l.onDrain(h, c)
			l.markDirty(c)
		}
		if c.flags&flagReading != 0 {
			l.loopRead(c)
		} else {
			// Paused by backpressure: reading resumes when its output drains.
			l.markDirty(c)
		}
	}
}

// stop closes every connection that is left, with err, and refuses further
// tasks.
func (l *loop) stop(err error) {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
	l.sockets = closeSockets(l.sockets)
	for _, c := range l.conns {
		if c != nil && !c.isClosed() {
			l.closeConn(c, err)
		}
	}
	for _, lc := range l.lingering {
		l.endLinger(lc.c)
	}
	l.lingering = nil
	// Tasks that raced with the stop: release what they hold.
	l.mu.Lock()
	for _, t := range l.tasks {
		switch t.kind {
		case taskRegister:
			l.discard(t.fd)
		case taskWrite:
			outboundPool.Put(t.data)
		}
	}
	l.tasks = nil
	l.mu.Unlock()
	l.poller.close()
	l.chunks.Release()
	l.load.Store(0)
}
