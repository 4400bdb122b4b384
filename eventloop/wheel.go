package eventloop

import "time"

// idleWheel is a per-loop timing wheel for idle timeouts. Each connection sits
// in exactly one slot; traffic only updates Conn.lastActive, and the slot
// re-files the connection when it fires and finds it was active since. So the
// hot path pays one store per read and the loop pays one slot per tick, with
// no timer per connection. Deadlines are honoured late by at most one tick
// (timeout/16), never early.
//
// Owned by the loop goroutine.
type idleWheel struct {
	timeout time.Duration
	tick    time.Duration
	slots   [][]*Conn
	spare   []*Conn
	cur     int           // slot that fires next
	base    time.Duration // loop clock at which slot cur fires
	size    int           // connections filed
}

func newIdleWheel(timeout time.Duration) *idleWheel {
	tick := timeout / 16
	if tick < time.Millisecond {
		tick = time.Millisecond
	}
	n := int(timeout/tick) + 2
	return &idleWheel{timeout: timeout, tick: tick, slots: make([][]*Conn, n)}
}

// add files c, active at now.
func (w *idleWheel) add(c *Conn, now time.Duration) {
	if w.size == 0 {
		w.base = now + w.tick
	}
	w.size++
	w.file(c, now+w.timeout)
}

func (w *idleWheel) file(c *Conn, deadline time.Duration) {
	ticks := int((deadline - w.base + w.tick - 1) / w.tick)
	if ticks < 0 {
		ticks = 0
	}
	if ticks >= len(w.slots) {
		ticks = len(w.slots) - 1
	}
	i := (w.cur + ticks) % len(w.slots)
	w.slots[i] = append(w.slots[i], c)
}

// advance fires every slot due by now, calling expire for each open
// connection idle for the whole timeout.
func (w *idleWheel) advance(now time.Duration, expire func(*Conn)) {
	for w.size > 0 && w.base <= now {
		list := w.slots[w.cur]
		w.slots[w.cur] = w.spare
		w.cur = (w.cur + 1) % len(w.slots)
		w.base += w.tick
		for _, c := range list {
			switch {
			case c.isClosed():
				w.size--
			case now-c.lastActive >= w.timeout:
				w.size--
				expire(c)
			default:
				w.file(c, c.lastActive+w.timeout)
			}
		}
		clear(list)
		w.spare = list[:0]
	}
}

// waitMillis is how long the loop may block before the next slot is due, or
// -1 when no connection is filed.
func (w *idleWheel) waitMillis(now time.Duration) int {
	if w.size == 0 {
		return -1
	}
	return millisUntil(w.base, now)
}
