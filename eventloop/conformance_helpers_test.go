package eventloop_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
)

// The conformance suite runs every promise of the package's documentation
// against every engine. Where an engine cannot keep a promise, its test
// skips on that engine with the reason, which the engine's package
// documentation also gives.

type engineCase struct {
	name   string
	engine eventloop.Engine
}

var engines = []engineCase{
	{"native", nil},
	{"gnet", gnetengine.Engine{}},
}

// forEachEngine runs test once per engine, as a subtest named for it.
func forEachEngine(t *testing.T, test func(t *testing.T, e engineCase)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { test(t, e) })
	}
}

// skipOn skips the test on the named engine, with the reason.
func (e engineCase) skipOn(t *testing.T, name, reason string) {
	t.Helper()
	if e.name == name {
		t.Skip(reason)
	}
}

// start starts h on e at a loopback port and shuts it down with the test.
func (e engineCase) start(t testing.TB, h eventloop.Handler, o eventloop.Options) *eventloop.Server {
	t.Helper()
	s := e.newServer(t, h, o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s
}

// newServer starts h on e without arranging its shutdown.
func (e engineCase) newServer(t testing.TB, h eventloop.Handler, o eventloop.Options) *eventloop.Server {
	t.Helper()
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Loops == 0 {
		o.Loops = 2
	}
	o.Engine = e.engine
	s, err := eventloop.NewServer(h, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

func dialServer(t testing.TB, s *eventloop.Server) net.Conn {
	t.Helper()
	c, err := net.DialTimeout(s.Addr().Network(), s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readFull(t testing.TB, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	return buf
}

// eventually polls cond until it holds or fails the test after 20 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
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

// recorder keeps what OnOpen and OnClose saw, and hands each new *Conn to
// the test.
type recorder struct {
	mu     sync.Mutex
	closed []error
	conns  chan *eventloop.Conn
	greet  string
}

func newRecorder() *recorder { return &recorder{conns: make(chan *eventloop.Conn, 64)} }

func (r *recorder) OnOpen(c *eventloop.Conn) {
	if r.greet != "" {
		c.WriteString(r.greet)
	}
	select {
	case r.conns <- c:
	default:
	}
}

func (r *recorder) OnClose(c *eventloop.Conn, err error) {
	r.mu.Lock()
	r.closed = append(r.closed, err)
	r.mu.Unlock()
}

func (r *recorder) closeErrs() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.closed...)
}

// lines echoes each '\n'-terminated line, leaving a partial one
// unconsumed; "QUIT" closes the connection.
type lines struct{ *recorder }

func (h lines) OnTraffic(c *eventloop.Conn, in []byte) int {
	consumed := 0
	for {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			return consumed
		}
		line := in[consumed : consumed+i+1]
		consumed += i + 1
		if string(line) == "QUIT\n" {
			c.Close()
			return consumed
		}
		c.Write(line)
	}
}

// kilo answers each '\n'-terminated request with a 1 KiB line starting
// with the request, stops consuming while the output is full, and closes
// on "QUIT": replies far bigger than requests, like GETs of 1 KB values.
type kilo struct {
	*recorder
	maxPending atomic.Int64
}

const kiloSize = 1024

func (h *kilo) OnTraffic(c *eventloop.Conn, in []byte) int {
	consumed := 0
	for !c.OutputFull() {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			break
		}
		req := in[consumed : consumed+i]
		consumed += i + 1
		if string(req) == "QUIT" {
			c.Close()
			break
		}
		out := c.OutputBuffer()
		if out == nil {
			break
		}
		out = append(out, req...)
		for k := len(req); k < kiloSize-1; k++ {
			out = append(out, '.')
		}
		c.SetOutputBuffer(append(out, '\n'))
		if p := int64(c.OutboundBuffered()); p > h.maxPending.Load() {
			h.maxPending.Store(p)
		}
	}
	return consumed
}

func kiloRequests(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "r%d\n", i)
	}
	return b.Bytes()
}

// readKilo reads the n replies to kiloRequests(n) in order, then expects
// a clean EOF. It reports with t.Errorf, so any goroutine may call it.
func readKilo(t *testing.T, c net.Conn, n int) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	rd := bufio.NewReaderSize(c, 64<<10)
	line := make([]byte, kiloSize)
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(rd, line); err != nil {
			t.Errorf("reply %d of %d: %v", i, n, err)
			return
		}
		if want := fmt.Sprintf("r%d.", i); !bytes.HasPrefix(line, []byte(want)) || line[kiloSize-1] != '\n' {
			t.Errorf("reply %d of %d is %q..., want it to start %q", i, n, line[:20], want)
			return
		}
	}
	rest, err := io.ReadAll(rd)
	if err != nil {
		t.Errorf("after all %d replies: %v (want a clean EOF, not a reset)", n, err)
	} else if len(rest) > 0 {
		t.Errorf("%d bytes after the last reply", len(rest))
	}
}

// stall blocks c's loop in an Execute until release is called.
func stall(t *testing.T, c *eventloop.Conn) (release func()) {
	t.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	if err := c.Execute(func(*eventloop.Conn) { close(entered); <-gate }); err != nil {
		t.Fatal(err)
	}
	<-entered
	return func() { close(gate) }
}
