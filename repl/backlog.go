package repl

// Backlog is the primary's replication backlog: the last Size bytes of its
// replication stream, in a ring, so that a replica whose link dropped can
// continue from the offset it reached (+CONTINUE) instead of a full sync.
//
// Offsets are stream offsets as Redis counts them (master_repl_offset):
// the byte at offset o is the o-th byte of the stream, the first being 1.
// The backlog holds the bytes from FirstByte() to End(), inclusive; a
// replica that applied every byte up to o asks for o+1.
//
// A Backlog is not safe for concurrent use: the primary's stream lock
// guards it.
type Backlog struct {
	buf    []byte // the ring, len == size
	next   int    // index in buf where the next byte goes
	histed int64  // bytes in the ring: min(written, size)
	end    int64  // offset of the last byte written
}

// NewBacklog returns an empty backlog of size bytes whose next byte will
// be at offset end+1: the stream's offset when the backlog is created.
func NewBacklog(size int, end int64) *Backlog {
	if size < 1 {
		size = 1
	}
	return &Backlog{buf: make([]byte, size), end: end}
}

// Size returns the ring's capacity: repl_backlog_size.
func (b *Backlog) Size() int { return len(b.buf) }

// End returns the offset of the last byte written: master_repl_offset.
func (b *Backlog) End() int64 { return b.end }

// HistLen returns how many bytes the backlog holds: repl_backlog_histlen.
func (b *Backlog) HistLen() int64 { return b.histed }

// FirstByte returns the offset of the oldest byte held:
// repl_backlog_first_byte_offset (End()+1 when it holds none).
func (b *Backlog) FirstByte() int64 { return b.end - b.histed + 1 }

// Write appends p to the stream, dropping the oldest bytes beyond Size.
func (b *Backlog) Write(p []byte) {
	b.end += int64(len(p))
	if len(p) >= len(b.buf) {
		p = p[len(p)-len(b.buf):]
		copy(b.buf, p)
		b.next = 0
		b.histed = int64(len(b.buf))
		return
	}
	n := copy(b.buf[b.next:], p)
	copy(b.buf, p[n:])
	b.next = (b.next + len(p)) % len(b.buf)
	b.histed = min(b.histed+int64(len(p)), int64(len(b.buf)))
}

// Covers reports whether a replica that asks for the stream from offset
// from (the first byte it lacks) can be served from the backlog: from is
// between FirstByte() and End()+1.
func (b *Backlog) Covers(from int64) bool {
	return from >= b.FirstByte() && from <= b.end+1
}

// AppendFrom appends to dst the bytes from offset from to End(); Covers
// must hold.
func (b *Backlog) AppendFrom(dst []byte, from int64) []byte {
	n := int(b.end - from + 1)
	if n <= 0 {
		return dst
	}
	start := (b.next - n + len(b.buf)) % len(b.buf)
	if start+n <= len(b.buf) {
		return append(dst, b.buf[start:start+n]...)
	}
	dst = append(dst, b.buf[start:]...)
	return append(dst, b.buf[:n-(len(b.buf)-start)]...)
}

// Resize changes the capacity to size bytes, keeping the newest bytes
// that fit (CONFIG SET repl-backlog-size).
func (b *Backlog) Resize(size int) {
	if size < 1 {
		size = 1
	}
	if size == len(b.buf) {
		return
	}
	keep := min(b.histed, int64(size))
	data := b.AppendFrom(make([]byte, 0, keep), b.end-keep+1)
	b.buf = make([]byte, size)
	copy(b.buf, data)
	b.next = len(data) % size
	b.histed = int64(len(data))
}
