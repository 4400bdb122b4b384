package eventloop

import (
	"bytes"
	"net"
	"strconv"
	"testing"
	"time"
)

func TestLoadAwarePick(t *testing.T) {
	tests := []struct {
		name  string
		loops []LoopStat
		want  []int // acceptable picks
	}{
		{"idle loops: fewest connections", []LoopStat{{Conns: 3}, {Conns: 1}, {Conns: 2}}, []int{1}},
		{"equal counts: avoid the busy loop", []LoopStat{{Conns: 10, Load: 0.9}, {Conns: 10}, {Conns: 10, Load: 0.5}}, []int{1}},
		{"busy loop with fewer conns still avoided", []LoopStat{{Conns: 5, Load: 0.95}, {Conns: 10, Load: 0.1}, {Conns: 12, Load: 0.1}}, []int{1}},
		{"empty but saturated loop loses to a lightly used one", []LoopStat{{Conns: 0, Load: 1}, {Conns: 2}}, []int{1}},
		{"many more conns outweigh load", []LoopStat{{Conns: 1, Load: 0.5}, {Conns: 100}}, []int{0}},
		{"ties spread", []LoopStat{{Conns: 4}, {Conns: 4}}, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b LoadAware
			for k := 0; k < 4; k++ {
				got := b.Pick(tt.loops)
				ok := false
				for _, w := range tt.want {
					ok = ok || got == w
				}
				if !ok {
					t.Fatalf("Pick(%+v) = %d, want one of %v", tt.loops, got, tt.want)
				}
			}
		})
	}
	// Ties go to every tied loop in turn, not always the first.
	var b LoadAware
	seen := map[int]bool{}
	for k := 0; k < 8; k++ {
		seen[b.Pick([]LoopStat{{}, {}, {}})] = true
	}
	if len(seen) != 3 {
		t.Fatalf("tied picks went to %v, want all three loops", seen)
	}
}

func TestLeastConnectionsAndRoundRobinPick(t *testing.T) {
	if got := (LeastConnections{}).Pick([]LoopStat{{Conns: 2, Load: 0}, {Conns: 1, Load: 1}}); got != 1 {
		t.Fatalf("LeastConnections picked %d, want 1 (load ignored)", got)
	}
	var rr RoundRobin
	for k := 0; k < 6; k++ {
		if got := rr.Pick(make([]LoopStat, 3)); got != k%3 {
			t.Fatalf("RoundRobin pick %d = %d", k, got)
		}
	}
}

// TestThousandsOfConnections spreads 2,000 connections over 4 loops with
// each balancer and checks the spread its doc promises and that every
// connection is served.
func TestThousandsOfConnections(t *testing.T) {
	const conns, loops = 2000, 4
	for _, tc := range []struct {
		name    string
		b       Balancer
		maxSkew int
	}{
		{"RoundRobin", &RoundRobin{}, 0},
		{"LeastConnections", LeastConnections{}, 1},
		// Accepting itself makes loops briefly busy, and LoadAware lets a
		// loop at load L count (1+4L) times its connections: allow that.
		{"LoadAware", &LoadAware{}, conns / loops / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &lineEcho{}
			s := startServer(t, h, Options{Loops: loops, Balancer: tc.b})
			cs := make([]net.Conn, conns)
			for i := range cs {
				c, err := dialErr(s)
				if err != nil {
					t.Fatalf("dial %d: %v", i, err)
				}
				cs[i] = c
			}
			defer func() {
				for _, c := range cs {
					c.Close()
				}
			}()
			waitFor(t, "all registered", func() bool { return s.NumConns() == conns })
			min, max := conns, 0
			for _, st := range s.Counters() {
				min, max = minInt(min, int(st.Conns)), maxInt(max, int(st.Conns))
			}
			if max-min > tc.maxSkew {
				t.Fatalf("per-loop connections %+v: spread %d exceeds %d", s.Counters(), max-min, tc.maxSkew)
			}
			for i := 0; i < conns; i += 7 {
				msg := []byte(strconv.Itoa(i) + "\n")
				cs[i].Write(msg)
				if got := readN(t, cs[i], len(msg)); !bytes.Equal(got, msg) {
					t.Fatalf("conn %d got %q", i, got)
				}
			}
			for _, c := range cs {
				c.Close()
			}
			waitFor(t, "all closed", func() bool { return s.NumConns() == 0 })
			for _, st := range s.Counters() {
				if st.Conns != 0 {
					t.Fatalf("loop still counts %d connections after all closed", st.Conns)
				}
			}
		})
	}
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// spinHandler answers "busy\n" after burning CPU and "where\n" with the
// index of the loop that owns the connection.
type spinHandler struct{}

func (spinHandler) OnTraffic(c *Conn, in []byte) int {
	consumed := 0
	for {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			return consumed
		}
		switch string(in[consumed : consumed+i]) {
		case "busy":
			for deadline := time.Now().Add(300 * time.Microsecond); time.Now().Before(deadline); {
			}
			c.WriteString("ok\n")
		case "where":
			c.WriteString(strconv.Itoa(c.eng.(*loop).idx) + "\n")
		}
		consumed += i + 1
	}
}

// TestBusyConnectionsSpread opens long-lived busy connections one at a time,
// each followed by idle connections that even out the counts. Counting
// connections alone puts the second busy connection on the first one's
// loop; LoadAware must give every busy connection its own loop.
func TestBusyConnectionsSpread(t *testing.T) {
	const loops = 4
	run := func(t *testing.T, b Balancer) []int {
		s := startServer(t, spinHandler{}, Options{Loops: loops, Balancer: b})
		stop := make(chan struct{})
		defer close(stop)
		var placed []int
		for round := 0; round < 2; round++ {
			c := dial(t, s)
			c.Write([]byte("where\n"))
			r := newLineReader(c)
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			line, err := r.line()
			if err != nil {
				t.Fatal(err)
			}
			idx, _ := strconv.Atoi(line)
			placed = append(placed, idx)
			go func() { // keep the connection busy until the test ends
				for {
					select {
					case <-stop:
						return
					default:
					}
					c.Write([]byte("busy\nbusy\n"))
					if _, err := r.line(); err != nil {
						return
					}
					if _, err := r.line(); err != nil {
						return
					}
				}
			}()
			waitFor(t, "the busy loop's load to show", func() bool { return s.Counters()[idx].Load > 0.3 })
			for k := 0; k < loops-1; k++ {
				dial(t, s)
			}
			waitFor(t, "idle connections registered", func() bool { return s.NumConns() == (round+1)*loops })
		}
		return placed
	}
	t.Run("LeastConnections piles up", func(t *testing.T) {
		if p := run(t, LeastConnections{}); p[0] != p[1] {
			t.Fatalf("busy connections on loops %v; expected the count-only pile-up this test relies on", p)
		}
	})
	t.Run("LoadAware spreads", func(t *testing.T) {
		if p := run(t, &LoadAware{}); p[0] == p[1] {
			t.Fatalf("busy connections both on loop %d", p[0])
		}
	})
}
