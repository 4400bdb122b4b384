package eventloop

import "github.com/valyala/bytebufferpool"

// bufCache is a small per-loop stack of buffers in front of a
// bytebufferpool.Pool. The pool alone is emptied by every GC and drops
// buffers above its calibrated size, so a busy loop would keep allocating
// fresh buffers and regrowing them; the stack keeps the few buffers a loop
// cycles through. Buffers still go back to the pool when the stack is full
// or they are large, so idle connections hold none and memory stays bounded.
//
// Owned by the loop goroutine.
type bufCache struct {
	pool  *bytebufferpool.Pool
	stack []*bytebufferpool.ByteBuffer
}

const (
	bufCacheDepth   = 32
	bufCacheMaxSize = 64 << 10
)

func (b *bufCache) get() *bytebufferpool.ByteBuffer {
	if n := len(b.stack); n > 0 {
		buf := b.stack[n-1]
		b.stack[n-1] = nil
		b.stack = b.stack[:n-1]
		return buf
	}
	return b.pool.Get()
}

func (b *bufCache) put(buf *bytebufferpool.ByteBuffer) {
	buf.B = buf.B[:0]
	if len(b.stack) < bufCacheDepth && cap(buf.B) <= bufCacheMaxSize {
		b.stack = append(b.stack, buf)
		return
	}
	b.pool.Put(buf)
}
