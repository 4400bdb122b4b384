package kv

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/repl"
)

// apply runs every complete command at the front of in as the primary's
// client and returns how many bytes it consumed. The batch holds the exec
// gate of the link's loopState, as a loop holds its own for a batch: an
// EXEC elsewhere waits for it, and the primary's MULTI/EXEC stops the
// loops. The bytes of each command that ran enter this node's own stream
// (forward): the offset, the backlog and the replicas of this replica get
// them verbatim, as Redis 4+ proxies its primary's stream, so that they
// share the primary's history and offsets; a transaction's bytes go at
// once when its EXEC ran, as Redis counts them (so an ACK never covers
// half a transaction). REPLCONF GETACK is answered here with the offset
// before it.
func (l *masterLink) apply(conn *repl.Conn, in []byte) (int, error) {
	h, cl := l.h, l.cl
	gate := &cl.stats.gate
	gate.enter()
	defer gate.leave()
	used := 0
	done := 0 // in[:done] is forwarded, or kept in l.tx
	commit := func(end int) {
		l.forward(in[done:end])
		done = end
	}
	inMulti := func() bool { s := cl.sess.Load(); return s != nil && s.multi }
	for used < len(in) && !l.stopped.Load() {
		args, n, err := cl.parser.Parse(in[used:])
		if errors.Is(err, resp.ErrIncomplete) {
			break
		}
		if err != nil { // what ran before is forwarded; a transaction cut short is dropped (resetClient)
			return used, fmt.Errorf("protocol error in the primary's stream at offset %d: %w", h.repl.offset.Load()+int64(len(l.tx)), err)
		}
		used += n
		switch {
		case len(args) == 0:
		case len(args) >= 2 && ascii.EqualFold(args[0], "REPLCONF") && ascii.EqualFold(args[1], "GETACK"):
			if !inMulti() {
				commit(used - n)
			}
			if err := l.ack(conn); err != nil {
				return used, err
			}
		default:
			cl.out = cl.out[:0]
			h.dispatch(cl, args)
			cl.parser.Release()
			if len(cl.out) > 0 && cl.out[0] == '-' {
				l.noteError(args[0], cl.out)
			}
		}
		if !inMulti() {
			commit(used)
		}
	}
	if done < used { // a transaction not yet ended: its bytes wait for its EXEC
		l.tx = append(l.tx, in[done:used]...)
	}
	if cap(cl.out) > 64<<10 {
		cl.out = nil
	}
	// As onBatch does for a loop's client: for INFO's
	// total_commands_processed and CLIENT LIST's idle.
	cl.commands.Store(cl.commands.Load() + cl.batchCmds)
	cl.batchCmds = 0
	cl.lastActive.Store(h.clock.Load())
	return used, nil
}

// forward adds the bytes of a transaction kept in l.tx, then b, to this
// node's stream: its offset, its backlog and its own replicas
// (primarySide.appendLocked), under the stream's lock, so that a PSYNC of
// one of them sees the offset and the backlog agree.
func (l *masterLink) forward(b []byte) {
	if len(b) == 0 && len(l.tx) == 0 {
		return
	}
	p := &l.h.primary
	p.mu.Lock()
	if len(l.tx) > 0 {
		p.appendLocked(l.h, l.tx)
	}
	if len(b) > 0 {
		p.appendLocked(l.h, b)
	}
	p.mu.Unlock()
	if cap(l.tx) > 1<<20 {
		l.tx = nil
	} else {
		l.tx = l.tx[:0]
	}
}

// isPrimaryLink reports whether cl is the client a replica runs its
// primary's commands as (CLIENT KILL TYPE master).
func (cl *client) isPrimaryLink() bool {
	_, ok := cl.conn.(*masterConn)
	return ok
}

// noteError logs that a command of the primary failed here (the data sets
// now differ: a write refused over maxmemory, say), at most every
// errorLogEvery with the count since the last line.
func (l *masterLink) noteError(name, reply []byte) {
	l.errors++
	if now := time.Now(); now.Sub(l.errorLogged) >= errorLogEvery {
		l.h.opts.Logger.Warn("commands from the primary answered errors; this replica's data differs from the primary's",
			"count", l.errors, "last_command", string(truncateArg(name)), "last_reply", string(bytes.TrimRight(truncateArg(reply), "\r\n")))
		l.errors, l.errorLogged = 0, now
	}
}

// errorLogEvery spaces noteError's lines.
const errorLogEvery = 10 * time.Second

// resetClient readies the primary's client for a new connection: the
// partial command and any transaction of the old connection are dropped,
// since the primary sends again from the offset asked for, as Redis's
// replicationCacheMaster does. The selected database stays: a partial
// resync continues the stream where it was.
func (l *masterLink) resetClient() {
	cl := l.cl
	cl.parser.Reset()
	if s := cl.sess.Load(); s != nil {
		l.h.endSession(cl, s)
	}
	l.tx = l.tx[:0]
}

// masterConn is the Conn of the primary's client: its replies go nowhere
// (a replica answers its primary only with REPLCONF ACK, which the link
// writes itself), and closing it (CLIENT KILL) drops the link, which then
// reconnects and asks for a partial resync.
type masterConn struct {
	link *masterLink
}

func (c *masterConn) OutputBuffer() []byte        { return c.link.cl.out[:0] }
func (c *masterConn) SetOutputBuffer(b []byte)    { c.link.cl.out = b[:0] }
func (c *masterConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *masterConn) Flush() error                { return nil }
func (c *masterConn) OutputFull() bool            { return false }
func (c *masterConn) Close() error                { c.link.closeConn(); return nil }
func (c *masterConn) Resume()                     {}
func (c *masterConn) Reserve() error              { return nil }
func (c *masterConn) SetOutputClass(int)          {}
func (c *masterConn) OutputBacklog() int          { return 0 }
func (c *masterConn) Abort(error)                 { c.link.closeConn() }

// Run runs fn at once: what other goroutines ask of the primary's client
// (a CLIENT KILL) is safe from any goroutine.
func (c *masterConn) Run(fn func()) error { fn(); return nil }

// RunReserved is Run.
func (c *masterConn) RunReserved(fn func()) error { fn(); return nil }
