package kv

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/shoalkv/shoal/store"
)

// benchExecute drives the handler's parse-dispatch-reply path without
// sockets, so the per-command cost of kv itself is not buried in syscall
// time: depth copies of req are executed per batch, as one read of a
// pipelining client would deliver them. Depth 1 is a non-pipelining client
// (redis-benchmark -P 1), where per-batch work counts fully.
func benchExecute(b *testing.B, setup, req, reply string, depth int) {
	benchExecuteAs(b, nil, setup, req, reply, depth)
}

// benchExecuteAs is benchExecute with the client prepared by as (nil: a
// client of no user, which no ACL check concerns).
func benchExecuteAs(b *testing.B, as func(*Handler, *client), setup, req, reply string, depth int) {
	h := benchHandler(b)
	cl := benchClient(h)
	if as != nil {
		as(h, cl)
	}
	if setup != "" {
		h.execute(cl, []byte(setup))
	}
	in := bytes.Repeat([]byte(req), depth)
	cl.out = make([]byte, 0, 64<<10)
	if n := h.execute(cl, in); n != len(in) || string(cl.out) != string(bytes.Repeat([]byte(reply), depth)) {
		b.Fatalf("consumed %d of %d, replies %q", n, len(in), cl.out)
	}
	// This machine is shared, so wall time per op swings by ±50%; the
	// thread's own CPU time does not count the time other processes held
	// the core, and is reported beside it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := threadCPU()
	for done := 0; done < b.N; done += depth {
		cl.out = cl.out[:0]
		h.onBatch(cl, in)
	}
	if cpu := threadCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}

// benchHandler is a Handler on a store without active expiry, closed when
// the benchmark ends.
func benchHandler(b *testing.B) *Handler {
	st := store.New(store.Options{ActiveExpireInterval: -1})
	b.Cleanup(st.Close)
	h := New(st, Options{})
	b.Cleanup(h.Close)
	return h
}

// benchClient is an authenticated RESP2 client of h, with h's limits.
func benchClient(h *Handler) *client {
	cl := &client{h: h, proto: 2, authed: true}
	cl.parser.Limits = &h.opts.Limits
	return cl
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

// BenchmarkCommandLookup compares the dispatch index with the name map it
// replaced on the request path, on names as clients send them.
func BenchmarkCommandLookup(b *testing.B) {
	names := [][]byte{[]byte("GET"), []byte("set"), []byte("INCRBY"), []byte("Client"), []byte("nosuchcmd")}
	b.Run("map", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sinkCommand = lookupName(commands, names[i%len(names)])
		}
	})
	b.Run("index", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sinkCommand = dispatchIdx.find(names[i%len(names)])
		}
	})
}

var sinkCommand *command

// BenchmarkExecuteGET1Parallel runs non-pipelined GETs from one client per
// goroutine, as the loops do: any state they all write per request (a
// shared counter) shows up here as cache-line contention.
func BenchmarkExecuteGET1Parallel(b *testing.B) {
	h := benchHandler(b)
	h.execute(benchClient(h), []byte(setReq))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		cl := benchClient(h)
		cl.out = make([]byte, 0, 4096)
		in := []byte(getReq)
		ran := false
		for pb.Next() {
			cl.out = cl.out[:0]
			h.onBatch(cl, in)
			ran = true
		}
		if ran && string(cl.out) != getReply {
			b.Errorf("reply %q", cl.out)
		}
	})
}

func BenchmarkExecuteMGET2(b *testing.B) {
	benchExecute(b, "*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
		"*3\r\n$4\r\nMGET\r\n$1\r\na\r\n$1\r\nb\r\n", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", 1)
}

// BenchmarkExecuteGET16K reads a 16 KiB value, where moving the value to
// make room for its header would cost as much as copying it out.
func BenchmarkExecuteGET16K(b *testing.B) {
	val := bytes.Repeat([]byte("v"), 16<<10)
	setup := "*3\r\n$3\r\nSET\r\n$7\r\nkey:001\r\n$16384\r\n" + string(val) + "\r\n"
	benchExecute(b, setup, getReq, "$16384\r\n"+string(val)+"\r\n", 1)
}
