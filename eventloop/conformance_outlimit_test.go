package eventloop_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
)

// Per-connection output limits (Conn.SetOutputLimit), as a pub/sub server
// uses them: the server pushes to a peer that asked for nothing and does
// not read.

// dialSlow connects with a small receive buffer, so that what the peer
// does not read piles up on the server, not in the kernel.
func dialSlow(t testing.TB, s *eventloop.Server) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if eventloop.ServesTLS(s) {
		_, client := eventloop.TestTLS(t)
		tc := tls.Client(c, client)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		tc.SetDeadline(time.Time{})
		return tc
	}
	return c
}

// push writes messages first to first+n-1, of size bytes each, to c from
// another goroutine, the way a publisher on another loop reaches a
// subscriber: through Execute. Message i is i's last digit repeated, then
// '\n'. It stops early once c is closed and returns how many it handed
// over.
func push(c *eventloop.Conn, first, n, size int) int {
	for i := first; i < first+n; i++ {
		msg := message(i, size)
		if err := c.Execute(func(c *eventloop.Conn) { c.Write(msg) }); err != nil {
			return i - first
		}
	}
	return n
}

func message(i, size int) []byte {
	d := []byte(fmt.Sprint(i % 10))
	return append(bytes.Repeat(d, size-1), '\n')
}

func TestConformanceOutputLimitHard(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		const hard, size = 2 << 20, 100 << 10
		rec := newRecorder()
		limit := eventloop.NewOutputLimit(hard, 0, 0)
		s := e.start(t, lines{rec}, eventloop.Options{SocketSendBuffer: 8192})
		peer := dialSlow(t, s)
		c := <-rec.conns
		if err := c.Execute(func(c *eventloop.Conn) { c.SetOutputLimit(limit) }); err != nil {
			t.Fatal(err)
		}
		pushed := push(c, 0, 1000, size) // 100 MB if nothing stopped it
		eventually(t, "the stalled peer is closed", func() bool { return len(rec.CloseErrs()) == 1 })
		err := rec.CloseErrs()[0]
		if !errors.Is(err, eventloop.ErrOutputLimit) || !strings.Contains(err.Error(), fmt.Sprintf("hard limit %d", hard)) {
			t.Fatalf("OnClose got %v, want ErrOutputLimit naming the hard limit %d", err, hard)
		}
		if pushed == 1000 {
			t.Errorf("all %d pushes were accepted: the close came after 100 MB", pushed)
		}
		var pending int
		if m := regexp.MustCompile(`(\d+) bytes pending`).FindStringSubmatch(err.Error()); m != nil {
			pending, _ = strconv.Atoi(m[1])
		}
		if pending <= hard || pending > hard+size {
			t.Errorf("closed at %d bytes pending, want just past the hard limit %d (one message is %d)", pending, hard, size)
		}
		_ = peer
	})
}

func TestConformanceOutputLimitSoft(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		const soft, size, softFor = 1 << 20, 64 << 10, 300 * time.Millisecond
		rec := newRecorder()
		limit := eventloop.NewOutputLimit(0, soft, softFor)
		s := e.start(t, lines{rec}, eventloop.Options{SocketSendBuffer: 8192})
		dialSlow(t, s)
		c := <-rec.conns
		c.Execute(func(c *eventloop.Conn) { c.SetOutputLimit(limit) })
		// Above the soft limit at once, then a message every 20 ms: the
		// close must wait out softFor, then come.
		start := time.Now()
		push(c, 0, 2*soft/size, size)
		for len(rec.CloseErrs()) == 0 && time.Since(start) < 10*time.Second {
			push(c, 0, 1, size)
			time.Sleep(20 * time.Millisecond)
		}
		took := time.Since(start)
		errs := rec.CloseErrs()
		if len(errs) != 1 {
			t.Fatalf("not closed 10 s over the soft limit (closes: %v)", errs)
		}
		if !errors.Is(errs[0], eventloop.ErrOutputLimit) || !strings.Contains(errs[0].Error(), "soft limit") {
			t.Fatalf("OnClose got %v, want ErrOutputLimit naming the soft limit", errs[0])
		}
		if took < softFor {
			t.Errorf("closed %v after passing the soft limit, before its %v", took, softFor)
		}
	})
}

// A peer that stays under the soft limit, or dips under it in time, is
// not closed; and Set on a shared OutputLimit reaches connections already
// using it.
func TestConformanceOutputLimitSetApplies(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		const size = 64 << 10
		rec := newRecorder()
		limit := eventloop.NewOutputLimit(0, 0, 0) // no limit at all
		s := e.start(t, lines{rec}, eventloop.Options{SocketSendBuffer: 8192, OutputHardLimit: 1 << 20, OutputHighWater: 512 << 10})
		peer := dialSlow(t, s)
		c := <-rec.conns
		c.Execute(func(c *eventloop.Conn) { c.SetOutputLimit(limit) })
		push(c, 0, 64, size) // 4 MiB: past Options.OutputHardLimit, which no longer applies
		time.Sleep(100 * time.Millisecond)
		push(c, 64, 1, size)
		time.Sleep(100 * time.Millisecond)
		if errs := rec.CloseErrs(); len(errs) != 0 {
			t.Fatalf("closed under an OutputLimit of 0 (none): %v", errs)
		}
		// Everything arrives, in order.
		done := make(chan error, 1)
		go func() {
			buf := make([]byte, size)
			for i := 0; i < 65; i++ {
				if _, err := io.ReadFull(peer, buf); err != nil {
					done <- err
					return
				}
				if !bytes.Equal(buf, message(i, size)) {
					done <- fmt.Errorf("message %d damaged or out of order", i)
					return
				}
			}
			done <- nil
		}()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		limit.Set(256<<10, 0, 0)
		push(c, 0, 40, size)
		eventually(t, "a Set hard limit closes the stalled peer", func() bool { return len(rec.CloseErrs()) == 1 })
		if err := rec.CloseErrs()[0]; !errors.Is(err, eventloop.ErrOutputLimit) {
			t.Fatalf("OnClose got %v, want ErrOutputLimit", err)
		}
	})
}

// OutputBacklog reports, from any goroutine, what a slow peer has not
// taken, and drops to 0 once it has read everything.
func TestConformanceOutputBacklog(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		const n, size = 100, 100 << 10
		rec := newRecorder()
		s := e.start(t, lines{rec}, eventloop.Options{SocketSendBuffer: 8192})
		peer := dialSlow(t, s)
		c := <-rec.conns
		push(c, 0, n, size)
		eventually(t, "the backlog shows the unread output", func() bool { return c.OutputBacklog() > n*size/2 })
		buf := make([]byte, size)
		peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		for i := 0; i < n; i++ {
			if _, err := io.ReadFull(peer, buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, message(i, size)) {
				t.Fatalf("message %d damaged or out of order", i)
			}
		}
		eventually(t, "the backlog is empty once read", func() bool { return c.OutputBacklog() == 0 })
		// What a loop keeps mapped once its slow readers are gone is
		// its few chunks for reuse (8 of 64 KiB), and some freed.
		var mapped, freed int64
		for _, k := range s.Counters() {
			mapped += k.OutputBacklog
			freed += k.OutputBacklogFreed
		}
		if mapped > 8*64<<10*int64(len(s.Counters())) {
			t.Errorf("%d bytes of backlog chunks still mapped after the peer read everything", mapped)
		}
		if freed < n*size/2 {
			t.Errorf("%d bytes of backlog given back after the peer read %d", freed, n*size)
		}
	})
}
