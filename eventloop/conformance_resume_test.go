package eventloop_test

import (
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
)

// parker echoes lines like lines, but a "PARK" line makes it stop
// consuming: the rest of the input stays with the connection until
// another goroutine unparks it, as a client blocked on BLPOP keeps its
// pipeline.
type parker struct {
	mu       sync.Mutex
	parked   map[*eventloop.Conn]bool
	presents int // OnTraffic calls while parked
	conns    chan *eventloop.Conn
}

func (h *parker) OnTraffic(c *eventloop.Conn, in []byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parked[c] {
		h.presents++
		return 0
	}
	return eachLine(in, func(line []byte) bool {
		if string(line) == "PARK\n" {
			h.parked[c] = true
			h.conns <- c
			return false
		}
		c.Write(line)
		return true
	})
}

// unpark runs on c's loop: the reply the parked request waited for, then
// the buffered rest.
func (h *parker) unpark(c *eventloop.Conn) {
	h.mu.Lock()
	delete(h.parked, c)
	h.mu.Unlock()
	c.Write([]byte("UNPARKED\n"))
	c.Resume()
}

// TestConformResumePresentsBufferedInput: input left unconsumed while the
// handler waits is presented again by Resume from an Execute function,
// with no new bytes from the peer; bytes that arrive while parked join it.
func TestConformResumePresentsBufferedInput(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		h := &parker{parked: map[*eventloop.Conn]bool{}, conns: make(chan *eventloop.Conn, 4)}
		s := e.start(t, h, eventloop.Options{})
		c := dialServer(t, s)
		c.Write([]byte("a\nPARK\nb\nc\n"))
		var conn *eventloop.Conn
		select {
		case conn = <-h.conns:
		case <-time.After(10 * time.Second):
			t.Fatal("never parked")
		}
		if got := readFull(t, c, 2); string(got) != "a\n" {
			t.Fatalf("before parking: %q", got)
		}
		c.Write([]byte("d\n")) // arrives while parked: kept, not answered
		eventually(t, "the parked handler sees the new bytes", func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.presents > 0
		})
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if n, _ := c.Read(make([]byte, 16)); n != 0 {
			t.Fatal("answered while parked")
		}
		c.SetReadDeadline(time.Time{})
		if err := conn.Execute(h.unpark); err != nil {
			t.Fatal(err)
		}
		want := "UNPARKED\nb\nc\nd\n"
		if got := readFull(t, c, len(want)); string(got) != want {
			t.Fatalf("after Resume: %q, want %q", got, want)
		}
		// Parked again with nothing buffered: Resume has nothing to present.
		c.Write([]byte("PARK\n"))
		conn = <-h.conns
		conn.Execute(h.unpark)
		c.Write([]byte("e\n"))
		if got := readFull(t, c, len("UNPARKED\ne\n")); string(got) != "UNPARKED\ne\n" {
			t.Fatalf("second round: %q", got)
		}
	})
}
