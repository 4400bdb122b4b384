// Package chunkq is a byte queue in fixed-size chunks mapped outside the Go
// heap: the backlog of a connection whose peer reads slower than it is
// written, for both of eventloop's engines. A chunk goes back to the kernel
// (munmap) once written or dropped, beyond the few a Cache keeps, so what a
// slow peer costs is its pending bytes rounded up to a chunk: no doubling
// []byte, no garbage collector headroom, nothing left behind once it goes.
package chunkq

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Size is the size of a chunk.
const Size = 64 << 10

// cacheDepth chunks (512 KiB) are kept mapped by a Cache for reuse: a
// slow reader that drains and refills does not map and unmap each time,
// and an idle loop holds little.
const cacheDepth = 8

// Cache is one loop's free chunks. Its methods are for the loop's
// goroutine only; Mapped may be read by any.
type Cache struct {
	free [][]byte
	// Mapped is the bytes of chunks mapped, in use or free.
	Mapped atomic.Int64
	// Unmapped counts the bytes of chunks given back to the kernel, ever.
	Unmapped atomic.Int64
}

func (c *Cache) get() ([]byte, error) {
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free[n-1] = nil
		c.free = c.free[:n-1]
		return b, nil
	}
	b, err := unix.Mmap(-1, 0, Size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	c.Mapped.Add(Size)
	return b, nil
}

func (c *Cache) put(b []byte) {
	if len(c.free) < cacheDepth {
		c.free = append(c.free, b)
		return
	}
	if unix.Munmap(b) == nil {
		c.Mapped.Add(-Size)
		c.Unmapped.Add(Size)
	}
}

// Release unmaps the free chunks: the loop has stopped.
func (c *Cache) Release() {
	for i, b := range c.free {
		if unix.Munmap(b) == nil {
			c.Mapped.Add(-Size)
		}
		c.free[i] = nil
	}
	c.free = nil
}

// Queue is bytes in chunks taken from a Cache, first in first out. The
// zero value is empty. Its methods are for the owning loop's goroutine;
// Len may be called from any.
type Queue struct {
	chunks [][]byte // data from head in chunks[0] to tail in the last
	head   int      // consumed prefix of chunks[0]
	tail   int      // bytes used in the last chunk
	size   atomic.Int64
}

// Len is the bytes queued; any goroutine may call it.
func (q *Queue) Len() int { return int(q.size.Load()) }

// Empty reports whether nothing is queued.
func (q *Queue) Empty() bool { return len(q.chunks) == 0 }

// Append copies p to the end of q and returns how much it copied: less
// than len(p) only if no chunk could be mapped.
func (q *Queue) Append(c *Cache, p []byte) int {
	done := 0
	for done < len(p) {
		if len(q.chunks) == 0 || q.tail == Size {
			ch, err := c.get()
			if err != nil {
				break
			}
			q.chunks = append(q.chunks, ch)
			q.tail = 0
		}
		n := copy(q.chunks[len(q.chunks)-1][q.tail:], p[done:])
		q.tail += n
		done += n
	}
	q.size.Add(int64(done))
	return done
}

// Front returns the first chunk's unconsumed bytes (nil when empty); it
// is valid until the next call that changes q.
func (q *Queue) Front() []byte {
	if len(q.chunks) == 0 {
		return nil
	}
	end := Size
	if len(q.chunks) == 1 {
		end = q.tail
	}
	return q.chunks[0][q.head:end]
}

// Consume drops the first n bytes of Front, returning a chunk to c once
// it is all consumed.
func (q *Queue) Consume(c *Cache, n int) {
	q.head += n
	q.size.Add(-int64(n))
	if len(q.Front()) > 0 {
		return
	}
	c.put(q.chunks[0])
	q.chunks[0] = nil
	q.chunks = q.chunks[1:]
	q.head = 0
	if len(q.chunks) == 0 {
		q.chunks, q.tail = nil, 0
	}
}

// Reset drops everything queued, returning the chunks to c.
func (q *Queue) Reset(c *Cache) {
	for i, ch := range q.chunks {
		c.put(ch)
		q.chunks[i] = nil
	}
	q.chunks, q.head, q.tail = nil, 0, 0
	q.size.Store(0)
}
