package eventloop_test

import (
	"bufio"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
)

// slowBoot takes its time in OnBoot and notes whether a connection was
// opened or read before OnBoot returned.
type slowBoot struct {
	lines
	booted atomic.Bool
	early  atomic.Bool
}

func (h *slowBoot) OnBoot(*eventloop.Server) {
	time.Sleep(300 * time.Millisecond)
	h.booted.Store(true)
}

func (h *slowBoot) OnOpen(c *eventloop.Conn) {
	if !h.booted.Load() {
		h.early.Store(true)
	}
	h.lines.OnOpen(c)
}

func (h *slowBoot) OnTraffic(c *eventloop.Conn, in []byte) int {
	if !h.booted.Load() {
		h.early.Store(true)
	}
	return h.lines.OnTraffic(c, in)
}

// TestOnBootRunsBeforeAnyConnectionIsServed: a client that connects the
// moment the port is bound (a server restarted on its old port, its
// clients retrying) is opened and read only after OnBoot returned. On gnet
// the handler was booted after gnet's loops had started serving, so a
// restarted shoal could answer INFO before it had taken its snapshot's
// replication history.
func TestOnBootRunsBeforeAnyConnectionIsServed(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		if e.tls {
			t.Skip("the order is the native engine's; the client here speaks plain TCP")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		h := &slowBoot{lines: lines{newRecorder()}}
		answered := make(chan string, 1)
		go func() {
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					time.Sleep(time.Millisecond)
					continue
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				c.Write([]byte("ping\n"))
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					line = err.Error()
				}
				answered <- line
				return
			}
			answered <- "never connected to " + addr
		}()
		e.start(t, h, eventloop.Options{Addr: addr})
		if got := <-answered; got != "ping\n" {
			t.Fatalf("the client got %q, want %q", got, "ping\n")
		}
		if h.early.Load() {
			t.Fatal("a connection was opened or read before OnBoot returned")
		}
	})
}
