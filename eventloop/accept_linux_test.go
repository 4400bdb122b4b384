package eventloop

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestReusePortListenersPerLoop(t *testing.T) {
	s := startServer(t, &lineEcho{}, Options{ReusePort: true, Loops: 2})
	const n = 200
	cs := make([]net.Conn, n)
	for i := range cs {
		cs[i] = dial(t, s)
	}
	waitFor(t, "all registered", func() bool { return s.NumConns() == n })
	for i, st := range s.Counters() {
		if st.Conns == 0 {
			t.Fatalf("loop %d accepted nothing: %+v", i, s.Counters())
		}
	}
	for i, c := range cs {
		msg := []byte(strconv.Itoa(i) + "\n")
		c.Write(msg)
		if got := readN(t, c, len(msg)); !bytes.Equal(got, msg) {
			t.Fatalf("conn %d got %q", i, got)
		}
	}
}

// countingLog counts the log records whose message contains substr.
type countingLog struct {
	substr string
	n      atomic.Int64
}

func (h *countingLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.substr) {
		h.n.Add(1)
	}
	return nil
}
func (h *countingLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingLog) WithGroup(string) slog.Handler      { return h }

// TestUnexpectedAcceptErrorDoesNotSpin breaks the listener so accept fails
// with EINVAL while epoll keeps reporting it readable: the acceptor must
// back off instead of retrying (and logging) in a busy loop.
func TestUnexpectedAcceptErrorDoesNotSpin(t *testing.T) {
	logs := &countingLog{substr: "accept failed"}
	s := startServer(t, &lineEcho{}, Options{Loops: 1, Logger: slog.New(logs)})
	if err := unix.Shutdown(s.sockets[0].fd, unix.SHUT_RD); err != nil {
		t.Skipf("cannot shut the listener down: %v", err)
	}
	// Wake the acceptor: a refused connection attempt is enough.
	if c, err := dialErr(s); err == nil {
		c.Close()
	}
	time.Sleep(300 * time.Millisecond)
	if n := logs.n.Load(); n == 0 || n > 5 {
		t.Fatalf("%d accept-failure log records in 300 ms, want 1 to 5 (0: the error went unseen; many: spinning)", n)
	}
}
