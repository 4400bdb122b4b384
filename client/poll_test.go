package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/tcptest"
	"github.com/shoalkv/shoal/proto/resp"
)

// With more calls outstanding than pollOutstanding, the reader goroutine
// reads the socket between yields instead of parking in the network
// poller; replies must still reach their own callers.
func TestReaderPollingAtManyGoroutinesKeepsRepliesMatched(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := newClient(t, Options{Addr: srv.addr, Conns: 1})
			l := c.slots[0].link.Load()
			const goroutines, rounds = 3 * pollOutstanding, 10
			ctx := context.Background()
			wait := inGoroutines(goroutines, func(g int) error {
				k := key("poll", g)
				for r := range rounds {
					want := fmt.Sprintf("%d-%d", g, r)
					if err := c.Set(ctx, k, []byte(want)); err != nil {
						return err
					}
					if v, err := c.Get(ctx, k); err != nil || string(v) != want {
						return fmt.Errorf("goroutine %d: Get = %q, %v; want %q", g, v, err, want)
					}
				}
				return nil
			})
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			c.Close() // its goroutines have ended: l.rr is ours to read
			if l != c.slots[0].link.Load() {
				t.Fatal("the connection was replaced during the test")
			}
			if l.rr.polls == 0 {
				t.Fatalf("%d goroutines on one connection: the reader never polled", goroutines)
			}
		})
	}
}

// A server that ends the connection while the reader polls (it has more
// than pollOutstanding calls outstanding) fails the calls it did not
// answer, and only those.
func TestServerClosingWhileTheReaderPollsFailsTheUnansweredCalls(t *testing.T) {
	const answered, goroutines = 500, 2000
	srv := tcptest.Serve(t, func(nc net.Conn, _ int64) {
		// Take every call before answering, so that the client has
		// goroutines-answered calls outstanding when it meets the EOF.
		var p resp.Parser
		var in, out []byte
		tmp := make([]byte, 64<<10)
		calls := 0
		for calls < goroutines {
			m, err := nc.Read(tmp)
			if err != nil {
				return
			}
			in = append(in, tmp[:m]...)
			for {
				args, used, err := p.Parse(in)
				if err != nil {
					break
				}
				in = in[used:]
				switch {
				case string(args[0]) == "PING":
					if _, err := nc.Write([]byte("+PONG\r\n")); err != nil {
						return
					}
				case calls < answered:
					out = resp.AppendBulk(out, args[1])
					calls++
				default:
					calls++
				}
			}
			in = append(in[:0], in...)
		}
		// The answers, then EOF; reading on, so that nothing meets a reset.
		_, _ = nc.Write(out)
		_ = nc.(*net.TCPConn).CloseWrite()
		for {
			if _, err := nc.Read(tmp); err != nil {
				return
			}
		}
	})
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 1, MinBackoff: time.Hour, DialTimeout: 200 * time.Millisecond})
	l := c.slots[0].link.Load()
	var ok, failed atomic.Int64
	wait := inGoroutines(goroutines, func(g int) error {
		k := key("closing", g)
		v, err := c.Get(context.Background(), k)
		var ce *ConnError
		switch {
		case err == nil && string(v) == k:
			ok.Add(1)
		case errors.As(err, &ce):
			failed.Add(1)
		default:
			return fmt.Errorf("goroutine %d: Get = %q, %v; want its key or a *ConnError", g, v, err)
		}
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("calls still waiting a minute after the server closed: %d answered, %d failed", ok.Load(), failed.Load())
	}
	if ok.Load() != answered || failed.Load() != goroutines-answered {
		t.Fatalf("%d calls answered and %d failed, want %d and %d", ok.Load(), failed.Load(), answered, goroutines-answered)
	}
	c.Close()
	if l.rr.polls == 0 {
		t.Fatal("the reader never polled: the test did not test what it says")
	}
}
