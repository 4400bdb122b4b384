package tcptest

import (
	"bufio"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestServeCountsAndClosesEverything: each connection is served in its own
// goroutine with its number; Close ends the serve calls still blocked on
// their peer, closes their connections and returns only after they have
// returned; a second Close does nothing.
func TestServeCountsAndClosesEverything(t *testing.T) {
	var running atomic.Int64
	s := Serve(t, func(c net.Conn, n int64) {
		running.Add(1)
		defer running.Add(-1)
		c.Write([]byte{byte('0' + n), '\n'})
		io.Copy(io.Discard, c) // until the peer or Close ends it
	})
	var peers []net.Conn
	for want := byte('1'); want <= '3'; want++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != string(want)+"\n" {
			t.Fatalf("connection %c got %q, %v", want, line, err)
		}
		peers = append(peers, c)
	}
	if n := s.Accepted(); n != 3 {
		t.Fatalf("Accepted() = %d, want 3", n)
	}
	s.Close()
	if n := running.Load(); n != 0 {
		t.Fatalf("%d serve calls still running after Close", n)
	}
	for i, c := range peers {
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("peer %d still connected after Close", i+1)
		}
	}
	if _, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		t.Error("the listener still accepts after Close")
	}
	s.Close()
}
