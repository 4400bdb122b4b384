package eventloop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

func TestIdleTimeoutClosesOnlyIdleConnections(t *testing.T) {
	// The busy client must never pause for a whole timeout; on a loaded
	// machine (a descheduled test goroutine) it may, and then the test
	// runs again with a longer timeout instead of failing.
	for timeout := 300 * time.Millisecond; ; timeout *= 4 {
		maxGap, ok := idleTimeoutRun(t, timeout)
		if ok {
			return
		}
		if maxGap < timeout/2 {
			t.Fatalf("the busy connection was closed though it never paused more than %v (timeout %v)", maxGap, timeout)
		}
		if timeout > 10*time.Second {
			t.Fatalf("the busy client kept pausing for a whole timeout (%v of %v)", maxGap, timeout)
		}
		t.Logf("the busy client paused %v, near the timeout %v: again with a longer one", maxGap, timeout)
	}
}

// idleTimeoutRun serves an idle and a busy connection for three idle
// timeouts; the idle one must close with ErrIdleTimeout, the busy one stay
// open. ok false reports the busy one closed, with its longest pause.
func idleTimeoutRun(t *testing.T, timeout time.Duration) (maxGap time.Duration, ok bool) {
	h := &lineEcho{}
	s := newStartedServer(t, h, Options{IdleTimeout: timeout, Loops: 1})
	defer s.Shutdown(context.Background())
	idle := dialRaw(t, s)
	busy := dialRaw(t, s)
	start, last := time.Now(), time.Now()
	for time.Since(start) < 3*timeout {
		maxGap = max(maxGap, time.Since(last))
		last = time.Now()
		busy.SetDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 5)
		if _, err := busy.Write([]byte("ping\n")); err != nil {
			return maxGap, false
		}
		if _, err := io.ReadFull(busy, buf); err != nil || string(buf) != "ping\n" {
			return maxGap, false
		}
		time.Sleep(timeout / 6)
	}
	expectEOF(t, idle)
	if errs := h.CloseErrs(); len(errs) != 1 || !errors.Is(errs[0], ErrIdleTimeout) {
		if len(errs) == 2 { // the busy one too: it paused
			return maxGap, false
		}
		t.Fatalf("close errors %v, want one ErrIdleTimeout", errs)
	}
	busy.Write([]byte("still\n"))
	if got := string(readN(t, busy, 6)); got != "still\n" {
		t.Fatalf("busy got %q after the idle one closed", got)
	}
	return maxGap, true
}

type shutdownRecorder struct {
	lineEcho
	received chan struct{}
	shutdown chan struct{}
}

func (h *shutdownRecorder) OnTraffic(c *Conn, in []byte) int {
	select {
	case h.received <- struct{}{}:
	default:
	}
	return h.lineEcho.OnTraffic(c, in)
}

func (h *shutdownRecorder) OnShutdown() { close(h.shutdown) }

func TestShutdownAnswersWhatItReceived(t *testing.T) {
	h := &shutdownRecorder{received: make(chan struct{}, 1), shutdown: make(chan struct{})}
	s, err := NewServer(h, Options{Addr: "127.0.0.1:0", Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	waitFor(t, "listening", func() bool { return s.Addr() != nil })
	c := dial(t, s)
	req := numberedLines("line %d\n", 2000)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	<-h.received
	shut := shutdownInBackground(s, 10*time.Second)
	if got := readN(t, c, len(req)); !bytes.Equal(got, req) {
		t.Fatal("replies to requests sent before shutdown are missing or damaged")
	}
	expectEOF(t, c)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve returned %v after a graceful shutdown", err)
	}
	select {
	case <-h.shutdown:
	default:
		t.Fatal("OnShutdown not called")
	}
	if errs := h.CloseErrs(); len(errs) != 1 || errs[0] != nil {
		t.Fatalf("close errors %v, want one nil", errs)
	}
	if _, err := dialErr(s); err == nil {
		t.Fatal("server still accepts after Shutdown")
	}
}

// bootRecorder remembers the Server its OnBoot was given.
type bootRecorder struct {
	lineEcho
	booted *Server
}

func (h *bootRecorder) OnBoot(s *Server) { h.booted = s }

// TestOnBootGetsTheServer: OnBoot is given the Server that calls it.
func TestOnBootGetsTheServer(t *testing.T) {
	h := &bootRecorder{}
	s := startServer(t, h, Options{})
	if h.booted != s {
		t.Fatalf("OnBoot got %p, want the server %p", h.booted, s)
	}
}

func TestOnTrafficConsumingTooMuchCloses(t *testing.T) {
	h := &badHandler{}
	s := startServer(t, h, Options{})
	c := dial(t, s)
	c.Write([]byte("abc"))
	expectEOF(t, c)
}

type badHandler struct{}

func (badHandler) OnTraffic(c *Conn, in []byte) int { return len(in) + 1 }

// TestShutdownAnswersEverythingInTheSocketBuffer: requests that reached the
// server's socket before Shutdown began are answered even when they are far
// more than one read cycle takes (8 reads of the 64 KiB loop buffer).
func TestShutdownAnswersEverythingInTheSocketBuffer(t *testing.T) {
	h := &connCatcher{conns: make(chan *Conn, 1)}
	s := startServer(t, h, Options{Loops: 1, SocketRecvBuffer: 4 << 20})
	client := dial(t, s)
	client.(*net.TCPConn).SetWriteBuffer(4 << 20)
	c := <-h.conns
	var req bytes.Buffer
	for i := 0; req.Len() < 2<<20; i++ {
		fmt.Fprintf(&req, "request number %d\n", i)
	}

	release := stallLoop(t, c)
	written := make(chan error, 1)
	go func() { _, err := client.Write(req.Bytes()); written <- err }()
	select {
	case err := <-written:
		if err != nil {
			release()
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		release()
		t.Fatal("2 MiB did not fit in the socket buffers while the loop was stalled")
	}
	replies := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(client); replies <- b }()
	shut := shutdownInBackground(s, 10*time.Second)
	time.Sleep(50 * time.Millisecond) // let Shutdown queue behind the stall
	release()
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got := <-replies; !bytes.Equal(got, req.Bytes()) {
		t.Fatalf("got %d of %d reply bytes", len(got), req.Len())
	}
}
