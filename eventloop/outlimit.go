package eventloop

import (
	"fmt"
	"sync/atomic"
	"time"
)

// OutputLimit bounds the unsent output of the connections given it with
// Conn.SetOutputLimit, as Redis's client-output-buffer-limit bounds a
// client class: a connection is closed when a write finds more than Hard
// bytes waiting, or finds more than Soft waiting and did so continuously
// for longer than SoftFor. 0 turns a limit off. Many connections share
// one OutputLimit; Set changes it for all of them at their next write.
// Its methods are safe for concurrent use.
type OutputLimit struct {
	hard, soft, softFor atomic.Int64
}

// NewOutputLimit returns an OutputLimit set to hard, soft and softFor.
func NewOutputLimit(hard, soft int64, softFor time.Duration) *OutputLimit {
	l := &OutputLimit{}
	l.Set(hard, soft, softFor)
	return l
}

// Set changes the limits; negative values count as 0 (no limit).
func (l *OutputLimit) Set(hard, soft int64, softFor time.Duration) {
	l.hard.Store(max(hard, 0))
	l.soft.Store(max(soft, 0))
	l.softFor.Store(int64(max(softFor, 0)))
}

// Limits returns the limits as Set them: bytes, bytes and the time the
// output may stay above soft.
func (l *OutputLimit) Limits() (hard, soft int64, softFor time.Duration) {
	return l.hard.Load(), l.soft.Load(), time.Duration(l.softFor.Load())
}

// SetOutputLimit makes l bound c's unsent output in place of
// Options.OutputHardLimit; nil restores that. Call it on c's loop.
func (c *Conn) SetOutputLimit(l *OutputLimit) { c.eng.connSetOutputLimit(c, l) }

// OutputBacklog reports the bytes of c's output that wait beyond its
// write buffer because the peer reads slower than c is written: what
// Redis's CLIENT LIST calls omem. Any goroutine may call it.
func (c *Conn) OutputBacklog() int { return c.eng.connOutputBacklog(c) }

func (l *loop) connSetOutputLimit(c *Conn, limit *OutputLimit) {
	c.limit = limit
	if b := c.backlog.Load(); b != nil {
		b.softSince = 0
	}
}

func (l *loop) connOutputBacklog(c *Conn) int { return c.backlogLen() }

// checkLimits closes c if its unsent output is past its limits. It looks
// at what is already pending, not at what is about to be added, so that a
// single reply of any size can be sent: the limit is for peers that do not
// read, as Redis's client-output-buffer-limit is.
func (l *loop) checkLimits(c *Conn) error {
	p := int64(c.pending())
	if c.limit == nil {
		if limit := int64(l.srv.opts.OutputHardLimit); p > limit {
			return l.overLimit(c, fmt.Errorf("%w: %d bytes pending, limit %d", ErrOutputLimit, p, limit))
		}
		return nil
	}
	hard, soft, softFor := c.limit.Limits()
	if hard > 0 && p > hard {
		return l.overLimit(c, fmt.Errorf("%w: %d bytes pending, hard limit %d", ErrOutputLimit, p, hard))
	}
	if soft == 0 {
		return nil
	}
	b := c.backlog.Load()
	if p <= soft {
		if b != nil {
			b.softSince = 0
		}
		return nil
	}
	if b == nil {
		b = &backlog{}
		c.backlog.Store(b)
	}
	now := l.now + 1 // never 0, which means "below"
	if b.softSince == 0 {
		b.softSince = now
		return nil
	}
	if over := now - b.softSince; over > softFor {
		return l.overLimit(c, fmt.Errorf("%w: %d bytes pending, above the soft limit %d for %v (limit %v)", ErrOutputLimit, p, soft, over.Round(time.Millisecond), softFor))
	}
	return nil
}

func (l *loop) overLimit(c *Conn, err error) error {
	l.abort(c, err)
	return c.closeErr
}
