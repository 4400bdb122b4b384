package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

// A primary's snapshot records its history while it keeps a backlog (Redis
// 7.0's rdbPopulateSaveInfo), and a primary restarted from it continues
// that history as its previous one (master_replid2, second_repl_offset):
// a replica that had all of it continues with +CONTINUE and the new ID.

// TestRestartedPrimaryContinuesItsReplicas: a Shoal primary with a Shoal
// and a redis-server replica shuts down with SHUTDOWN SAVE once both have
// everything, and restarts from its file on the same port: both replicas
// continue partially (sync_partial_ok 2, sync_full 0 on the restarted
// primary) and every key matches.
func TestRestartedPrimaryContinuesItsReplicas(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir, "--enable-debug-command", "yes", "--repl-ping-replica-period", "3600")
	port := p.port
	primary := client(t, p.addr())
	writeTypes(t, p.addr(), "", "before")
	s := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(port))
	r := startRedisReplica(t, port)
	sc, rc := client(t, s.addr()), client(t, r.addr)
	wait := benchmarkWrites(t, p.addr())
	wait()
	writeTypes(t, p.addr(), "", "after")
	waitCaughtUp(t, primary, sc, s)
	waitCaughtUp(t, primary, rc, p)
	oldID := replInfo(t, primary)["master_replid"]
	oldOffset := replInfo(t, primary)["master_repl_offset"]
	_ = do(primary, "SHUTDOWN", "SAVE") // the connection closes
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("the primary's exit after SHUTDOWN SAVE: %v\n%s", err, p.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the primary did not exit after SHUTDOWN SAVE")
	}

	p2 := startOnPort(t, port, "--dir", dir, "--enable-debug-command", "yes", "--repl-ping-replica-period", "3600")
	pc2 := client(t, p2.addr())
	info := replInfo(t, pc2)
	if info["master_replid2"] != oldID || info["second_repl_offset"] != strconv.Itoa(atoi(oldOffset)+1) || info["master_repl_offset"] != oldOffset {
		t.Fatalf("the restarted primary's history: %v; it was %s at %s", info, oldID, oldOffset)
	}
	waitReplicaOnline(t, pc2, 2)
	expectSyncs(t, "the restarted primary", pc2, 0, 2)
	writeTypes(t, p2.addr(), "", "restarted")
	waitCaughtUp(t, pc2, sc, s)
	waitCaughtUp(t, pc2, rc, p2)
	compareDatasets(t, p2.addr(), "", s.addr())
	compareDatasets(t, p2.addr(), "", r.addr)
}

// TestReplicaAppliesItsStreamDuringBGSAVE: a BGSAVE on a replica takes its
// data set at one instant and encodes it while the primary's stream goes
// on being applied: a write on the primary reaches the replica before the
// BGSAVE of about a million keys ends (before, the stream waited for the file).
// The save may beat the write on a fast machine: the test tries three
// times and fails only if the write always came after the save.
func TestReplicaAppliesItsStreamDuringBGSAVE(t *testing.T) {
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	s := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	pc, sc := client(t, p.addr()), client(t, s.addr())
	fill := exec.Command(redistest.Binary(t, "redis-benchmark"), "-p", strconv.Itoa(p.port), "-t", "set",
		"-n", "1000000", "-r", "100000000", "-d", "64", "-P", "64", "-q")
	if out, err := fill.CombinedOutput(); err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	waitCaughtUp(t, pc, sc, s)
	for try := 0; try < 3; try++ {
		key := "during-bgsave-" + strconv.Itoa(try)
		if got := do(sc, "BGSAVE"); !strings.HasPrefix(got, "Background saving started") {
			t.Fatalf("BGSAVE on the replica: %s", got)
		}
		if got := do(pc, "SET", key, "1"); got != "OK" {
			t.Fatal(got)
		}
		var during bool
		waitUntil(t, "the write on the replica", func() bool {
			inProgress := infoFields(t, sc, "persistence")["rdb_bgsave_in_progress"] == "1"
			if do(sc, "GET", key) != "1" {
				return false
			}
			during = inProgress
			return true
		})
		waitUntil(t, "the BGSAVE's end", func() bool {
			return infoFields(t, sc, "persistence")["rdb_bgsave_in_progress"] == "0"
		})
		if st := infoFields(t, sc, "persistence")["rdb_last_bgsave_status"]; st != "ok" {
			t.Fatalf("BGSAVE: %s\n%s", st, s.stderr.String())
		}
		if during {
			return
		}
	}
	t.Fatal("three times the primary's write reached the replica only after its BGSAVE ended")
}
