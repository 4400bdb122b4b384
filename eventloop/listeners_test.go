package eventloop

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// prefixer answers every line with its prefix and the line, and records
// its hooks, so a test can tell which listener's Handler served a conn.
type prefixer struct {
	prefix string

	mu       sync.Mutex
	opened   int
	closed   int
	booted   int
	shutdown int
}

func (h *prefixer) OnTraffic(c *Conn, in []byte) int {
	return eachLine(in, func(line []byte) bool {
		c.WriteString(h.prefix)
		c.Write(line)
		return true
	})
}

func (h *prefixer) OnOpen(*Conn)         { h.mu.Lock(); h.opened++; h.mu.Unlock() }
func (h *prefixer) OnClose(*Conn, error) { h.mu.Lock(); h.closed++; h.mu.Unlock() }
func (h *prefixer) OnBoot(*Server)       { h.mu.Lock(); h.booted++; h.mu.Unlock() }
func (h *prefixer) OnShutdown()          { h.mu.Lock(); h.shutdown++; h.mu.Unlock() }

func (h *prefixer) counts() (opened, closed, booted, shutdown int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.opened, h.closed, h.booted, h.shutdown
}

func roundTrip(t *testing.T, network, addr, line string) string {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%s %s: %v", network, addr, err)
	}
	return strings.TrimSuffix(got, "\n")
}

// TestListenersServeEachWithItsOwnHandler: every address reaches its own
// Handler and hooks, on the same loops, with and without ReusePort, and a
// unix listener beside tcp ones.
func TestListenersServeEachWithItsOwnHandler(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "acceptor", true: "reuseport"}[reuse], func(t *testing.T) {
			main, second, third := &prefixer{prefix: "main:"}, &prefixer{prefix: "second:"}, &prefixer{prefix: "third:"}
			ls := []Listener{{Addr: "127.0.0.1:0", Handler: second}}
			sock := filepath.Join(t.TempDir(), "third.sock")
			if !reuse {
				ls = append(ls, Listener{Network: "unix", Addr: sock, Handler: third})
			}
			s, err := NewServer(main, Options{Addr: "127.0.0.1:0", Loops: 2, ReusePort: reuse, Listeners: ls})
			if err != nil {
				t.Fatal(err)
			}
			if s.Addrs() != nil {
				t.Fatalf("Addrs before Start = %v, want nil", s.Addrs())
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			addrs := s.Addrs()
			if len(addrs) != 1+len(ls) || addrs[0].String() != s.Addr().String() {
				t.Fatalf("Addrs() = %v, Addr() = %v", addrs, s.Addr())
			}
			if addrs[0].String() == addrs[1].String() {
				t.Fatalf("both listeners report %v", addrs[0])
			}
			for i := 0; i < 4; i++ { // several conns: both loops serve both listeners
				if got := roundTrip(t, "tcp", addrs[0].String(), "a"); got != "main:a" {
					t.Fatalf("main address answered %q", got)
				}
				if got := roundTrip(t, "tcp", addrs[1].String(), "b"); got != "second:b" {
					t.Fatalf("second address answered %q", got)
				}
				if !reuse {
					if got := roundTrip(t, "unix", sock, "c"); got != "third:c" {
						t.Fatalf("unix address answered %q", got)
					}
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			hs := []*prefixer{main, second}
			if !reuse {
				hs = append(hs, third)
			}
			for _, h := range hs {
				if o, c, b, sd := h.counts(); o != 4 || c != 4 || b != 1 || sd != 1 {
					t.Errorf("%s opened %d closed %d booted %d shut down %d; want 4 4 1 1", h.prefix, o, c, b, sd)
				}
			}
			if !reuse {
				if _, err := net.Dial("unix", sock); err == nil {
					t.Errorf("unix listener %s still accepts after Shutdown", sock)
				}
			}
			for i, a := range addrs {
				if c, err := net.DialTimeout("tcp", a.String(), time.Second); err == nil {
					c.Close()
					t.Errorf("address %d (%v) still accepts after Shutdown", i, a)
				}
			}
		})
	}
}

// TestListenersShareMaxConns: the limit counts every address's
// connections, and each listener turns the extra away in its own words.
func TestListenersShareMaxConns(t *testing.T) {
	s := startServer(t, &lineEcho{}, Options{MaxConns: 1, RejectMessage: []byte("main full\n"),
		Listeners: []Listener{{Addr: "127.0.0.1:0", Handler: &prefixer{prefix: "x:"}, RejectMessage: []byte("second full\n")}}})
	first := dial(t, s) // holds the one slot
	first.Write([]byte("hi\n"))
	readN(t, first, 3)
	c, err := net.Dial("tcp", s.Addrs()[1].String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	got, _ := bufio.NewReader(c).ReadString('\n')
	if got != "second full\n" {
		t.Fatalf("second listener over MaxConns answered %q, want its RejectMessage", got)
	}
	if s.Rejected() != 1 {
		t.Fatalf("Rejected() = %d, want 1", s.Rejected())
	}
}

func TestListenersOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"nil handler", Options{Listeners: []Listener{{Addr: "127.0.0.1:0"}}}, "nil Handler"},
		{"empty addr", Options{Listeners: []Listener{{Handler: &lineEcho{}}}}, "Listeners[0].Addr is empty"},
		{"network", Options{Listeners: []Listener{{Network: "udp", Addr: "x", Handler: &lineEcho{}}}}, `unsupported network "udp"`},
		{"unix reuseport", Options{ReusePort: true, Listeners: []Listener{{Network: "unix", Addr: "/tmp/x", Handler: &lineEcho{}}}}, "ReusePort needs a tcp network"},
	} {
		tc.o.Addr = "127.0.0.1:0"
		_, err := NewServer(&lineEcho{}, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

// TestListenerBindFailureReleasesEverything: a second address already in
// use fails Start and leaves the first one closed.
func TestListenerBindFailureReleasesEverything(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := probe.Addr().String()
	probe.Close()
	s, err := NewServer(&lineEcho{}, Options{Addr: free, Listeners: []Listener{{Addr: busy.Addr().String(), Handler: &lineEcho{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("Start succeeded with the second address in use")
	}
	ln, err := net.Listen("tcp", free)
	if err != nil {
		t.Fatalf("the first address is still held after the failed Start: %v", err)
	}
	ln.Close()
}
