package gnetengine_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
)

type echo struct{}

func (echo) OnTraffic(c *eventloop.Conn, in []byte) int { c.Write(in); return len(in) }

// newGnetServer creates h's Server on the gnet engine, on a loopback port
// unless o names an address.
func newGnetServer(t *testing.T, h eventloop.Handler, o eventloop.Options) *eventloop.Server {
	t.Helper()
	o.Engine = gnetengine.Engine{}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	s, err := eventloop.NewServer(h, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startGnet starts h on the gnet engine; the test shuts it down.
func startGnet(t *testing.T, h eventloop.Handler, o eventloop.Options) *eventloop.Server {
	t.Helper()
	s := newGnetServer(t, h, o)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// startRefused returns the error of a Start that must fail, what.
func startRefused(t *testing.T, o eventloop.Options, what string) error {
	t.Helper()
	s := newGnetServer(t, echo{}, o)
	err := s.Start()
	if err == nil {
		s.Shutdown(context.Background())
		t.Fatalf("%s succeeded", what)
	}
	return err
}

// TestStartReportsTheListenError: a port already taken is an error from
// Start that names the address, not a hang or a crash.
func TestStartReportsTheListenError(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	err = startRefused(t, eventloop.Options{Addr: taken.Addr().String()}, "Start on a taken port")
	if !strings.Contains(err.Error(), taken.Addr().String()) {
		t.Fatalf("error %q does not name the address %s", err, taken.Addr())
	}
}

// TestCountersCountConnectionsWithoutLoad: Counters has one entry per
// loop, counts connections per loop and reports Load 0 (gnet publishes
// none).
func TestCountersCountConnectionsWithoutLoad(t *testing.T) {
	s := startGnet(t, echo{}, eventloop.Options{Loops: 3})
	defer s.Shutdown(context.Background())
	for i := 0; i < 4; i++ {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("x"))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Counters()
	total := 0
	for _, l := range st {
		total += int(l.Conns)
		if l.Load != 0 {
			t.Fatalf("Load %v, want 0", l.Load)
		}
	}
	if len(st) != 3 || total != 4 {
		t.Fatalf("Counters %+v, want 3 loops holding 4 connections", st)
	}
}

// TestConnectionDuringDrainIsClosedUnserved: while Shutdown drains, a new
// connection is accepted (gnet cannot stop its listener alone) and closed
// at once, without being served.
func TestConnectionDuringDrainIsClosedUnserved(t *testing.T) {
	s := startGnet(t, bigOnce{}, eventloop.Options{Loops: 1, SocketSendBuffer: 4096})
	slow, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.Write([]byte("x")) // 8 MB of reply it does not read: the drain goes on
	time.Sleep(50 * time.Millisecond)
	shut := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	go func() { shut <- s.Shutdown(ctx) }()
	time.Sleep(50 * time.Millisecond)
	late, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatalf("dial during the drain: %v (gnet's listener is expected to still accept)", err)
	}
	defer late.Close()
	late.Write([]byte("y"))
	late.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := late.Read(make([]byte, 16))
	if n != 0 || err == nil {
		t.Fatalf("late connection read %d bytes, %v: want it closed unserved", n, err)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("late connection left open")
	}
	<-shut
}

// bigOnce answers any input with one 8 MB reply.
type bigOnce struct{}

func (bigOnce) OnTraffic(c *eventloop.Conn, in []byte) int {
	c.Write(make([]byte, 8<<20))
	return len(in)
}

// TestReusePortNeedsAnExplicitPort: ReusePort on ":0" is refused with an
// error naming the address, since gnet would bind every loop to a port of
// its own.
func TestReusePortNeedsAnExplicitPort(t *testing.T) {
	err := startRefused(t, eventloop.Options{ReusePort: true, Loops: 2}, "Start with ReusePort on :0")
	if !strings.Contains(err.Error(), "127.0.0.1:0") {
		t.Fatalf("error %q does not name the address", err)
	}
}

// TestListenersNeedTheNativeEngine: the gnet engine serves one address; a
// Server asked for more is refused when created, naming the engine, rather
// than silently serving only the first.
func TestListenersNeedTheNativeEngine(t *testing.T) {
	_, err := eventloop.NewServer(echo{}, eventloop.Options{Addr: "127.0.0.1:0", Engine: gnetengine.Engine{},
		Listeners: []eventloop.Listener{{Addr: "127.0.0.1:0", Handler: echo{}}}})
	if err == nil || !strings.Contains(err.Error(), "gnet") || !strings.Contains(err.Error(), "Listeners") {
		t.Fatalf("NewServer with the gnet engine and Options.Listeners: error %v", err)
	}
}

// TestAddrsReportsTheEnginesAddress: Addrs, which the fronts use to log
// where each address is served, works on an engine too.
func TestAddrsReportsTheEnginesAddress(t *testing.T) {
	s := startGnet(t, echo{}, eventloop.Options{})
	defer s.Shutdown(context.Background())
	addrs := s.Addrs()
	if len(addrs) != 1 || addrs[0] == nil || addrs[0].String() != s.Addr().String() {
		t.Fatalf("Addrs() = %v, Addr() = %v", addrs, s.Addr())
	}
}
