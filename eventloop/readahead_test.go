package eventloop

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// aheadEcho echoes lines and checks the ReadAhead promise: what it is shown
// of a connection is exactly what the next OnTraffic of that connection is
// given.
type aheadEcho struct {
	lineEcho
	conns chan *Conn

	mu       sync.Mutex
	shown    map[*Conn][]byte // shown by ReadAhead, not yet delivered
	calls    []int            // connections per ReadAhead call
	problems []string
}

func (h *aheadEcho) OnOpen(c *Conn) { h.conns <- c }

func (h *aheadEcho) ReadAhead(conns []*Conn, ins [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, len(conns))
	for i, c := range conns {
		if _, dup := h.shown[c]; dup {
			h.problems = append(h.problems, fmt.Sprintf("fd %d shown twice before OnTraffic", c.fd))
		}
		h.shown[c] = bytes.Clone(ins[i])
	}
}

func (h *aheadEcho) OnTraffic(c *Conn, in []byte) int {
	h.mu.Lock()
	if want, ok := h.shown[c]; ok {
		delete(h.shown, c)
		if !bytes.Equal(in, want) {
			h.problems = append(h.problems, fmt.Sprintf("fd %d: shown %q, delivered %q", c.fd, want, in))
		}
	}
	h.mu.Unlock()
	return h.lineEcho.OnTraffic(c, in)
}

// TestReadAheadShowsEveryReadyConnectionOnce: with the loop stalled, eight
// clients each send a line; the next poll finds all eight ready, and
// ReadAhead is shown the eight lines in one call, each exactly what the
// connection's OnTraffic then gets; every client gets its echo.
func TestReadAheadShowsEveryReadyConnectionOnce(t *testing.T) {
	const n = 8
	h := &aheadEcho{conns: make(chan *Conn, n), shown: map[*Conn][]byte{}}
	echoReadyAtOnce(t, h, h.conns, n)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.problems) > 0 {
		t.Fatal(h.problems)
	}
	if len(h.shown) > 0 {
		t.Fatalf("shown but never delivered: %d connections", len(h.shown))
	}
	if len(h.calls) != 1 || h.calls[0] != n {
		t.Fatalf("ReadAhead calls with %v connections, want one with %d", h.calls, n)
	}
}

// panickyAhead panics in ReadAhead.
type panickyAhead struct{ aheadEcho }

func (h *panickyAhead) ReadAhead([]*Conn, [][]byte) { panic("read-ahead bug") }

// TestReadAheadPanicServesOn: a ReadAhead that panics is counted, and the
// connections it was shown are served as if it had not been called.
func TestReadAheadPanicServesOn(t *testing.T) {
	const n = 4
	h := &panickyAhead{aheadEcho{conns: make(chan *Conn, n), shown: map[*Conn][]byte{}}}
	s := echoReadyAtOnce(t, h, h.conns, n)
	if p := s.panics.Load(); p != 1 {
		t.Fatalf("%d panics counted, want 1", p)
	}
}

// echoReadyAtOnce serves h on one loop, connects n clients, and stalls the
// loop while each sends a line, until every line is in its socket: the next
// poll finds all n ready. Each client must get its line back.
func echoReadyAtOnce(t *testing.T, h Handler, opened chan *Conn, n int) *Server {
	t.Helper()
	s := startServer(t, h, Options{Loops: 1})
	clients := make([]net.Conn, n)
	conns := make([]*Conn, n)
	for i := range clients {
		clients[i] = dial(t, s)
		conns[i] = <-opened
	}
	release := stallLoop(t, conns[0])
	for i, cl := range clients {
		fmt.Fprintf(cl, "line from client %d\n", i)
	}
	for _, c := range conns {
		waitSocket(t, c.fd, unix.POLLIN, release)
	}
	release()
	for i, cl := range clients {
		got, err := bufio.NewReader(cl).ReadString('\n')
		if want := fmt.Sprintf("line from client %d\n", i); err != nil || got != want {
			t.Fatalf("client %d got %q, %v; want %q", i, got, err, want)
		}
	}
	return s
}
