package kv_test

import (
	"bytes"
	"io"
	"net"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// benchPipeline sends b.N copies of req in pipelined batches over a real
// loopback connection to an in-process server and reads back exactly the
// expected replies. The client side allocates nothing, so allocs/op is the
// server's (handler, store and eventloop) per request.
func benchPipeline(b *testing.B, setup []string, req, reply []byte) {
	srv := startShoal(b, kv.Options{}, eventloop.Options{Loops: 1})
	conn, err := net.Dial("tcp", srv.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	for _, cmd := range setup {
		if _, err := conn.Write([]byte(cmd)); err != nil {
			b.Fatal(err)
		}
		var line [64]byte
		if _, err := conn.Read(line[:]); err != nil {
			b.Fatal(err)
		}
	}
	const depth = 64
	batch := bytes.Repeat(req, depth)
	want := bytes.Repeat(reply, depth)
	got := make([]byte, len(want))
	run := func(n int) {
		if _, err := conn.Write(batch[:n*len(req)]); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, got[:n*len(reply)]); err != nil {
			b.Fatal(err)
		}
	}
	run(depth) // warm up buffers and the store
	if !bytes.Equal(got, want) {
		b.Fatalf("reply %q, want %q", got[:len(reply)], reply)
	}
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += depth {
		run(min(depth, b.N-done))
	}
}

func BenchmarkGET(b *testing.B) {
	benchPipeline(b, []string{"*3\r\n$3\r\nSET\r\n$7\r\nkey:001\r\n$5\r\nvalue\r\n"},
		[]byte("*2\r\n$3\r\nGET\r\n$7\r\nkey:001\r\n"), []byte("$5\r\nvalue\r\n"))
}

func BenchmarkSET(b *testing.B) {
	benchPipeline(b, nil,
		[]byte("*3\r\n$3\r\nSET\r\n$7\r\nkey:001\r\n$5\r\nvalue\r\n"), []byte("+OK\r\n"))
}

func BenchmarkGETLowerCase(b *testing.B) {
	benchPipeline(b, []string{"*3\r\n$3\r\nSET\r\n$7\r\nkey:001\r\n$5\r\nvalue\r\n"},
		[]byte("*2\r\n$3\r\nget\r\n$7\r\nkey:001\r\n"), []byte("$5\r\nvalue\r\n"))
}

func BenchmarkSETWithEX(b *testing.B) {
	benchPipeline(b, nil,
		[]byte("*5\r\n$3\r\nSET\r\n$7\r\nkey:001\r\n$5\r\nvalue\r\n$2\r\nEX\r\n$3\r\n100\r\n"), []byte("+OK\r\n"))
}

func BenchmarkMGET2(b *testing.B) {
	benchPipeline(b, []string{"*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		[]byte("*3\r\n$4\r\nMGET\r\n$1\r\na\r\n$1\r\nb\r\n"), []byte("*2\r\n$1\r\n1\r\n$1\r\n2\r\n"))
}
