package eventloop

import (
	"testing"
	"time"
)

// drainGreeter is lineEcho that says "bye" when Shutdown begins.
type drainGreeter struct{ lineEcho }

func (h *drainGreeter) OnDrain(c *Conn) { c.Write([]byte("bye\n")) }

// TestOnDrainWritesBeforeTheClose: Shutdown calls OnDrain for an open
// connection; what it writes reaches the peer, and a request sent just
// before is still answered, then the connection closes cleanly.
func TestOnDrainWritesBeforeTheClose(t *testing.T) {
	h := &drainGreeter{}
	s := newStartedServer(t, h, Options{})
	c := dialRaw(t, s)
	r := newLineReader(c)
	c.Write([]byte("hi\n"))
	if l, err := r.line(); err != nil || l != "hi" {
		t.Fatalf("echo: %q %v", l, err)
	}
	shut := shutdownInBackground(s, 20*time.Second)
	if l, err := r.line(); err != nil || l != "bye" {
		t.Fatalf("after Shutdown began: %q %v, want \"bye\\n\"", l, err)
	}
	expectEOF(t, c)
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}
