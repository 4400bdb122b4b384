package kv

import (
	"strconv"
	"testing"

	"github.com/shoalkv/shoal/proto/resp"
)

// TestBatchWriterSplitsAtRewriteBatch: 130 two-argument elements become
// commands of 64, 64 and 2 elements, each "name key" first, in order.
func TestBatchWriterSplitsAtRewriteBatch(t *testing.T) {
	b := newBatchWriter([]byte("prefix"), "HSET", []byte("k"), 2, 130)
	for i := range 130 {
		b.add([]byte("f"+strconv.Itoa(i)), []byte("v"))
	}
	buf := b.dst[len("prefix"):]
	var p resp.Parser
	next := 0
	for _, want := range []int{64, 64, 2} {
		args, n, err := p.Parse(buf)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		if len(args) != 2+2*want || string(args[0]) != "HSET" || string(args[1]) != "k" {
			t.Fatalf("command of %d args %q..., want HSET k and %d pairs", len(args), args[:2], want)
		}
		for j := 2; j < len(args); j += 2 {
			if string(args[j]) != "f"+strconv.Itoa(next) {
				t.Fatalf("field %q, want f%d", args[j], next)
			}
			next++
		}
		buf = buf[n:]
	}
	if len(buf) != 0 {
		t.Fatalf("%d bytes left after three commands", len(buf))
	}
}
