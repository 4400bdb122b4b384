package eventloop

import (
	"net"
	"testing"
	"time"
)

// TestReservedReplySurvivesPeerHalfClose: the handler reserves, the peer
// half-closes, and only then does another goroutine hand the reply over
// with ExecuteReserved: the connection waited for it, so the peer gets it
// before the close.
func TestReservedReplySurvivesPeerHalfClose(t *testing.T) {
	h, client, c := startCaught(t, Options{Loops: 1})
	reserved := make(chan error, 1)
	if err := c.Execute(func(c *Conn) { reserved <- c.Reserve() }); err != nil {
		t.Fatal(err)
	}
	if err := <-reserved; err != nil {
		t.Fatalf("Reserve on an open conn: %v", err)
	}
	client.(*net.TCPConn).CloseWrite()
	time.Sleep(50 * time.Millisecond) // let the loop see the FIN; the close must wait anyway
	if err := c.ExecuteReserved(func(c *Conn) { c.WriteString("late reply\n") }); err != nil {
		t.Fatalf("ExecuteReserved: %v", err)
	}
	got := readToEOF(t, client)
	if string(got) != "late reply\n" {
		t.Fatalf("peer got %q, want the reserved reply", got)
	}
	waitFor(t, "OnClose", func() bool { return len(h.CloseErrs()) == 1 })
	if err := c.Reserve(); err == nil {
		t.Fatal("Reserve after the close succeeded")
	}
}
