package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/benchmark/rig"
	"github.com/shoalkv/shoal/internal/redistest"
)

// Two clients sharing one out directory, as two replicas of the compose service do:
// each claims its own slot, opens its share of the connections on keys of its own,
// waits for go, loads and reports.
func TestTwoClientsShareTheRig(t *testing.T) {
	addr := redistest.StartServer(t, "--protected-mode", "no")
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = run(ctx, options{server: "127.0.0.1", port: port, servers: 1, clients: 2, total: 9,
				dialRate: 1000, rate: 90, duration: time.Second, timeout: 10 * time.Second, workload: "get:1,set:1",
				out: out, id: "c" + strconv.Itoa(i), waitGo: 30 * time.Second})
		}()
	}
	// Both must be connected and checked before go.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ready int
		for i := range 2 {
			var st rig.Status
			if rig.ReadJSON(out, "c"+strconv.Itoa(i)+".status", &st) == nil && st.Phase == rig.PhaseReady {
				ready++
			}
		}
		if ready == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the clients did not both get ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(out, rig.GoFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	slots := map[int]bool{}
	var total, requests int64
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		var res rig.Result
		if err := rig.ReadJSON(out, "c"+strconv.Itoa(i)+".result", &res); err != nil {
			t.Fatal(err)
		}
		slots[res.Slot] = true
		total += res.Connected
		requests += res.Report.Requests
		if res.Target != share(9, 2, res.Slot) || res.Connected != int64(res.Target) || res.Report.Errors != 0 ||
			res.Report.Silent != 0 || res.Report.Histogram == "" {
			t.Errorf("client %d result: target %d connected %d errors %v silent %d", i, res.Target, res.Connected,
				res.Report.ErrorsByKind, res.Report.Silent)
		}
	}
	if len(slots) != 2 || total != 9 {
		t.Errorf("slots %v, %d connections; want slots 0 and 1, 9 connections", slots, total)
	}
	// 90 req/s over 9 connections for 1 s: 10 each, 90 in all.
	if requests < 80 || requests > 100 {
		t.Errorf("%d requests, want about 90", requests)
	}
	// Every connection worked on a key of its own: 9 keys, none shared.
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 9 {
		t.Errorf("DBSIZE %d (%v), want 9", n, err)
	}
}

func TestShareSplitsExactly(t *testing.T) {
	for _, tc := range []struct{ n, clients int }{{100000, 6}, {9, 2}, {7, 7}, {2000, 1}} {
		sum := 0
		for k := range tc.clients {
			s := share(tc.n, tc.clients, k)
			if s < tc.n/tc.clients || s > tc.n/tc.clients+1 {
				t.Errorf("share(%d, %d, %d) = %d: uneven", tc.n, tc.clients, k, s)
			}
			sum += s
		}
		if sum != tc.n {
			t.Errorf("shares of %d over %d clients sum to %d", tc.n, tc.clients, sum)
		}
	}
}

func TestSlotsRunOut(t *testing.T) {
	o := options{out: t.TempDir(), clients: 2, id: "x"}
	for want := range 2 {
		if k, err := claimSlot(o); err != nil || k != want {
			t.Fatalf("claim %d: slot %d, %v", want, k, err)
		}
	}
	if _, err := claimSlot(o); err == nil {
		t.Error("a third client got a slot of two")
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-servers", "0"}, {"-clients", "3", "-conns", "2"}, {"-rate", "0"}, {"extra"}} {
		if _, _, err := parseFlags(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
