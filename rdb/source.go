package rdb

import (
	"errors"
	"io"
)

// source is the reader's input: an io.Reader behind a buffer of its own,
// which knows the offset of every byte and checksums the bytes consumed in
// big runs (when the buffer is refilled) rather than byte by byte. With no
// io.Reader the buffer is the whole input (a DUMP payload): its end is
// known, so a length past it is refused before anything is allocated.
type source struct {
	rd      io.Reader // nil: buf[:w] is all the input
	buf     []byte
	r, w    int    // unread bytes are buf[r:w]
	crcFrom int    // buf[crcFrom:r] is consumed but not yet checksummed
	crc     uint64 // of the consumed input before buf[crcFrom]
	base    int64  // input offset of buf[0]
	eof     bool
	err     error // a read error other than EOF, kept
}

const sourceBuffer = 64 << 10

func newStreamSource(rd io.Reader) *source {
	return &source{rd: rd, buf: make([]byte, sourceBuffer)}
}

func newBytesSource(b []byte) *source {
	return &source{buf: b, w: len(b), eof: true}
}

// offset is the input offset of the next unread byte.
func (s *source) offset() int64 { return s.base + int64(s.r) }

// remaining is how many bytes the input has left, or -1 when unknown.
func (s *source) remaining() int64 {
	if s.rd == nil {
		return int64(s.w - s.r)
	}
	return -1
}

// sum returns the CRC-64 of every byte consumed so far.
func (s *source) sum() uint64 {
	s.crc = crcUpdate(s.crc, s.buf[s.crcFrom:s.r])
	s.crcFrom = s.r
	return s.crc
}

var errShort = errors.New("short input")

// fill makes n (at most sourceBuffer) unread bytes available.
func (s *source) fill(n int) error {
	for s.w-s.r < n {
		if s.err != nil {
			return s.err
		}
		if s.eof {
			return errShort
		}
		if s.r > 0 {
			s.sum()
			copy(s.buf, s.buf[s.r:s.w])
			s.base += int64(s.r)
			s.w -= s.r
			s.r, s.crcFrom = 0, 0
		}
		m, err := s.rd.Read(s.buf[s.w:])
		s.w += m
		switch {
		case err == io.EOF:
			s.eof = true
		case err != nil:
			s.err = err
		}
	}
	return nil
}

// take consumes n bytes (at most sourceBuffer) and returns them, valid
// until the next call.
func (s *source) take(n int) ([]byte, error) {
	if err := s.fill(n); err != nil {
		return nil, err
	}
	p := s.buf[s.r : s.r+n : s.r+n]
	s.r += n
	return p, nil
}

// readByte consumes one byte.
func (s *source) readByte() (byte, error) {
	if s.r == s.w {
		if err := s.fill(1); err != nil {
			return 0, err
		}
	}
	c := s.buf[s.r]
	s.r++
	return c, nil
}

// readInto fills dst from the input.
func (s *source) readInto(dst []byte) error {
	for len(dst) > 0 {
		if s.r == s.w {
			if err := s.fill(1); err != nil {
				return err
			}
		}
		c := copy(dst, s.buf[s.r:s.w])
		s.r += c
		dst = dst[c:]
	}
	return nil
}

// arena hands out the memory of strings read for one record, from chunks
// reused from record to record, so reading a file allocates in proportion
// to its biggest value rather than to its size.
type arena struct {
	chunks [][]byte
	cur    int // chunks[cur] is being carved
	used   int // bytes of chunks[cur] handed out
}

const (
	arenaChunk = 64 << 10
	arenaOwn   = 8 << 10 // strings at least this long get memory of their own
)

func (a *arena) reset() { a.cur, a.used = 0, 0 }

// alloc returns n bytes valid until reset.
func (a *arena) alloc(n int) []byte {
	if n >= arenaOwn {
		return make([]byte, n)
	}
	for {
		if a.cur < len(a.chunks) {
			if c := a.chunks[a.cur]; a.used+n <= len(c) {
				p := c[a.used : a.used+n : a.used+n]
				a.used += n
				return p
			}
			a.cur++
			a.used = 0
			continue
		}
		// Chunks start small (a DUMP payload of a few integers needs
		// little) and double up to arenaChunk.
		size := 1 << 10
		if k := len(a.chunks); k > 0 {
			size = min(2*len(a.chunks[k-1]), arenaChunk)
		}
		size = max(size, n)
		a.chunks = append(a.chunks, make([]byte, size))
	}
}

// copy returns a copy of b valid until reset.
func (a *arena) copy(b []byte) []byte {
	p := a.alloc(len(b))
	copy(p, b)
	return p
}
