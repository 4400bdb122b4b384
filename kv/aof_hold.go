package kv

import (
	"sync/atomic"

	"github.com/shoalkv/shoal/aof"
)

// holdsReplies reports whether cl's replies must wait for the log: while
// earlier replies wait, and under appendfsync always while any record, of
// this client or another, is not yet durable (a reply may show its value).
func (cl *client) holdsReplies() bool {
	h := cl.h
	if h == nil || h.aof == nil {
		return false
	}
	if st := cl.aof; st != nil && len(st.marks) > 0 {
		return true
	}
	w := h.aof
	if w.Policy() != aof.FsyncAlways {
		return false
	}
	if w.WriteError() != "" {
		return cl.aof != nil && cl.aof.end > w.Durable()
	}
	return w.Appended() > w.Durable()
}

// afterBatch commits the batch's records and, if its replies must wait,
// moves them (cl.out[base:]) to the held queue. Under appendfsync always a
// batch's replies wait until every record appended so far, by any client,
// is durable: its own writes, and any other write whose value a reply of
// this batch may show. So, as with Redis (which syncs before it writes any
// reply), no client sees a value that a crash could still take back.
func (h *Handler) afterBatch(cl *client, base int) {
	w := h.aof
	st := cl.aof
	if w.Policy() != aof.FsyncAlways {
		if st != nil && st.end > st.committed {
			st.committed = st.end
			w.Commit(st.end, nil) // wakes the writer; never keeps fn
		}
	} else if cl.out != nil && len(cl.out) > base {
		end := w.Appended()
		if w.WriteError() != "" {
			// The disk refuses writes: answer reads rather than hold them
			// behind records that may never be written; a batch with
			// writes of its own still waits (and fails) for them.
			end = 0
			if st != nil {
				end = st.end
			}
		}
		if end > w.Durable() {
			if st == nil {
				st = &aofState{}
				cl.aof = st
			}
			if end > st.committed {
				st.committed = end
				if st.onSync == nil {
					st.onSync = cl.synced
					st.release = cl.releaseHeld
					st.ender, _ = cl.conn.(cycleEnder)
				}
				if st.cycleQueued {
					// The cycle's sync, queued by an earlier batch, covers
					// this one too: it syncs to the last mark.
					st.marks = append(st.marks, holdMark{end: end})
				} else if st.ender != nil && st.ender.AtCycleEnd() == nil {
					st.cycleQueued = true
					st.marks = append(st.marks, holdMark{end: end})
				} else if cl.conn == nil || cl.conn.Reserve() == nil {
					// The reservation keeps a graceful close (QUIT, the
					// peer's half-close, SIGTERM) waiting for these replies.
					if !w.Commit(end, st.onSync) {
						st.marks = append(st.marks, holdMark{end: end})
					} else if cl.conn != nil {
						cl.committedAtOnce(end)
					}
				}
			}
		}
	}
	if st == nil || len(st.marks) == 0 || cl.out == nil {
		return
	}
	st.held = append(st.held, cl.out[base:]...)
	cl.out = cl.out[:base]
	// A batch that waits for nothing newer waits with the one before it.
	st.marks[len(st.marks)-1].n = len(st.held)
	if cl.closeAfterReply {
		st.closing = true
		cl.closeAfterReply = false
	}
}

// synced runs on the writer goroutine once the records up to end are
// durable (ok) or failed: it hands the release to the loop.
func (cl *client) synced(end int64, ok bool) {
	st := cl.aof
	if !ok {
		st.failed.Store(true)
	}
	if ok {
		storeMax(&st.durable, end)
	}
	_ = cl.conn.RunReserved(st.release)
}

// releaseHeld runs on the loop: it writes the held replies whose records
// are durable. If the writer failed, a record of this client may never be
// durable: nothing held is sent, the client gets the MISCONF error and the
// connection closes, so no write it sent is acknowledged without being on
// disk.
func (cl *client) releaseHeld() {
	st := cl.aof
	if len(st.marks) == 0 {
		return
	}
	if st.failed.Load() {
		msg := "MISCONF Errors writing to the AOF file"
		if e := cl.h.aof.WriteError(); e != "" {
			msg = "MISCONF " + e
		}
		st.held, st.marks = nil, nil
		_, _ = cl.conn.Write([]byte("-" + msg + "\r\n"))
		_ = cl.conn.Close()
		return
	}
	d := st.durable.Load()
	i, n := 0, 0
	for i < len(st.marks) && st.marks[i].end <= d {
		n = st.marks[i].n
		i++
	}
	if i == 0 {
		return
	}
	_, _ = cl.conn.Write(st.held[:n])
	rest := copy(st.held, st.held[n:])
	st.held = st.held[:rest]
	st.marks = st.marks[:copy(st.marks, st.marks[i:])]
	for j := range st.marks {
		st.marks[j].n -= n
	}
	if len(st.marks) == 0 {
		if cap(st.held) > 64<<10 {
			st.held = nil
		}
		if st.closing {
			_ = cl.conn.Close()
		}
	}
}

// cycleEnder is a Conn whose loop runs functions at the end of its cycle,
// before it writes the cycle's output: the serving edge's connections on
// the native engine (eventloop.Conn.AtCycleEnd). AtCycleEnd fails where the
// engine has no such phase; the replies then take the writer goroutine's
// path (Writer.Commit, Conn.RunReserved). The function run is the
// client's CycleEnd.
type cycleEnder interface {
	AtCycleEnd() error
}

// CycleEnd runs what the client asked its Conn's AtCycleEnd for: the
// serving edge calls it on the client's loop at the end of the cycle.
func (c *Client) CycleEnd() { c.c.syncAtCycleEnd() }

// syncAtCycleEnd runs on cl's loop at the end of the cycle in which cl's
// batches held replies under appendfsync always: group commit as Redis does
// it in beforeSleep. The first client of the cycle to get here leads a
// round (aof.Writer.TrySyncTo), one write and one fdatasync for every
// record appended so far, by this loop's clients and any other's; the
// loop's other clients find their records durable, and the replies leave
// with the cycle's output, on the loop, with no hop through another
// goroutine. While another loop's round (or the writer goroutine's) is
// running, the loop does not wait for the disk: its clients wait through
// Writer.Commit as on an engine without a cycle end, and the loop goes on
// reading, so the next round carries every loop's records. If the write or
// the sync failed, releaseHeld answers MISCONF and closes.
func (cl *client) syncAtCycleEnd() {
	st := cl.aof
	st.cycleQueued = false
	if len(st.marks) == 0 {
		return
	}
	end := st.marks[len(st.marks)-1].end
	w := cl.h.aof
	ok, busy := w.TrySyncTo(end)
	switch {
	case busy:
		if cl.conn.Reserve() == nil && w.Commit(end, st.onSync) {
			cl.committedAtOnce(end)
		}
		return
	case ok:
		storeMax(&st.durable, end)
	case end > w.Durable():
		st.failed.Store(true)
	}
	cl.releaseHeld()
}

// committedAtOnce settles a reservation whose Commit did not keep the
// callback: the records up to end became durable meanwhile (or the policy
// changed, or the writer closed), and the held replies they cover go out.
func (cl *client) committedAtOnce(end int64) {
	st := cl.aof
	if w := cl.h.aof; end <= w.Durable() || w.Policy() != aof.FsyncAlways {
		storeMax(&st.durable, end)
	}
	_ = cl.conn.RunReserved(st.release)
}

// storeMax raises v to n unless it is already higher.
func storeMax(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if old >= n || v.CompareAndSwap(old, n) {
			return
		}
	}
}
