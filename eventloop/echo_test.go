package eventloop

import (
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"
)

func TestPipelinedSplitAtEveryByte(t *testing.T) {
	s := startServer(t, &lineEcho{}, Options{})
	var req bytes.Buffer
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&req, "request-%02d %s\n", i, bytes.Repeat([]byte{'x'}, i))
	}
	all := req.Bytes()
	for split := 1; split < len(all); split++ {
		c := dial(t, s)
		c.(*net.TCPConn).SetNoDelay(true)
		if _, err := c.Write(all[:split]); err != nil {
			t.Fatal(err)
		}
		// Give the server a chance to see the first part alone.
		if split%37 == 0 {
			time.Sleep(time.Millisecond)
		}
		if _, err := c.Write(all[split:]); err != nil {
			t.Fatal(err)
		}
		if got := readN(t, c, len(all)); !bytes.Equal(got, all) {
			t.Fatalf("split %d: replies differ:\n got %q\nwant %q", split, got, all)
		}
		c.Close()
	}
}

func TestUnixSocketEcho(t *testing.T) {
	path := filepath.Join(t.TempDir(), "echo.sock")
	s := startServer(t, &lineEcho{}, Options{Network: "unix", Addr: path})
	c := dial(t, s)
	want := []byte("over unix\nand again\n")
	c.Write(want)
	if got := readN(t, c, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
}

// TestRepliesOfOneReadGoOutInOneWrite checks the smart flush: replies to a
// pipelined batch are gathered, not written one syscall per reply.
func TestRepliesOfOneReadGoOutInOneWrite(t *testing.T) {
	_, client, c := startCaught(t, Options{Loops: 1})
	req := numberedLines("%04d\n", 1000)
	client.Write(req)
	if got := readN(t, client, len(req)); !bytes.Equal(got, req) {
		t.Fatal("replies damaged")
	}
	writes := make(chan int)
	c.Execute(func(c *Conn) { writes <- c.eng.(*loop).writeCalls })
	if n := <-writes; n > 10 {
		t.Fatalf("%d write calls for 1000 pipelined replies", n)
	}
}
