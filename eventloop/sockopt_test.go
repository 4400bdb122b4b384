package eventloop

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

type optsRecorder struct {
	lineEcho
	got chan [3]any // nodelay, keepalive, remote addr
}

func (h *optsRecorder) OnOpen(c *Conn) {
	nodelay, _ := unix.GetsockoptInt(c.Fd(), unix.IPPROTO_TCP, unix.TCP_NODELAY)
	keepalive, _ := unix.GetsockoptInt(c.Fd(), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
	h.got <- [3]any{nodelay, keepalive, c.RemoteAddr().String()}
}

func TestAcceptedSocketOptionsAndAddresses(t *testing.T) {
	for _, tc := range []struct{ network, addr string }{
		{"tcp", "127.0.0.1:0"},
		{"tcp4", "127.0.0.1:0"},
		{"tcp6", "[::1]:0"},
	} {
		t.Run(tc.network, func(t *testing.T) {
			h := &optsRecorder{got: make(chan [3]any, 1)}
			s := startServer(t, h, Options{Network: tc.network, Addr: tc.addr, TCPKeepAlive: 30 * time.Second})
			c := dial(t, s)
			got := <-h.got
			if got[0] != 1 || got[1] != 1 {
				t.Fatalf("TCP_NODELAY=%v SO_KEEPALIVE=%v, want both on", got[0], got[1])
			}
			if got[2] != c.LocalAddr().String() {
				t.Fatalf("RemoteAddr %v, client is %v", got[2], c.LocalAddr())
			}
		})
	}
}

func TestUnixSocketFileRemovedAtShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	s, err := NewServer(&lineEcho{}, Options{Network: "unix", Addr: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("socket file missing while serving: %v", err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file left after shutdown: %v", err)
	}
}

func TestOptionsRejectBadValues(t *testing.T) {
	for _, o := range []Options{
		{Addr: ""},
		{Addr: "x", Network: "udp"},
		{Addr: "/tmp/x.sock", Network: "unix", ReusePort: true},
		{Addr: ":0", Loops: -1},
		{Addr: ":0", OutputHighWater: 10, OutputHardLimit: 5},
		{Addr: ":0", MaxConns: -1},
	} {
		if _, err := NewServer(&lineEcho{}, o); err == nil {
			t.Errorf("NewServer(%+v) accepted bad options", o)
		}
	}
}

func TestOptionsReportsEffectiveValues(t *testing.T) {
	s, err := NewServer(&lineEcho{}, Options{Addr: "127.0.0.1:0", MaxConns: 7, IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Options()
	if o.MaxConns != 7 || o.IdleTimeout != time.Minute {
		t.Errorf("MaxConns %d IdleTimeout %v, want the values given", o.MaxConns, o.IdleTimeout)
	}
	if o.Network != "tcp" || o.Loops < 1 || o.FlushThreshold != DefaultFlushThreshold || o.OutputHardLimit != defaultHardLimit || o.Balancer == nil {
		t.Errorf("defaults not filled in: %+v", o)
	}
}
