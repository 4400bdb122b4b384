package eventloop

import "errors"

// ErrNoCycleEnd is AtCycleEnd's answer on an engine (Options.Engine) that
// has no cycle-end phase: the caller takes its other path.
var ErrNoCycleEnd = errors.New("eventloop: this engine runs no cycle-end functions")

// AtCycleEnd queues fn to run on c's loop once the loop has handled the
// events and tasks of its current cycle and before it writes the cycle's
// output: what fn appends to c (or to any connection of the loop) leaves
// in the same writes as the replies OnTraffic produced. A handler that must
// do one thing for everything the cycle's connections asked (one disk
// sync for all their writes, as Redis does in beforeSleep) queues one fn
// per connection; each runs in turn, in the order queued, and the first
// can do the work for all. Call it on c's loop goroutine (OnTraffic, or a
// function Execute runs). A graceful close that fn did not ask for (the
// peer's half-close, Server.Shutdown) waits for fn as for an Execute; after
// the handler's own Close, c takes no more output, so a handler that still
// has something to send closes from fn. If c is closed or aborted first, fn
// does not run.
//
// On another engine it returns ErrNoCycleEnd and does nothing.
func (c *Conn) AtCycleEnd(fn func(c *Conn)) error { return c.eng.connAtCycleEnd(c, fn) }

func (l *loop) connAtCycleEnd(c *Conn, fn func(c *Conn)) error {
	if c.isClosed() {
		return ErrConnClosed
	}
	c.queued.Add(1) // on the loop goroutine: no close can slip in between
	l.cycleEnd = append(l.cycleEnd, task{kind: taskExecute, c: c, fn: fn})
	return nil
}

// runCycleEnd runs the functions AtCycleEnd queued, and those they queue
// in turn.
func (l *loop) runCycleEnd() {
	for len(l.cycleEnd) > 0 {
		l.cycleEnd, l.cycleRunning = l.cycleRunning[:0], l.cycleEnd
		for i := range l.cycleRunning {
			t := &l.cycleRunning[i]
			t.c.queued.Add(-1)
			if !t.c.isClosed() && t.c.flags&flagAbort == 0 {
				l.execute(t.fn, t.c)
			}
			l.markDirty(t.c)
			*t = task{}
		}
	}
}

func (e *engineConn) connAtCycleEnd(*Conn, func(c *Conn)) error { return ErrNoCycleEnd }
