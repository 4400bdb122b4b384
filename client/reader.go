package client

import (
	"fmt"
	"net"

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
)

// replyReader reads whole replies from a connection, bufio-style: it reads
// as much as the socket has, then hands out replies from its buffer.
type replyReader struct {
	nc         net.Conn
	buf        []byte
	start, end int
}

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
	n, err := rr.nc.Read(rr.buf[rr.end:])
	rr.end += n
	if n > 0 {
		return nil
	}
	return err
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
