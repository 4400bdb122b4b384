package eventloop

import (
	"time"

	"github.com/shoalkv/shoal/eventloop/internal/chunkq"
	"golang.org/x/sys/unix"
)

// A slow reader's output. Output is gathered in c.out, a pooled buffer on
// the Go heap, and written when the batch ends. When the socket does not
// take it all and more than spillAt is left, the rest moves into c's
// backlog, a chunkq.Queue of chunks mapped outside the Go heap, written
// before anything newer. So what a peer that does not read costs is its
// pending bytes rounded up to a chunk, not a []byte grown by doubling (up
// to twice the pending bytes) and the garbage collector's headroom on top
// (twice again); and a chunk, once written or dropped with its connection,
// goes back to the kernel at once, not when the garbage collector and the
// scavenger get to it. A connection whose peer keeps up never spills and
// pays nothing.

// spillAt is how much unsent output c.out may hold once the socket is
// full; more moves into the backlog.
const spillAt = 64 << 10

// backlog is the spilled part of a connection's output, older than c.out.
type backlog struct {
	q chunkq.Queue
	// softSince is the loop clock when the output was first seen above
	// the soft limit, 0 when below it.
	softSince time.Duration
}

// backlogLen is the bytes in c's backlog.
func (c *Conn) backlogLen() int {
	if b := c.backlog.Load(); b != nil {
		return b.q.Len()
	}
	return 0
}

// spill moves c's unsent output from c.out to the end of its backlog and
// frees c.out. It reports false, leaving in c.out what did not move, if no
// chunk could be mapped.
func (l *loop) spill(c *Conn) bool {
	if c.ln.tls != nil { // the backlog holds ciphertext
		l.tlsSeal(c)
		return true
	}
	p := c.out.B[c.outPos:]
	if n := l.appendBacklog(c, p); n < len(p) {
		c.outPos += n
		return false
	}
	l.outBufs.put(c.out)
	c.out, c.outPos = nil, 0
	return true
}

// behind reports whether c's newest output is in its backlog: then new
// output goes straight there (appendBacklog), not through c.out.
func (c *Conn) behind() bool {
	b := c.backlog.Load()
	return b != nil && !b.q.Empty() && (c.out == nil || len(c.out.B) == c.outPos)
}

// appendBacklog copies p to the end of c's backlog and returns how much it
// copied: less than len(p) only if no chunk could be mapped.
func (l *loop) appendBacklog(c *Conn, p []byte) int {
	b := c.backlog.Load()
	if b == nil {
		b = &backlog{}
		c.backlog.Store(b) // atomic: OutputBacklog reads it from any goroutine
	}
	return b.q.Append(&l.chunks, p)
}

// writeBacklog writes c's backlog from its head until the socket is full,
// unmapping chunks as they are written. It reports the error a write
// returned, other than EAGAIN.
func (l *loop) writeBacklog(c *Conn) error {
	q := &c.backlog.Load().q
	for p := q.Front(); len(p) > 0; p = q.Front() {
		n, err := l.writeOnce(c, p)
		if err != nil {
			return err
		}
		q.Consume(&l.chunks, n)
		if n < len(p) {
			return nil // the socket is full
		}
	}
	return nil
}

// writeOnce writes p to c's socket with one write (again on EINTR) and
// counts it; a full socket (EAGAIN) takes 0 bytes, without an error.
func (l *loop) writeOnce(c *Conn, p []byte) (int, error) {
	for {
		n, err := writeFd(c.fd, p)
		l.writeCalls++
		l.counters.writes.Add(1)
		switch err {
		case nil:
			l.counters.bytesWritten.Add(uint64(n))
			c.lastActive = l.now
			return n, nil
		case unix.EINTR:
		case unix.EAGAIN:
			return 0, nil
		default:
			return 0, err
		}
	}
}

// dropBacklog frees c's backlog: c is closing.
func (l *loop) dropBacklog(c *Conn) {
	if b := c.backlog.Load(); b != nil {
		b.q.Reset(&l.chunks)
	}
}
