package eventloop_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/shoalkv/shoal/eventloop"
)

// TestConformEcho: what is written in OnTraffic reaches the peer, and a
// request split at every byte is presented again with the rest appended
// (the unconsumed-rest contract).
func TestConformEcho(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		s := e.start(t, lines{newRecorder()}, eventloop.Options{})
		c := dialServer(t, s)
		req := numberedLines("line %d of the pipeline\n", 200)
		for i := 0; i < len(req); i++ {
			c.Write(req[i : i+1])
		}
		if got := readFull(t, c, len(req)); !bytes.Equal(got, req) {
			t.Fatalf("echo damaged: %q", got[:64])
		}
	})
}

// TestConformManyRequestsInOneRead: a pipeline that arrives in one read is
// answered in order, its last partial line kept for the next read.
func TestConformManyRequestsInOneRead(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		s := e.start(t, lines{newRecorder()}, eventloop.Options{})
		c := dialServer(t, s)
		req := numberedLines("%05d\n", 5000)
		c.Write(append(req, "parti"...))
		if got := readFull(t, c, len(req)); !bytes.Equal(got, req) {
			t.Fatal("replies damaged or out of order")
		}
		c.Write([]byte("al\n"))
		if got := readFull(t, c, len("partial\n")); string(got) != "partial\n" {
			t.Fatalf("the kept rest came back as %q", got)
		}
	})
}

// TestConformRepliesOfOneReadGoOutInOneWrite: 1,000 pipelined requests that
// arrive together are answered with a handful of write system calls, not
// one per reply (smart flush). The count is the process's own, from
// /proc/self/io, so it covers every engine alike.
func TestConformRepliesOfOneReadGoOutInOneWrite(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		s := e.start(t, lines{newRecorder()}, eventloop.Options{Loops: 1})
		c := dialServer(t, s)
		req := numberedLines("%04d\n", 1000)
		readFull(t, c, len(lineRoundTrip(t, c))) // warm up: the connection is registered
		before := writeSyscalls(t)
		c.Write(req)
		got := readFull(t, c, len(req))
		after := writeSyscalls(t)
		if !bytes.Equal(got, req) {
			t.Fatal("replies damaged")
		}
		// One write by the client, one or a few by the server, and what the
		// runtime writes to wake its threads: far from 1,000.
		if n := after - before; n > 50 {
			t.Fatalf("%d write system calls for 1,000 pipelined replies", n)
		}
	})
}

// lineRoundTrip sends one line and returns it, to be read back by the caller.
func lineRoundTrip(t *testing.T, c net.Conn) string {
	t.Helper()
	const l = "warm\n"
	if _, err := c.Write([]byte(l)); err != nil {
		t.Fatal(err)
	}
	return l
}

// writeSyscalls is the process's count of write system calls so far.
func writeSyscalls(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no syscw in /proc/self/io: %q", b)
	return 0
}

// TestConformGreetingAndCleanClose: output written in OnOpen is sent at
// once, and a peer that hangs up closes with a nil error.
func TestConformGreetingAndCleanClose(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		r.greet = "hello\n"
		s := e.start(t, lines{r}, eventloop.Options{})
		c := dialServer(t, s)
		if got := readFull(t, c, 6); string(got) != "hello\n" {
			t.Fatalf("greeting %q", got)
		}
		eventually(t, "NumConns 1", func() bool { return s.NumConns() == 1 })
		c.Close()
		if err := r.WaitClose(t); err != nil {
			t.Fatalf("OnClose error %v, want nil", err)
		}
		eventually(t, "NumConns 0", func() bool { return s.NumConns() == 0 })
	})
}

// TestConformUnixSocket: the "unix" network serves as "tcp" does.
func TestConformUnixSocket(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		path := filepath.Join(t.TempDir(), "s.sock")
		s := e.start(t, lines{newRecorder()}, eventloop.Options{Network: "unix", Addr: path})
		c := dialServer(t, s)
		c.Write([]byte("over unix\n"))
		if got := readFull(t, c, 10); string(got) != "over unix\n" {
			t.Fatalf("got %q", got)
		}
	})
}

// TestConformCloseDeliversRepliesDespiteUnreadInput: the handler closes
// after QUIT while the peer has sent far more. The 8,000 replies before
// QUIT (8 MiB, more than the socket buffers hold) arrive in full, then a
// clean EOF: the close waits for the output and then lingers, so the
// unread input does not turn it into a reset.
func TestConformCloseDeliversRepliesDespiteUnreadInput(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		const n = 8000
		h := &kilo{recorder: newRecorder()}
		s := e.start(t, h, eventloop.Options{Loops: 1})
		c := dialServer(t, s)
		req := append(kiloRequests(n), "QUIT\n"...)
		req = append(req, bytes.Repeat([]byte("after quit\n"), 20000)...)
		go c.Write(req)
		time.Sleep(200 * time.Millisecond) // let the output back up before reading
		readKilo(t, c, n)
		if err := h.WaitClose(t); err != nil {
			t.Fatalf("OnClose error %v, want nil", err)
		}
	})
}

// TestConformBackpressureResumesWithoutNewInput: a handler that stops
// consuming while OutputFull is presented the rest of its input once the
// output drains below the low-water mark, without the peer sending
// anything more; pending output stays within the high-water mark plus one
// reply.
func TestConformBackpressureResumesWithoutNewInput(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		const n = 4000
		h := &kilo{recorder: newRecorder()}
		s := e.start(t, h, eventloop.Options{Loops: 1, OutputHighWater: 256 << 10, OutputLowWater: 64 << 10})
		c := dialServer(t, s)
		if _, err := c.Write(kiloRequests(n)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // let the output back up
		c.Write([]byte("QUIT\n"))
		readKilo(t, c, n)
		if max, bound := h.maxPending.Load(), int64(256<<10+kiloSize); max > bound {
			t.Fatalf("pending output reached %d, want at most high water + one reply = %d", max, bound)
		}
	})
}

// TestConformSlowPeerIsHeldBackByFlowControl: above the high-water mark
// the engine stops reading the socket, so a peer that sends 16 MiB without
// reading is held back by TCP flow control, its unconsumed input never
// nears MaxInboundBuffer, and it gets every reply once it reads.
func TestConformSlowPeerIsHeldBackByFlowControl(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		e.skipOn(t, "gnet", "gnet cannot stop reading a socket: input piles up in its inbound buffer until MaxInboundBuffer closes the connection (see the gnetengine doc)")
		r := newRecorder()
		s := e.start(t, lines{r}, eventloop.Options{Loops: 1, OutputHighWater: 256 << 10, OutputLowWater: 64 << 10,
			MaxInboundBuffer: 256 << 10})
		c := dialServer(t, s)
		req := bytes.Repeat([]byte("fifteen bytes.\n"), 1<<20)
		sent := make(chan error, 1)
		go func() {
			_, err := c.Write(req)
			sent <- err
		}()
		time.Sleep(300 * time.Millisecond) // the peer does not read yet
		if got := readFull(t, c, len(req)); !bytes.Equal(got, req) {
			t.Fatal("replies damaged")
		}
		if err := <-sent; err != nil {
			t.Fatalf("sending: %v", err)
		}
		if errs := r.CloseErrs(); len(errs) != 0 {
			t.Fatalf("connection closed: %v", errs)
		}
	})
}

// TestConformOneReplyLargerThanHardLimitIsSent: a single reply bigger than
// OutputHardLimit goes out whole; the limit is for peers that do not read.
func TestConformOneReplyLargerThanHardLimitIsSent(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		const size = 3 << 20
		r := newRecorder()
		h := sizedReply{r}
		s := e.start(t, h, eventloop.Options{OutputHighWater: 512 << 10, OutputLowWater: 128 << 10, OutputHardLimit: 1 << 20})
		c := dialServer(t, s)
		c.Write([]byte(fmt.Sprintf("%d\n%d\n", size, size)))
		got := readFull(t, c, 2*size)
		if !bytes.Equal(got[:size], got[size:]) || got[size-1] != '\n' {
			t.Fatal("replies damaged")
		}
		if errs := r.CloseErrs(); len(errs) != 0 {
			t.Fatalf("connection closed: %v", errs)
		}
	})
}

// sizedReply answers a line holding a number n with n bytes, stopping
// while the output is full.
type sizedReply struct{ *recorder }

func (h sizedReply) OnTraffic(c *eventloop.Conn, in []byte) int {
	return eventloop.ServeSized(c, in, true, nil)
}

// TestConformWriteAboveHardLimitCloses: a write that finds more than
// OutputHardLimit unsent (the peer reads nothing) closes the connection
// with an error wrapping ErrOutputLimit.
func TestConformWriteAboveHardLimitCloses(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		s := e.start(t, lines{r}, eventloop.Options{OutputHighWater: 32 << 10, OutputLowWater: 8 << 10,
			OutputHardLimit: 64 << 10, SocketSendBuffer: 4096})
		client := dialServer(t, s)
		c := <-r.conns
		for i := 0; i < 2; i++ {
			if err := c.AsyncWrite(make([]byte, 16<<20)); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.WaitClose(t); !errors.Is(err, eventloop.ErrOutputLimit) {
			t.Fatalf("OnClose error %v, want ErrOutputLimit", err)
		}
		expectEOF(t, client)
	})
}

// TestConformMaxInboundBufferCloses: unconsumed input past
// MaxInboundBuffer closes the connection with ErrInboundLimit.
func TestConformMaxInboundBufferCloses(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		s := e.start(t, lines{r}, eventloop.Options{MaxInboundBuffer: 64 << 10})
		c := dialServer(t, s)
		kept := append(bytes.Repeat([]byte("k"), 60<<10), '\n') // under the limit: kept until its end arrives
		c.Write(kept[:len(kept)-1])
		c.Write(kept[len(kept)-1:])
		if got := readFull(t, c, len(kept)); !bytes.Equal(got, kept) {
			t.Fatal("a line under the limit came back damaged")
		}
		go c.Write(bytes.Repeat([]byte("x"), 256<<10)) // one line that never ends
		if err := r.WaitClose(t); !errors.Is(err, eventloop.ErrInboundLimit) || !strings.Contains(err.Error(), "limit 65536") {
			t.Fatalf("OnClose error %v, want ErrInboundLimit naming the limit", err)
		}
		expectEOF(t, c)
	})
}

// TestConformConsumingTooMuchCloses: OnTraffic returning more than it was
// given closes the connection with an error.
func TestConformConsumingTooMuchCloses(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		s := e.start(t, greedy{r}, eventloop.Options{})
		c := dialServer(t, s)
		c.Write([]byte("x"))
		if err := r.WaitClose(t); err == nil {
			t.Fatal("OnClose error nil, want the bad count")
		}
	})
}

type greedy struct{ *recorder }

func (greedy) OnTraffic(c *eventloop.Conn, in []byte) int { return len(in) + 1 }

// TestConformIdleTimeout: a silent connection is closed with
// ErrIdleTimeout while one that keeps talking stays open.
func TestConformIdleTimeout(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		// 600 ms against pings every 30 ms: room for a stalled test
		// goroutine on a loaded machine.
		s := e.start(t, lines{r}, eventloop.Options{IdleTimeout: 600 * time.Millisecond})
		idle := dialServer(t, s)
		busy := dialServer(t, s)
		stop := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(stop) {
			busy.Write([]byte("ping\n"))
			if got := readFull(t, busy, 5); string(got) != "ping\n" {
				t.Fatalf("busy got %q", got)
			}
			time.Sleep(30 * time.Millisecond)
		}
		expectEOF(t, idle)
		errs := r.CloseErrs()
		if len(errs) != 1 || !errors.Is(errs[0], eventloop.ErrIdleTimeout) {
			t.Fatalf("close errors %v, want one ErrIdleTimeout (the busy connection stays open)", errs)
		}
	})
}

// TestConformMaxConnsRejectsWithMessage: past MaxConns a connection gets
// RejectMessage and is closed, and Rejected counts it.
func TestConformMaxConnsRejectsWithMessage(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		e.skipOn(t, "native-tls", "a TLS port writes no plaintext RejectMessage, which a TLS client could not read (TestTLSMaxConnsCloses)")
		r := newRecorder()
		s := e.start(t, lines{r}, eventloop.Options{MaxConns: 1, RejectMessage: []byte("-ERR max number of clients reached\r\n")})
		first := dialServer(t, s)
		first.Write([]byte("a\n"))
		readFull(t, first, 2)
		second := dialServer(t, s)
		if got := readToEOF(t, second); string(got) != "-ERR max number of clients reached\r\n" {
			t.Fatalf("rejected connection got %q", got)
		}
		if n := s.Rejected(); n != 1 {
			t.Fatalf("Rejected %d, want 1", n)
		}
		first.Write([]byte("b\n"))
		if got := readFull(t, first, 2); string(got) != "b\n" {
			t.Fatalf("first connection got %q", got)
		}
		if s.NumConns() != 1 {
			t.Fatalf("NumConns %d, want 1", s.NumConns())
		}
		first.Close() // frees the slot for a new connection
		eventually(t, "the slot to free", func() bool { return s.NumConns() == 0 })
		again := dialServer(t, s)
		again.Write([]byte("again\n"))
		if got := readFull(t, again, 6); string(got) != "again\n" {
			t.Fatalf("a connection after the slot freed got %q", got)
		}
	})
}

// TestConformSetMaxConnsAppliesToNewConnections: SetMaxConns changes the
// limit while the server runs: raised, a connection that would have been
// refused is served; lowered below the open count, the open ones stay and
// the next is refused; Options reports the limit in force.
func TestConformSetMaxConnsAppliesToNewConnections(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		e.skipOn(t, "native-tls", "a TLS port writes no plaintext RejectMessage (TestTLSMaxConnsCloses)")
		r := newRecorder()
		s := e.start(t, lines{r}, eventloop.Options{MaxConns: 1, RejectMessage: []byte("-ERR max\r\n")})
		echo := func(c net.Conn, msg string) {
			t.Helper()
			c.Write([]byte(msg))
			if got := readFull(t, c, len(msg)); string(got) != msg {
				t.Fatalf("echo of %q: %q", msg, got)
			}
		}
		first := dialServer(t, s)
		echo(first, "1\n")
		s.SetMaxConns(3)
		if got := s.Options().MaxConns; got != 3 || s.MaxConns() != 3 {
			t.Fatalf("after SetMaxConns(3): Options().MaxConns %d, MaxConns() %d", got, s.MaxConns())
		}
		second, third := dialServer(t, s), dialServer(t, s)
		echo(second, "2\n")
		echo(third, "3\n")
		s.SetMaxConns(1)
		refused := dialServer(t, s)
		if got := readToEOF(t, refused); string(got) != "-ERR max\r\n" {
			t.Fatalf("a connection past the lowered limit got %q", got)
		}
		for _, c := range []net.Conn{first, second, third} {
			echo(c, "still\n") // open before the limit was lowered: kept
		}
		if n := s.Rejected(); n != 1 {
			t.Fatalf("Rejected %d, want 1", n)
		}
	})
}

// addrOfInput echoes and records where each OnTraffic's input starts.
type addrOfInput struct {
	*recorder
	mu    sync.Mutex
	addrs []uintptr
}

func (h *addrOfInput) OnTraffic(c *eventloop.Conn, in []byte) int {
	h.mu.Lock()
	h.addrs = append(h.addrs, uintptr(unsafe.Pointer(unsafe.SliceData(in))))
	h.mu.Unlock()
	c.Write(in)
	return len(in)
}

// TestConformInputIsASliceOfTheLoopsSharedBuffer: with nothing kept from
// an earlier read, OnTraffic's input is the loop's one read buffer, the
// same memory for every read of every connection of the loop: no copy, no
// buffer per connection.
func TestConformInputIsASliceOfTheLoopsSharedBuffer(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		h := &addrOfInput{recorder: newRecorder()}
		s := e.start(t, h, eventloop.Options{Loops: 1})
		a, b := dialServer(t, s), dialServer(t, s)
		for i, c := range []net.Conn{a, b, a, b} {
			msg := fmt.Sprintf("message %d\n", i)
			c.Write([]byte(msg))
			if got := readFull(t, c, len(msg)); string(got) != msg {
				t.Fatalf("got %q", got)
			}
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.addrs) != 4 {
			t.Fatalf("%d deliveries for 4 single-read messages", len(h.addrs))
		}
		for i, p := range h.addrs {
			if p != h.addrs[0] {
				t.Fatalf("delivery %d at %#x, delivery 0 at %#x: not the one shared buffer", i, p, h.addrs[0])
			}
		}
	})
}

// TestConformReusePortSpreadsOverEveryLoop: with ReusePort each loop
// accepts on its own listener; 200 connections reach every loop and are
// all served.
func TestConformReusePortSpreadsOverEveryLoop(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		l, err := net.Listen("tcp", "127.0.0.1:0") // an explicit port: see the gnetengine doc
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		s := e.start(t, lines{newRecorder()}, eventloop.Options{Addr: addr, ReusePort: true, Loops: 2})
		const n = 200
		cs := make([]net.Conn, n)
		for i := range cs {
			cs[i] = dialServer(t, s)
		}
		for i, c := range cs {
			msg := []byte(strconv.Itoa(i) + "\n")
			c.Write(msg)
			if got := readFull(t, c, len(msg)); !bytes.Equal(got, msg) {
				t.Fatalf("conn %d got %q", i, got)
			}
		}
		for i, st := range s.Counters() {
			if st.Conns == 0 {
				t.Fatalf("loop %d accepted nothing: %+v", i, s.Counters())
			}
		}
	})
}
