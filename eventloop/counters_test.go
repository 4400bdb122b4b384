package eventloop

import (
	"testing"
	"time"
)

// TestCountersCountTraffic: bytes and calls in both directions, accepted
// connections, and idle closes show up in the loop that served them.
func TestCountersCountTraffic(t *testing.T) {
	s := startServer(t, &lineEcho{}, Options{Loops: 1, IdleTimeout: 100 * time.Millisecond})
	if s.Counters()[0].Accepted != 0 {
		t.Fatal("counters start above zero")
	}
	c := dial(t, s)
	msg := []byte("twelve bytes\n")
	for i := 0; i < 3; i++ {
		c.Write(msg)
		readN(t, c, len(msg))
	}
	// The loop counts a write once the system call returns, which may be
	// after the peer has read what it wrote: wait for the count.
	counted := func(k LoopCounters) bool {
		return k.Accepted == 1 && k.Conns == 1 && k.Reads >= 3 && k.BytesRead == 3*uint64(len(msg)) &&
			k.Writes >= 3 && k.BytesWritten == 3*uint64(len(msg))
	}
	deadline := time.Now().Add(5 * time.Second)
	for !counted(s.Counters()[0]) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if k := s.Counters()[0]; !counted(k) {
		t.Fatalf("after 3 echoes: %+v", k)
	}
	// The idle close and the open-connection count are two counters the
	// loop updates one after the other: wait for both.
	closed := func(k LoopCounters) bool { return k.IdleCloses == 1 && k.Conns == 0 }
	deadline = time.Now().Add(5 * time.Second)
	for !closed(s.Counters()[0]) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if k := s.Counters()[0]; !closed(k) {
		t.Fatalf("after the idle timeout: %+v", k)
	}
}
