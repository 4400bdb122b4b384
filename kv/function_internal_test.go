package kv

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestCRC64JonesCheckValue: Redis's crc64 of "123456789" (its crc64 test).
func TestCRC64JonesCheckValue(t *testing.T) {
	if got := crc64Jones([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64Jones(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
}

// TestLZFRoundTrip: whatever compresses decompresses to the same bytes,
// for inputs from incompressible to one octet repeated; a bound too small
// for the result yields nil, never a longer output.
func TestLZFRoundTrip(t *testing.T) {
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
		c := lzfCompress(in, bound)
		if c == nil {
			continue
		}
		if len(c) > bound {
			t.Fatalf("input of %d: compressed to %d, over the bound %d", n, len(c), bound)
		}
		out, ok := lzfDecompress(c, len(in))
		if !ok || !bytes.Equal(out, in) {
			t.Fatalf("input of %d bytes does not survive compression", n)
		}
	}
}

// TestLZFDecompressRefusesGarbage: random bytes never panic and never
// yield more than asked.
func TestLZFDecompressRefusesGarbage(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for i := 0; i < 20000; i++ {
		c := make([]byte, rng.Intn(64))
		rng.Read(c)
		want := rng.Intn(256)
		if out, ok := lzfDecompress(c, want); ok && len(out) != want {
			t.Fatalf("%x: %d bytes, asked %d", c, len(out), want)
		}
	}
}

// FuzzFunctionPayload: no payload makes the reader panic or loop.
func FuzzFunctionPayload(f *testing.F) {
	f.Add(dumpFunctions([]string{"#!lua name=a\nredis.register_function('f', function() return 1 end)"}))
	f.Add(dumpFunctions(nil))
	f.Fuzz(func(t *testing.T, p []byte) {
		readFunctionPayload(p)
		r := &rdbReader{p: p}
		for r.pos < len(p) {
			if _, ok := r.string(); !ok {
				break
			}
		}
	})
}
