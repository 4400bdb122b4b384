package rdb

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestLZFWithinRedisBound: with Redis's bound (len-4) the compressor gives
// up rather than return more, and whatever compresses decompresses to the
// same bytes, for inputs from incompressible to one byte repeated.
func TestLZFWithinRedisBound(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		n := rng.Intn(1 << uint(1+rng.Intn(15)))
		in := make([]byte, n)
		alphabet := 1 + rng.Intn(255)
		for j := range in {
			if j > 0 && rng.Intn(4) > 0 {
				in[j] = in[j-1]
			} else {
				in[j] = byte(rng.Intn(alphabet))
			}
		}
		bound := len(in) - 4
		c, ok := CompressLZF(nil, in, bound)
		if !ok {
			continue
		}
		if len(c) > bound {
			t.Fatalf("input of %d: compressed to %d, over the bound %d", n, len(c), bound)
		}
		out := make([]byte, len(in))
		if err := DecompressLZF(out, c); err != nil || !bytes.Equal(out, in) {
			t.Fatalf("input of %d bytes does not survive compression: %v", n, err)
		}
	}
}

// TestLZFDecompressRefusesGarbage: random bytes never panic, and what is
// accepted fills exactly the length asked.
func TestLZFDecompressRefusesGarbage(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for i := 0; i < 20000; i++ {
		c := make([]byte, rng.Intn(64))
		rng.Read(c)
		out := make([]byte, rng.Intn(256))
		_ = DecompressLZF(out, c) // an error or a full out; never a panic
	}
}
