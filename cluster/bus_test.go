package cluster

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/redistest"
)

// busNode is a State whose bus is served by an eventloop.Server, in
// process (the race detector sees the bus's locking).
type busNode struct {
	s       *State
	port    int
	busPort int
	log     *logtest.Log
	srv     *eventloop.Server
}

func startBusNode(t *testing.T) *busNode {
	t.Helper()
	n := &busNode{port: redistest.FreePort(t), busPort: redistest.FreePort(t), log: new(logtest.Log)}
	logger := slog.New(slog.NewTextHandler(n.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(Options{Port: n.port, BusPort: n.busPort, ConfigFile: filepath.Join(t.TempDir(), "nodes.conf"), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	s.nodeTimeout.Store(2000)
	srv, err := eventloop.NewServer(s.BusHandler(), eventloop.Options{Addr: "127.0.0.1:" + itoa(n.busPort), Loops: 2, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	s.Start()
	t.Cleanup(func() {
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	n.s, n.srv = s, srv
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

// waitFor polls cond (a hang guard, not a timing).
func waitFor(t *testing.T, what string, cond func() bool, logs ...*logtest.Log) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, l := range logs {
				b.WriteString(l.String())
			}
			t.Fatalf("never: %s\n%s", what, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestThreeNodesGossipAndAgree: three nodes, each with a third of the
// slots; MEET only from the first to the others; gossip and PONGs spread
// membership and slot ownership until each node routes every slot and the
// cluster is OK everywhere. nodes.conf then holds the same table.
func TestThreeNodesGossipAndAgree(t *testing.T) {
	a, b, c := startBusNode(t), startBusNode(t), startBusNode(t)
	nodes := []*busNode{a, b, c}
	third := Slots / 3
	for i, n := range nodes {
		hi := (i+1)*third - 1
		if i == 2 {
			hi = Slots - 1
		}
		if err := n.s.ChangeSlots([]int{i * third, hi}, false); err != nil {
			t.Fatal(err)
		}
		if err := n.s.SetConfigEpoch(int64(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.s.Meet("127.0.0.1", b.port, b.busPort); err != nil {
		t.Fatal(err)
	}
	if err := b.s.Meet("127.0.0.1", c.port, c.busPort); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		waitFor(t, "every node routes every slot and the state is OK", func() bool {
			r := n.s.Routes()
			return r.OK && r.Owner[0].ID == a.s.MyID() && r.Owner[Slots/2].ID == b.s.MyID() && r.Owner[Slots-1].ID == c.s.MyID()
		}, a.log, b.log, c.log)
	}
	r := a.s.Routes()
	if want := "127.0.0.1:" + itoa(c.port); r.Owner[Slots-1].Addr != want {
		t.Fatalf("slot %d routes to %q, want %q", Slots-1, r.Owner[Slots-1].Addr, want)
	}
	info := c.s.Info()
	for _, want := range []string{"cluster_state:ok\r\n", "cluster_known_nodes:3\r\n", "cluster_size:3\r\n", "cluster_current_epoch:3\r\n", "cluster_my_epoch:3\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("CLUSTER INFO lacks %q:\n%s", want, info)
		}
	}
	lines := strings.Split(strings.TrimSpace(b.s.Nodes()), "\n")
	if len(lines) != 3 {
		t.Fatalf("CLUSTER NODES has %d lines:\n%s", len(lines), b.s.Nodes())
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 9 || !strings.HasPrefix(f[1], "127.0.0.1:") || !strings.Contains(f[2], "master") || f[7] != "connected" {
			t.Errorf("CLUSTER NODES line %q", l)
		}
	}
}

// TestFailureDetection: a node that stops answering is flagged PFAIL by
// each of the others, then FAIL once a majority of primaries reports it,
// and the cluster's state turns to fail (its slots are not served).
func TestFailureDetection(t *testing.T) {
	a, b, c := startBusNode(t), startBusNode(t), startBusNode(t)
	nodes := []*busNode{a, b, c}
	third := Slots / 3
	for i, n := range nodes {
		hi := (i+1)*third - 1
		if i == 2 {
			hi = Slots - 1
		}
		if err := n.s.ChangeSlots([]int{i * third, hi}, false); err != nil {
			t.Fatal(err)
		}
		_ = n.s.SetConfigEpoch(int64(i + 1))
	}
	_ = a.s.Meet("127.0.0.1", b.port, b.busPort)
	_ = a.s.Meet("127.0.0.1", c.port, c.busPort)
	for _, n := range nodes {
		waitFor(t, "cluster OK", func() bool { return n.s.Routes().OK }, a.log, b.log, c.log)
	}
	cid := c.s.MyID()
	// c goes silent: its cron and links stop, its bus port closes.
	c.s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*busNode{a, b} {
		waitFor(t, "c flagged fail and the cluster down", func() bool {
			n.s.mu.Lock()
			defer n.s.mu.Unlock()
			cn := n.s.nodes[cid]
			return cn != nil && cn.failed() && n.s.state == stateFail
		}, a.log, b.log)
	}
	if !strings.Contains(a.log.String()+b.log.String(), "marking node as failing (quorum reached)") {
		t.Fatal("no node logged reaching the quorum")
	}
}
