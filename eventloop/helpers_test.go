package eventloop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/waittest"
)

// lineEcho echoes every complete '\n'-terminated line and keeps partial
// lines for the next read.
type lineEcho struct {
	closeLog
	opened int // under closeLog.mu
}

func (h *lineEcho) OnTraffic(c *Conn, in []byte) int {
	return eachLine(in, func(line []byte) bool {
		c.Write(line)
		return true
	})
}

// eachLine calls fn with each complete '\n'-terminated line of in, the
// newline included, until fn returns false, and returns the length of the
// lines it handed over: what a line handler's OnTraffic consumed. A
// partial line is left for the next read.
func eachLine(in []byte, fn func(line []byte) bool) int {
	consumed := 0
	for {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			return consumed
		}
		line := in[consumed : consumed+i+1]
		consumed += i + 1
		if !fn(line) {
			return consumed
		}
	}
}

func (h *lineEcho) OnOpen(c *Conn) {
	h.mu.Lock()
	h.opened++
	h.mu.Unlock()
}

// closeLog is the OnClose of the tests' handlers: it keeps the error of
// each connection's close, in order.
type closeLog struct {
	mu     sync.Mutex
	closed []error
}

func (l *closeLog) OnClose(c *Conn, err error) {
	l.mu.Lock()
	l.closed = append(l.closed, err)
	l.mu.Unlock()
}

// WaitClose waits until OnClose has run once and returns the error it got.
func (l *closeLog) WaitClose(t testing.TB) error {
	t.Helper()
	waitFor(t, "OnClose", func() bool { return len(l.CloseErrs()) == 1 })
	return l.CloseErrs()[0]
}

// CloseErrs returns the errors OnClose has seen so far.
func (l *closeLog) CloseErrs() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.closed...)
}

// startServer starts h on a loopback port and shuts it down with the test.
func startServer(t testing.TB, h Handler, o Options) *Server {
	t.Helper()
	s := newStartedServer(t, h, o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s
}

// newStartedServer starts h on a loopback port (by default) and two loops
// without arranging its shutdown.
func newStartedServer(t testing.TB, h Handler, o Options) *Server {
	t.Helper()
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Loops == 0 {
		o.Loops = 2
	}
	s, err := NewServer(h, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

func dial(t testing.TB, s *Server) net.Conn {
	t.Helper()
	if s.listeners[0].tls != nil { // the conformance suite over TLS
		_, client := testTLS(t)
		return dialTLS(t, s, client)
	}
	return dialRaw(t, s)
}

// dialRaw connects to s without TLS, even to a TLS port.
func dialRaw(t testing.TB, s *Server) net.Conn {
	t.Helper()
	c, err := net.DialTimeout(s.Addr().Network(), s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// numberedLines is n requests: format, with one %d verb, for 0 to n-1.
func numberedLines(format string, n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, format, i)
	}
	return b.Bytes()
}

// shutdownInBackground starts s.Shutdown with a context that ends after
// timeout and returns where its result will arrive.
func shutdownInBackground(s *Server, timeout time.Duration) <-chan error {
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	return shut
}

// readToEOF asserts the server closed c: the rest reads to a clean EOF.
func readToEOF(t testing.TB, c net.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	rest, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("want a clean EOF, got %v after %d bytes", err, len(rest))
	}
	return rest
}

// expectTailsAfterDrain: c is draining under the Shutdown whose result
// comes on shut, its peer client not yet reading a reply of replySize bytes
// of '6' (ServeSized's). An AsyncWrite and a write inside Execute made now
// are accepted and reach the peer after that reply, before the close; after
// the Shutdown, AsyncWrite is refused.
func expectTailsAfterDrain(t testing.TB, c *Conn, client net.Conn, shut <-chan error, replySize int) {
	t.Helper()
	if err := c.AsyncWrite([]byte("async tail\n")); err != nil {
		t.Fatalf("AsyncWrite while draining: %v", err)
	}
	wrote := make(chan error, 1)
	if err := c.Execute(func(c *Conn) { _, err := c.WriteString("execute tail\n"); wrote <- err }); err != nil {
		t.Fatalf("Execute while draining: %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("Write inside Execute while draining: %v", err)
	}
	got := readToEOF(t, client)
	want := string(bytes.Repeat([]byte{'6'}, replySize-1)) + "\nasync tail\nexecute tail\n"
	if string(got) != want {
		t.Fatalf("peer got %d bytes ending %q, want %d ending with both tails", len(got), got[max(0, len(got)-40):], len(want))
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := c.AsyncWrite([]byte("x")); !errors.Is(err, ErrConnClosed) && !errors.Is(err, ErrServerClosed) {
		t.Fatalf("AsyncWrite after shutdown: %v", err)
	}
}

// readN reads exactly n bytes or fails the test after a generous deadline.
func readN(t testing.TB, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	return buf
}

// waitFor polls cond until it holds or fails the test after 20 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waittest.Until(t, 20*time.Second, what, cond)
}

// expectEOF asserts the server closed c (reads drain to EOF or reset).
func expectEOF(t testing.TB, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, bufio.NewReader(c))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection still open: %v", err)
	}
}

type lineReader struct{ r *bufio.Reader }

func newLineReader(c net.Conn) *lineReader { return &lineReader{bufio.NewReader(c)} }

func (l *lineReader) line() (string, error) {
	s, err := l.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return s[:len(s)-1], nil
}

func dialErr(s *Server) (net.Conn, error) {
	return net.DialTimeout(s.Addr().Network(), s.Addr().String(), 2*time.Second)
}
