package repl

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestBacklogKeepsTheNewestBytes writes random pieces and checks, after
// each, that every offset the backlog claims to cover gives back exactly
// the stream's bytes from there, and that older offsets are refused.
func TestBacklogKeepsTheNewestBytes(t *testing.T) {
	for _, size := range []int{1, 7, 64, 1000} {
		const start = 1000
		b := NewBacklog(size, start)
		var stream []byte // every byte written; stream[i] is at offset start+1+i
		rng := rand.New(rand.NewPCG(1, uint64(size)))
		for range 300 {
			p := make([]byte, rng.IntN(2*size+3))
			for i := range p {
				p[i] = byte(rng.IntN(256))
			}
			b.Write(p)
			stream = append(stream, p...)
			if got, want := b.End(), int64(start+len(stream)); got != want {
				t.Fatalf("size %d: End %d, want %d", size, got, want)
			}
			if got, want := b.HistLen(), int64(min(len(stream), size)); got != want {
				t.Fatalf("size %d: HistLen %d, want %d", size, got, want)
			}
			first := b.FirstByte()
			if b.Covers(first-1) || !b.Covers(first) || !b.Covers(b.End()+1) || b.Covers(b.End()+2) {
				t.Fatalf("size %d: Covers wrong around [%d, %d]", size, first, b.End())
			}
			for _, from := range []int64{first, first + int64(rng.IntN(int(b.HistLen())+1)), b.End() + 1} {
				got := b.AppendFrom(nil, from)
				want := stream[from-start-1:]
				if !bytes.Equal(got, want) {
					t.Fatalf("size %d: AppendFrom(%d) = %d bytes, want %d", size, from, len(got), len(want))
				}
			}
		}
	}
}

func TestBacklogResizeKeepsTheNewest(t *testing.T) {
	b := NewBacklog(10, 0)
	b.Write([]byte("0123456789abcdef"))
	b.Resize(4)
	if got := string(b.AppendFrom(nil, b.FirstByte())); got != "cdef" || b.FirstByte() != 13 {
		t.Fatalf("after shrink: %q from %d", got, b.FirstByte())
	}
	b.Resize(8)
	b.Write([]byte("gh"))
	if got := string(b.AppendFrom(nil, b.FirstByte())); got != "cdefgh" || b.End() != 18 {
		t.Fatalf("after grow: %q up to %d", got, b.End())
	}
	b.Write([]byte("ijk"))
	if got := string(b.AppendFrom(nil, b.FirstByte())); got != "defghijk" {
		t.Fatalf("after wrap: %q", got)
	}
}
