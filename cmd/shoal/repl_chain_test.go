package main

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
)

// A Shoal replica keeps a backlog of its primary's stream, with the
// primary's offsets, and forwards that stream verbatim to replicas of its
// own (kv/repl_apply.go: forward): so a promoted Shoal replica continues
// its former siblings with +CONTINUE (PSYNC2), and chains redis-server →
// Shoal → Shoal and Shoal → Shoal → redis-server share one history.

// replInfo is INFO replication of c.
func replInfo(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	return infoFields(t, c, "replication")
}

// replicaOf sends REPLICAOF 127.0.0.1 port to c.
func replicaOf(t *testing.T, c *redis.Client, port string) {
	t.Helper()
	if err := c.Do(context.Background(), "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
		t.Fatalf("REPLICAOF 127.0.0.1 %s: %v", port, err)
	}
}

// checkBacklog checks a replica's INFO backlog fields: active, of
// repl-backlog-size, and ending at its offset.
func checkBacklog(t *testing.T, who string, info map[string]string) {
	t.Helper()
	first, hist, off := atoi(info["repl_backlog_first_byte_offset"]), atoi(info["repl_backlog_histlen"]), atoi(info["master_repl_offset"])
	if info["repl_backlog_active"] != "1" || info["repl_backlog_size"] != "1048576" || first < 1 || first+hist-1 != off {
		t.Fatalf("%s's backlog: %v", who, info)
	}
}

// expectSyncs checks c's sync_full and sync_partial_ok.
func expectSyncs(t *testing.T, who string, c *redis.Client, full, partial int) {
	t.Helper()
	st := infoFields(t, c, "stats")
	if atoi(st["sync_full"]) != full || atoi(st["sync_partial_ok"]) != partial {
		t.Fatalf("%s counts sync_full %s, sync_partial_ok %s; want %d and %d", who, st["sync_full"], st["sync_partial_ok"], full, partial)
	}
}

// TestPromotedReplicaContinuesItsSiblings: a Shoal primary with two Shoal
// replicas and a redis-server replica; one Shoal replica is promoted
// (REPLICAOF NO ONE, as Sentinel does), and the other two, pointed at it,
// continue with a partial resync from its backlog: its sync_partial_ok
// counts both, its sync_full none.
func TestPromotedReplicaContinuesItsSiblings(t *testing.T) {
	ctx := context.Background()
	// No PINGs from the primary, so that its offset stands still once
	// the writes end.
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--repl-ping-replica-period", "3600")
	primary := authClient(t, p.addr(), "", 0)
	writeTypes(t, p.addr(), "", "before")
	a := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	b := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	r := startRedisReplica(t, p.port)
	ac, bc, rc := authClient(t, a.addr(), "", 0), authClient(t, b.addr(), "", 0), authClient(t, r.addr, "", 0)
	wait := benchmarkWrites(t, p.addr())
	writeTypes(t, p.addr(), "", "during")
	wait()
	waitCaughtUp(t, primary, ac, a)
	waitCaughtUp(t, primary, bc, b)
	waitCaughtUp(t, primary, rc, a)

	// The replica's backlog, as redis-server's replica reports its own.
	ai, ri, pi := replInfo(t, ac), replInfo(t, rc), replInfo(t, primary)
	checkBacklog(t, "the shoal replica", ai)
	checkBacklog(t, "the redis-server replica", ri)
	if ai["master_replid"] != pi["master_replid"] || ai["master_repl_offset"] != pi["master_repl_offset"] {
		t.Fatalf("the replica's history: %v\nthe primary's: %v", ai, pi)
	}

	if err := ac.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	ai = replInfo(t, ac)
	if ai["master_replid2"] != pi["master_replid"] || atoi(ai["second_repl_offset"]) != atoi(pi["master_repl_offset"])+1 ||
		ai["master_replid"] == pi["master_replid"] {
		t.Fatalf("the promoted replica's IDs: %v\nthe old primary's: %v", ai, pi)
	}
	checkBacklog(t, "the promoted replica", ai)
	replicaOf(t, bc, strconv.Itoa(a.port))
	replicaOf(t, rc, strconv.Itoa(a.port))
	writeTypes(t, a.addr(), "", "after")
	waitCaughtUp(t, ac, bc, b)
	waitCaughtUp(t, ac, rc, a)
	expectSyncs(t, "the promoted replica", ac, 0, 2)
	for who, c := range map[string]*redis.Client{"shoal": bc, "redis-server": rc} {
		if i := replInfo(t, c); i["master_replid"] != ai["master_replid"] || i["master_replid2"] != pi["master_replid"] {
			t.Fatalf("the %s replica of the promoted one: %v", who, i)
		}
	}
	compareDatasets(t, a.addr(), "", b.addr())
	compareDatasets(t, a.addr(), "", r.addr)
}

// TestChainRedisShoalShoal: redis-server → shoal → shoal under
// redis-benchmark's writes. The second shoal syncs in full from the first
// while the primary's stream has database 9 selected (the snapshot's
// repl-stream-db carries it), shares the primary's history and offset,
// and ends with every key; then the first shoal follows a promoted
// redis-server replica (+CONTINUE with a new ID) and the second follows
// it with a partial resync and the new ID.
func TestChainRedisShoalShoal(t *testing.T) {
	ctx := context.Background()
	rAddr := redistest.StartServer(t, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "3600")
	_, rPort, _ := net.SplitHostPort(rAddr)
	r2Addr := redistest.StartServer(t, "--enable-debug-command", "yes", "--replicaof", "127.0.0.1", rPort)
	_, r2Port, _ := net.SplitHostPort(r2Addr)
	rc, r2c := authClient(t, rAddr, "", 0), authClient(t, r2Addr, "", 0)
	s1 := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+rPort)
	s1c := authClient(t, s1.addr(), "", 0)
	writeTypes(t, rAddr, "", "before")
	db9 := authClient(t, rAddr, "", 9)
	if err := db9.Set(ctx, "db9:before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, rc, s1c, s1)

	s2 := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(s1.port))
	s2c := authClient(t, s2.addr(), "", 0)
	waitCaughtUp(t, s1c, s2c, s2)
	// No SELECT precedes this one in the stream: database 9 is selected.
	if err := db9.Incr(ctx, "db9:after").Err(); err != nil {
		t.Fatal(err)
	}
	wait := benchmark(t, rAddr, "")
	writeTypes(t, rAddr, "", "during")
	wait()
	waitCaughtUp(t, rc, s1c, s1)
	waitCaughtUp(t, s1c, s2c, s2)
	ri, s2i := replInfo(t, rc), replInfo(t, s2c)
	if s2i["master_replid"] != ri["master_replid"] || s2i["master_repl_offset"] != ri["master_repl_offset"] {
		t.Fatalf("the end of the chain follows another history: %v\nthe primary: %v", s2i, ri)
	}
	checkBacklog(t, "the middle shoal", replInfo(t, s1c))
	checkBacklog(t, "the last shoal", s2i)
	if s1i := replInfo(t, s1c); s1i["connected_slaves"] != "1" {
		t.Fatalf("the middle shoal lists no replica: %v", s1i)
	}
	compareDatasets(t, rAddr, "", s2.addr())
	expectSyncs(t, "the middle shoal", s1c, 1, 0)

	// The primary's replica r2 is promoted; the middle shoal follows it
	// and the end of the chain follows with it.
	waitCaughtUp(t, rc, r2c, s1)
	if err := r2c.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	replicaOf(t, s1c, r2Port)
	writeTypes(t, r2Addr, "", "after")
	waitCaughtUp(t, r2c, s1c, s1)
	waitCaughtUp(t, s1c, s2c, s2)
	r2i, s2i := replInfo(t, r2c), replInfo(t, s2c)
	if s2i["master_replid"] != r2i["master_replid"] || s2i["master_replid2"] != ri["master_replid"] {
		t.Fatalf("the end of the chain after the promotion: %v\nthe promoted primary: %v", s2i, r2i)
	}
	expectSyncs(t, "the middle shoal", s1c, 1, 1)
	compareDatasets(t, r2Addr, "", s2.addr())
}

// TestChainShoalShoalRedis: shoal → shoal → redis-server under
// redis-benchmark's writes: the redis-server at the end has every key;
// the middle shoal's link cut comes back partially without disturbing
// the end; and when the middle shoal syncs in full from another primary
// (a new history), the end syncs again from it and has that primary's
// data.
func TestChainShoalShoalRedis(t *testing.T) {
	ctx := context.Background()
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	pc := authClient(t, p.addr(), "", 0)
	writeTypes(t, p.addr(), "", "before")
	s1 := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	s1c := authClient(t, s1.addr(), "", 0)
	wait := benchmarkWrites(t, p.addr())
	r := startRedisReplica(t, s1.port)
	rc := authClient(t, r.addr, "", 0)
	writeTypes(t, p.addr(), "", "during")
	wait()
	writeTypes(t, p.addr(), "", "after")
	waitCaughtUp(t, pc, s1c, s1)
	waitCaughtUp(t, s1c, rc, s1)
	compareDatasets(t, p.addr(), "", r.addr)
	if pi, ri := replInfo(t, pc), replInfo(t, rc); ri["master_replid"] != pi["master_replid"] {
		t.Fatalf("the end of the chain follows another history: %v\nthe primary: %v", ri, pi)
	}

	// The middle's link drops: it continues, the end stays connected.
	expectPartialResync(t, p.addr(), pc, s1c, s1c, "master", s1)
	waitCaughtUp(t, s1c, rc, s1)
	expectSyncs(t, "the middle shoal", s1c, 1, 0)
	compareDatasets(t, p.addr(), "", r.addr)

	// A new history: the middle syncs in full from another primary.
	q := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	qc := authClient(t, q.addr(), "", 0)
	writeTypes(t, q.addr(), "", "other")
	if err := qc.Set(ctx, "only-on-q", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	replicaOf(t, s1c, strconv.Itoa(q.port))
	waitCaughtUp(t, qc, s1c, s1)
	waitCaughtUp(t, s1c, rc, s1)
	if qi, ri := replInfo(t, qc), replInfo(t, rc); ri["master_replid"] != qi["master_replid"] {
		t.Fatalf("the end of the chain did not follow the new history: %v\nthe new primary: %v", ri, qi)
	}
	compareDatasets(t, q.addr(), "", r.addr)
}

// replicaClientIDs returns the ids of c's replicas (CLIENT LIST TYPE
// replica), sorted.
func replicaClientIDs(t *testing.T, c *redis.Client) []string {
	t.Helper()
	list, err := c.Do(context.Background(), "CLIENT", "LIST", "TYPE", "replica").Text()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "id=") {
			ids = append(ids, f[0])
		}
	}
	slices.Sort(ids)
	return ids
}

// TestReplicaOfASiblingKeepsItsReplicas: a replica X of P with replicas
// of its own (redis-server and Shoal) is pointed at Y, another replica of
// P: Y continues X's history under the same ID (+CONTINUE), and X keeps
// its replicas connected, as Redis 7.0's replicationSetMaster does (it
// drops them only when the history changes). The stream goes on through
// the new chain P → Y → X → replicas, in the database P's stream had
// selected before the switch (Y sends no SELECT). redis-server as X is
// the reference: the test runs with it first.
func TestReplicaOfASiblingKeepsItsReplicas(t *testing.T) {
	for _, middle := range []string{"redis-server", "shoal"} {
		t.Run(middle, func(t *testing.T) {
			ctx := context.Background()
			pAddr := redistest.StartServer(t, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
			_, pPort, _ := net.SplitHostPort(pAddr)
			pPortN, _ := strconv.Atoi(pPort)
			y := startRedisReplica(t, pPortN, "--repl-diskless-sync-delay", "0")
			_, yPort, _ := net.SplitHostPort(y.addr)
			var xAddr string
			var xPort int
			// The shoal process whose log a failed wait prints: X's, or
			// the sub-replica's with a redis-server X.
			var logOf *shoalProc
			if middle == "shoal" {
				x := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+pPort)
				xAddr, xPort, logOf = x.addr(), x.port, x
			} else {
				x := startRedisReplica(t, pPortN, "--repl-diskless-sync-delay", "0")
				xAddr = x.addr
				_, port, _ := net.SplitHostPort(xAddr)
				xPort, _ = strconv.Atoi(port)
			}
			pc, xc, yc := authClient(t, pAddr, "", 0), authClient(t, xAddr, "", 0), authClient(t, y.addr, "", 0)
			writeTypes(t, pAddr, "", "before")
			db9 := authClient(t, pAddr, "", 9)
			if err := db9.Set(ctx, "db9:before", "1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			sr := startRedisReplica(t, xPort)
			ss := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(xPort))
			if logOf == nil {
				logOf = ss
			}
			src, ssc := authClient(t, sr.addr, "", 0), authClient(t, ss.addr(), "", 0)
			waitCaughtUp(t, pc, yc, logOf)
			waitCaughtUp(t, pc, xc, logOf)
			waitCaughtUp(t, xc, src, logOf)
			waitCaughtUp(t, xc, ssc, ss)
			ids := replicaClientIDs(t, xc)
			if len(ids) != 2 {
				t.Fatalf("X lists replicas %v, want 2", ids)
			}
			stats := infoFields(t, xc, "stats")

			replicaOf(t, xc, yPort)
			waitRole(t, "X", xc, "slave", atoi(yPort))
			// P's stream has database 9 selected: no SELECT precedes these.
			for i := 0; i < 100; i++ {
				if err := db9.Incr(ctx, "db9:after").Err(); err != nil {
					t.Fatal(err)
				}
			}
			waitCaughtUp(t, pc, yc, logOf)
			waitCaughtUp(t, yc, xc, logOf)
			waitCaughtUp(t, xc, src, logOf)
			waitCaughtUp(t, xc, ssc, ss)
			if got := replicaClientIDs(t, xc); !slices.Equal(got, ids) {
				t.Fatalf("X's replicas were reconnected: %v before REPLICAOF, %v after", ids, got)
			}
			after := infoFields(t, xc, "stats")
			if after["sync_full"] != stats["sync_full"] || after["sync_partial_ok"] != stats["sync_partial_ok"] {
				t.Fatalf("X served syncs across REPLICAOF: sync_full %s → %s, sync_partial_ok %s → %s",
					stats["sync_full"], after["sync_full"], stats["sync_partial_ok"], after["sync_partial_ok"])
			}
			if yi := infoFields(t, yc, "stats"); yi["sync_partial_ok"] != "1" || yi["sync_full"] != "0" {
				t.Fatalf("Y did not continue X: sync_full %s, sync_partial_ok %s", yi["sync_full"], yi["sync_partial_ok"])
			}
			for who, addr := range map[string]string{"X": xAddr, "X's redis-server replica": sr.addr, "X's shoal replica": ss.addr()} {
				if v := authClient(t, addr, "", 9).Get(ctx, "db9:after").Val(); v != "100" {
					t.Fatalf("%s has db9:after %q in database 9, want 100", who, v)
				}
				compareDatasets(t, pAddr, "", addr)
			}
		})
	}
}
