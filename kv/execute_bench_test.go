package kv

import (
	"bytes"
	"testing"

	"github.com/shoalkv/shoal/store"
)

// benchExecute drives the handler's parse-dispatch-reply path without
// sockets, so the per-command cost of kv itself is not buried in syscall
// time: depth copies of req are executed per batch, as one read of a
// pipelining client would deliver them. Depth 1 is a non-pipelining client
// (redis-benchmark -P 1), where per-batch work counts fully.
func benchExecute(b *testing.B, setup, req, reply string, depth int) {
	st := store.New(store.Options{ActiveExpireInterval: -1})
	defer st.Close()
	h := New(st, Options{})
	defer h.Close()
	cl := &client{h: h, proto: 2, authed: true}
	cl.parser.Limits = h.opts.Limits
	if setup != "" {
		h.execute(cl, []byte(setup))
	}
	in := bytes.Repeat([]byte(req), depth)
	cl.out = make([]byte, 0, 64<<10)
	if n := h.execute(cl, in); n != len(in) || string(cl.out) != string(bytes.Repeat([]byte(reply), depth)) {
		b.Fatalf("consumed %d of %d, replies %q", n, len(in), cl.out)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += depth {
		cl.out = cl.out[:0]
		h.onBatch(cl, in)
	}
}

const (
	setReq   = "*3\r\n$3\r\nSET\r\n$7\r\nkey:001\r\n$5\r\nvalue\r\n"
	getReq   = "*2\r\n$3\r\nGET\r\n$7\r\nkey:001\r\n"
	getReply = "$5\r\nvalue\r\n"
)

func BenchmarkExecuteGET(b *testing.B)  { benchExecute(b, setReq, getReq, getReply, 64) }
func BenchmarkExecuteSET(b *testing.B)  { benchExecute(b, "", setReq, "+OK\r\n", 64) }
func BenchmarkExecuteGET1(b *testing.B) { benchExecute(b, setReq, getReq, getReply, 1) }
func BenchmarkExecuteSET1(b *testing.B) { benchExecute(b, "", setReq, "+OK\r\n", 1) }
func BenchmarkExecuteGETLowerCase(b *testing.B) {
	benchExecute(b, setReq, "*2\r\n$3\r\nget\r\n$7\r\nkey:001\r\n", getReply, 64)
}
