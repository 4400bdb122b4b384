package loadgen

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The rig's path: dial at a bounded rate, check every connection on a key of its own,
// then load only those keys, with the histogram exported for an exact merge.
func TestSessionOwnKeysCheckedThenLoaded(t *testing.T) {
	addr := startRedis(t)
	cfg := testConfig(addr)
	cfg.Conns, cfg.DialRate, cfg.OwnKeys, cfg.KeyBase = 30, 150, true, 5_000_000
	cfg.Rate, cfg.Requests, cfg.LowMemory, cfg.ExportHistogram = 3000, 300, true, true
	cfg.Mix = []opWeight{{opGet, 1}, {opSet, 1}}
	s, err := NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	if err := s.Dial(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 30 dials at 150/s: the last one is due 29/150 s after the first.
	if el := time.Since(start); el < 29*time.Second/150 {
		t.Errorf("30 dials at 150/s took %v: not rate limited", el)
	}
	if open, failed := s.Connected(); open != 30 || failed != 0 {
		t.Fatalf("connected %d, failed %d; want 30, 0", open, failed)
	}
	if bad := s.Verify(context.Background()); bad != 0 {
		t.Fatalf("%d connections failed the check", bad)
	}
	for _, i := range []int{0, 29} {
		key := "key:" + strings.Repeat("0", 5) + strconv.Itoa(5_000_000+i)
		if got := redisDo(t, addr, "GET", key); got != "owned-by-"+key {
			t.Errorf("GET %s = %q after the check", key, got)
		}
	}
	rep, err := s.Load(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 300 || rep.Errors != 0 || rep.Silent != 0 {
		t.Fatalf("requests %d errors %v silent %d; want 300, none, 0", rep.Requests, rep.ErrorsByKind, rep.Silent)
	}
	// Only the 30 own keys exist: the load touched no other key.
	if n := redisDo(t, addr, "DBSIZE"); n != "30" {
		t.Errorf("DBSIZE %s, want 30", n)
	}
	h, err := MergeHistograms(rep.Histogram, rep.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 600 {
		t.Errorf("two copies of a 300-sample histogram merge to %d samples", h.TotalCount())
	}
	if done, snap := s.Snapshot(); done != 300 || snap.TotalCount() != 300 {
		t.Errorf("snapshot: %d done, %d samples; want 300, 300", done, snap.TotalCount())
	}
}

// A server that answers the check wrongly: each such connection is dropped and counted,
// and the load runs on the others.
func TestSessionCheckDropsWrongAnswers(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 256)
		if _, err := c.Read(buf); err != nil {
			return
		}
		c.Write([]byte("+PANG\r\n"))
	})
	cfg := testConfig(addr)
	cfg.Conns, cfg.Requests = 3, 3
	s := dialedSession(t, cfg)
	if bad := s.Verify(context.Background()); bad != 3 {
		t.Fatalf("%d connections failed the check, want 3", bad)
	}
	if open, failed := s.Connected(); open != 0 || failed != 3 {
		t.Errorf("connected %d failed %d; want 0, 3", open, failed)
	}
	if _, err := s.Load(context.Background(), nil); err == nil {
		t.Error("Load with no connection left succeeded")
	}
}

func TestDialSpreadsOverAddrs(t *testing.T) {
	var addrs []string
	seen := make(chan int, 16)
	for k := range 2 {
		addrs = append(addrs, fakeServer(t, func(c net.Conn) {
			defer c.Close()
			seen <- k
			io.Copy(io.Discard, c) // open until the session closes it
		}))
	}
	cfg := testConfig("unused:1")
	cfg.Addrs, cfg.Conns, cfg.Requests = addrs, 6, 6
	dialedSession(t, cfg)
	var per [2]int
	for range 6 {
		per[<-seen]++
	}
	if per != [2]int{3, 3} {
		t.Errorf("connections per address %v, want [3 3]", per)
	}
}

// dialedSession is a Session of cfg with its connections dialed, closed when
// the test ends.
func dialedSession(t *testing.T, cfg *Config) *Session {
	t.Helper()
	s, err := NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Dial(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOwnKeysBeyondKeyDigitsIsRefused(t *testing.T) {
	cfg := testConfig("127.0.0.1:1")
	cfg.OwnKeys, cfg.KeyBase, cfg.Requests = true, maxKeyspace-2, 1
	if _, err := NewSession(cfg); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("key base past the key digits: err %v", err)
	}
}
