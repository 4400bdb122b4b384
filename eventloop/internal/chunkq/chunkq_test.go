package chunkq

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestQueueKeepsOrderAndReturnsChunks: bytes come out as they went in,
// across chunk boundaries, in reads of any size; chunks go back to the
// cache as they empty, and beyond the cache's few they are unmapped.
func TestQueueKeepsOrderAndReturnsChunks(t *testing.T) {
	var c Cache
	var q Queue
	var want bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		for i := 0; i < rng.IntN(20); i++ {
			p := make([]byte, rng.IntN(3*Size))
			for j := range p {
				p[j] = byte(rng.Uint32())
			}
			if n := q.Append(&c, p); n != len(p) {
				t.Fatalf("Append took %d of %d", n, len(p))
			}
			want.Write(p)
		}
		if q.Len() != want.Len() {
			t.Fatalf("Len %d, queued %d", q.Len(), want.Len())
		}
		for k := rng.IntN(want.Len() + 1); k > 0 && !q.Empty(); {
			f := q.Front()
			n := min(len(f), k, 1+rng.IntN(Size))
			if !bytes.Equal(f[:n], want.Next(n)) {
				t.Fatalf("round %d: bytes out of order", round)
			}
			q.Consume(&c, n)
			k -= n
		}
	}
	for f := q.Front(); len(f) > 0; f = q.Front() {
		if !bytes.Equal(f, want.Next(len(f))) {
			t.Fatal("bytes out of order at the end")
		}
		q.Consume(&c, len(f))
	}
	if !q.Empty() || q.Len() != 0 || want.Len() != 0 {
		t.Fatalf("after reading all: empty %v, Len %d, %d bytes unread", q.Empty(), q.Len(), want.Len())
	}
	if m := c.Mapped.Load(); m > cacheDepth*Size {
		t.Errorf("%d bytes still mapped with the queue empty, over the cache's %d", m, cacheDepth*Size)
	}
	q.Append(&c, make([]byte, 5*Size))
	q.Reset(&c)
	c.Release()
	if m := c.Mapped.Load(); m != 0 || q.Len() != 0 {
		t.Errorf("after Reset and Release: %d bytes mapped, Len %d", m, q.Len())
	}
}
