package client

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

const (
	readBufSize = 32 << 10
	// maxIdleReadBuf: a read buffer grown past this for one big reply is
	// dropped once that reply has been handled.
	maxIdleReadBuf = 1 << 20
	// slabSize is the block Get's values are carved from; values larger than
	// slabSize/8 get an allocation of their own.
	slabSize = 16 << 10
	// pollOutstanding is how many calls must be waiting for replies for the
	// reader goroutine to poll the socket between yields instead of
	// parking in the network poller (see pollRead): about the length of a
	// P's local run queue (256), past which woken callers spill into the
	// global one.
	pollOutstanding = 256
)

// replyReader reads whole replies from a connection, bufio-style: it reads
// as much as the socket has, then hands out replies from its buffer.
type replyReader struct {
	nc         net.Conn
	buf        []byte
	start, end int

	// poll, when set, makes fill try non-blocking reads between yields to
	// the scheduler before it blocks (see fill). raw and tryRead are set
	// by newReplyReader when nc is a plain socket; tryRead's results are
	// left in polled and pollErr.
	poll    bool
	raw     syscall.RawConn
	tryRead func(fd uintptr) bool
	polled  int
	pollErr error
	polls   uint64 // times fill polled (for tests)
}

func newReplyReader(nc net.Conn) *replyReader {
	rr := &replyReader{nc: nc, buf: make([]byte, readBufSize)}
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			rr.raw = raw
			rr.tryRead = rr.readNow // one closure per connection, not per read
		}
	}
	return rr
}

// readNow is a RawConn.Read callback: one read(2) into the free part of
// the buffer, done whether or not there was anything to read.
func (rr *replyReader) readNow(fd uintptr) bool {
	rr.polled, rr.pollErr = syscall.Read(int(fd), rr.buf[rr.end:])
	return true
}

// yieldedLong is how long a runtime.Gosched must take for the reader to
// conclude that other goroutines are queued to run, and so that Go's
// scheduler will not look at the network soon.
const yieldedLong = 20 * time.Microsecond

// next returns the next complete reply: the header of its first element
// and the raw bytes of the whole reply, nested elements and attributes
// included. raw aliases the reader's buffer and is valid until the next
// call to next.
func (rr *replyReader) next() (r resp.Reply, raw []byte, err error) {
	for {
		if rr.start < rr.end {
			b := rr.buf[rr.start:rr.end]
			var n int
			r, n, err = resp.ReadReply(b)
			if err == nil && (r.Elements() > 0 || r.Kind == '|') {
				n, err = resp.SkipReply(b)
			}
			if err == nil {
				rr.start += n
				return r, b[:n], nil
			}
			if err != resp.ErrIncomplete {
				return r, nil, err
			}
		}
		if err := rr.fill(); err != nil {
			return resp.Reply{}, nil, err
		}
	}
}

// fill reads more bytes, making room first.
func (rr *replyReader) fill() error {
	if rr.start == rr.end {
		rr.start, rr.end = 0, 0
		if len(rr.buf) > maxIdleReadBuf {
			rr.buf = make([]byte, readBufSize)
		}
	} else if rr.start > 0 {
		rr.end = copy(rr.buf, rr.buf[rr.start:rr.end])
		rr.start = 0
	}
	if rr.end == len(rr.buf) {
		grown := make([]byte, 2*len(rr.buf))
		copy(grown, rr.buf[:rr.end])
		rr.buf = grown
	}
	if rr.poll && rr.raw != nil {
		if got, err := rr.pollRead(); got || err != nil {
			return err
		}
	}
	n, err := rr.nc.Read(rr.buf[rr.end:])
	rr.end += n
	if n > 0 {
		return nil
	}
	return err
}

// pollRead reads what the socket has without blocking, and while it has
// nothing yields to the other goroutines and tries again, as long as
// there are others to yield to. It reports whether bytes arrived; with
// neither bytes nor an error the caller blocks in a read.
//
// Why: a goroutine blocked in a read is woken by Go's network poller,
// which the scheduler consults only when it has no goroutine to run, or
// every 10 ms from sysmon. With thousands of callers taking turns (each
// reply wakes one, which queues its next call), the run queues never
// drain, so a reader parked in the poller waited for sysmon's 10 ms while
// the replies sat in the socket, and every caller with it. Yielding puts
// the reader on the global run queue, which each P looks at every 61
// goroutines it runs.
func (rr *replyReader) pollRead() (got bool, err error) {
	rr.polls++
	for {
		if err := rr.raw.Read(rr.tryRead); err != nil {
			return false, err
		}
		switch n, err := rr.polled, rr.pollErr; {
		case n > 0:
			rr.end += n
			return true, nil
		case err == nil:
			return false, io.EOF
		case err != syscall.EAGAIN && err != syscall.EINTR:
			return false, os.NewSyscallError("read", err)
		}
		t0 := time.Now()
		runtime.Gosched()
		if time.Since(t0) < yieldedLong {
			return false, nil // little else to run: the poller is looked at soon
		}
	}
}

// readerLoop runs as the link's reader goroutine: each time the reader
// role is handed to it, it reads replies until none is outstanding.
func (l *link) readerLoop() {
	defer l.client.wg.Done()
	for {
		select {
		case <-l.readWake:
		case <-l.downCh:
			return
		}
		if !l.readReplies(nil) {
			return
		}
	}
}

// readUntil is called by a caller that took the reader role in enqueue: it
// reads replies until its own call is answered, then gives the role up, or
// hands it to the reader goroutine if other replies are outstanding.
func (l *link) readUntil(own *call) {
	l.readReplies(own)
}

// readReplies is run by the holder of the reader role. It matches each
// reply to the oldest call in flight, until own is answered (own != nil) or
// nothing is outstanding (own == nil), and then releases the role. It
// returns false if the link failed.
func (l *link) readReplies(own *call) bool {
	for {
		if own == nil && l.answeredN == l.written.Load() && l.releaseReader() {
			// releaseReader keeps the role while unread bytes are buffered.
			return true
		}
		// Only the reader goroutine polls, with enough calls outstanding
		// for their callers to keep the scheduler's queues full.
		l.rr.poll = own == nil && l.written.Load()-l.answeredN >= pollOutstanding
		r, raw, err := l.rr.next()
		if err != nil {
			l.fail(err)
			cause := l.failure()
			for _, c := range l.mine[l.head:] {
				c.fail(stateWritten, cause)
			}
			clear(l.mine)
			l.mine, l.head = l.mine[:0], 0
			return false
		}
		if r.Kind == '>' {
			continue // RESP3 push: out-of-band, no call waits for it
		}
		l.answeredN++
		l.answered.Store(l.answeredN)
		if l.head == len(l.mine) {
			clear(l.mine)
			l.mine = l.takeInflight(l.mine[:0])
			l.head = 0
			if len(l.mine) == 0 {
				l.fail(fmt.Errorf("%w: reply %.40q with no call waiting for it", resp.ErrInvalidReply, raw))
				return false
			}
		}
		c := l.mine[l.head]
		l.mine[l.head] = nil
		l.head++
		if !c.claim(stateWritten) {
			continue // abandoned by its caller: the reply is dropped
		}
		if r.Kind == '|' {
			r, raw = stripAttributes(raw)
		}
		l.slab = answer(c, r, raw, l.slab)
		c.done <- struct{}{}
		if c == own {
			if !l.releaseReader() {
				l.readWake <- struct{}{} // the reader goroutine reads the rest
			}
			return true
		}
	}
}

// releaseReader gives up the reader role if no reply is outstanding and no
// unread byte is buffered, and reports whether it did.
func (l *link) releaseReader() bool {
	if l.rr.start < l.rr.end {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.answeredN != l.written.Load() {
		return false
	}
	l.reading = false
	l.idleAt.Store(l.client.now())
	return true
}

// answer decodes reply r (raw: all of its bytes) into c's results. slab is
// the reader's block for Get's values; the updated block is returned.
func answer(c *call, r resp.Reply, raw []byte, slab []byte) []byte {
	if r.Kind == '-' || r.Kind == '!' {
		c.err = Error(r.Data)
		return slab
	}
	switch c.want {
	case wantStatus:
		if r.Kind != '+' {
			c.err = unexpected(r, "a status reply")
		}
	case wantBulk, wantInto:
		switch {
		case r.IsNull():
			c.err = ErrNil
		case r.Kind == '$':
			if c.want == wantInto {
				c.val = append(c.dst, r.Data...)
			} else {
				c.val, slab = carve(slab, r.Data)
			}
		default:
			c.err = unexpected(r, "a bulk string")
		}
	case wantInt:
		if r.Kind == ':' {
			c.n = r.Int
		} else {
			c.err = unexpected(r, "an integer")
		}
	case wantAny:
		c.v, c.err = decodeTop(raw)
	}
	return slab
}

// carve copies v into the slab and returns the copy, which the caller may
// keep: the slab's bytes are never written twice. A value kept alive keeps
// its whole 16 KiB block alive.
func carve(slab, v []byte) (val, rest []byte) {
	if len(v) > slabSize/8 {
		return append(make([]byte, 0, len(v)), v...), slab
	}
	if cap(slab)-len(slab) < len(v) {
		slab = make([]byte, 0, slabSize)
	}
	start := len(slab)
	slab = append(slab, v...)
	return slab[start:len(slab):len(slab)], slab
}

func unexpected(r resp.Reply, want string) error {
	return fmt.Errorf("client: unexpected reply of type %q, want %s", r.Kind, want)
}

// stripAttributes skips RESP3 attributes in front of a reply and returns
// the reply they describe.
func stripAttributes(raw []byte) (resp.Reply, []byte) {
	for {
		r, n, _ := resp.ReadReply(raw)
		if r.Kind != '|' {
			return r, raw
		}
		for i := 0; i < r.Elements(); i++ {
			m, _ := resp.SkipReply(raw[n:])
			n += m
		}
		raw = raw[n:]
	}
}
