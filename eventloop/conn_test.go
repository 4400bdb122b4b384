package eventloop

import (
	"testing"
	"unsafe"
)

// TestConnFitsItsSizeClass holds a Conn to the 160-byte size class: each
// open connection has one, so eight bytes more is the next class, 176,
// at every one of 100k connections (BenchmarkIdleConnMemory).
func TestConnFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n > 160 {
		t.Fatalf("Conn is %d bytes; keep it within the 160-byte size class", n)
	}
}

// BenchmarkConnReply is the per-request work a handler does on a native
// Conn, without a socket: append a reply to the output buffer, hand it
// back, look at backpressure, and a small Write. The socket benchmarks
// hide a few nanoseconds here in their noise; this one shows them.
func BenchmarkConnReply(b *testing.B) {
	opts, err := Options{Addr: "127.0.0.1:0"}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	l := &loop{srv: &Server{opts: opts}, outBufs: bufCache{pool: &outboundPool}}
	c := &Conn{eng: l, fd: -1, flags: flagReading}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		out := c.OutputBuffer()
		out = append(out, "+PONG\r\n"...)
		c.SetOutputBuffer(out)
		if c.OutputFull() {
			b.Fatal("output full")
		}
		if _, err := c.WriteString("+OK\r\n"); err != nil {
			b.Fatal(err)
		}
		if c.OutboundBuffered() > 32<<10 {
			c.out.B, c.outPos = c.out.B[:0], 0 // as if the loop wrote it
		}
	}
}
