package eventloop_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/logtest"
)

// panicky echoes lines, panics in OnTraffic on the line "boom", and in a
// function given to Execute on the line "later".
type panicky struct{ *recorder }

func (h panicky) OnTraffic(c *eventloop.Conn, in []byte) int {
	i := bytes.IndexByte(in, '\n')
	if i < 0 {
		return 0
	}
	switch string(in[:i]) {
	case "boom":
		panic("boom in OnTraffic")
	case "later":
		_ = c.Execute(func(*eventloop.Conn) { panic("boom in Execute") })
	default:
		_, _ = c.Write(in[:i+1])
	}
	return i + 1
}

// readUntilClosed reads until the server closes c (EOF or a reset).
func readUntilClosed(t *testing.T, c interface {
	Read([]byte) (int, error)
	SetReadDeadline(time.Time) error
}) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		t.Fatal("the connection whose handler panicked was not closed")
	}
}

// TestConformHandlerPanicClosesOnlyItsConnection: a panic in OnTraffic or
// in an Execute function closes that connection, with an error-level log
// line holding the panic value and the stack and OnClose's error wrapping
// ErrHandlerPanic; the server counts it and keeps serving the others, as
// net/http recovers a handler's panic per connection.
func TestConformHandlerPanicClosesOnlyItsConnection(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		var log logtest.Log
		rec := newRecorder()
		s := e.start(t, panicky{rec}, eventloop.Options{Logger: log.Logger()})
		bystander := dialServer(t, s)
		bystander.Write([]byte("before\n"))
		if got := readFull(t, bystander, len("before\n")); string(got) != "before\n" {
			t.Fatalf("echo %q", got)
		}
		for i, trigger := range []string{"boom", "later"} {
			victim := dialServer(t, s)
			victim.Write([]byte("hello\n"))
			readFull(t, victim, len("hello\n"))
			victim.Write([]byte(trigger + "\n"))
			readUntilClosed(t, victim)
			eventually(t, "the panic counted", func() bool { return s.HandlerPanics() == uint64(i+1) })
			bystander.Write([]byte("still here\n"))
			if got := readFull(t, bystander, len("still here\n")); string(got) != "still here\n" {
				t.Fatalf("after the %s panic the other connection got %q", trigger, got)
			}
		}
		text := log.String()
		for _, want := range []string{"level=ERROR", "handler panicked", "boom in OnTraffic", "boom in Execute", "conformance_panic_test.go"} {
			if !strings.Contains(text, want) {
				t.Errorf("log lacks %q:\n%s", want, text)
			}
		}
		eventually(t, "OnClose for both victims", func() bool {
			n := 0
			for _, err := range rec.CloseErrs() {
				if errors.Is(err, eventloop.ErrHandlerPanic) {
					n++
				}
			}
			return n == 2
		})
	})
}

// openPanicky panics in OnOpen while armed.
type openPanicky struct {
	panicky
	armed *atomic.Bool
}

func (h openPanicky) OnOpen(c *eventloop.Conn) {
	if h.armed.Load() {
		panic("boom in OnOpen")
	}
	h.recorder.OnOpen(c)
}

// TestConformOnOpenPanicClosesOnlyItsConnection: a panic in OnOpen closes
// the new connection; the next one is served.
func TestConformOnOpenPanicClosesOnlyItsConnection(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		var log logtest.Log
		h := openPanicky{panicky{newRecorder()}, &atomic.Bool{}}
		s := e.start(t, h, eventloop.Options{Logger: log.Logger()})
		h.armed.Store(true)
		victim := dialServer(t, s)
		readUntilClosed(t, victim)
		eventually(t, "the panic counted", func() bool { return s.HandlerPanics() == 1 })
		h.armed.Store(false)
		c := dialServer(t, s)
		c.Write([]byte("served\n"))
		if got := readFull(t, c, len("served\n")); string(got) != "served\n" {
			t.Fatalf("after an OnOpen panic a new connection got %q", got)
		}
		if !strings.Contains(log.String(), "boom in OnOpen") {
			t.Errorf("log lacks the panic:\n%s", log.String())
		}
	})
}
