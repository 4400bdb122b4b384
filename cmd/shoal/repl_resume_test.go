package main

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

// A replica's snapshot file records its history (the aux fields
// repl-stream-db, repl-id, repl-offset, as Redis 7.0 writes them), so a
// replica restarted from its dump.rdb asks for PSYNC <id> <offset+1> and
// continues with +CONTINUE while the primary's backlog covers the gap.

// TestRestartedReplicaResyncsPartially: a shoal replica of a shoal
// primary saves with BGSAVE while the primary takes redis-benchmark's
// writes, is killed -9, and restarted from the file: the primary counts a
// partial resync and no new full one, and every key matches. BGSAVE takes
// the data set at one instant between two batches of the stream, so the
// file is the data set of exactly its offset; a file one write ahead or
// behind would leave INCR and LPUSH keys different.
func TestRestartedReplicaResyncsPartially(t *testing.T) {
	ctx := context.Background()
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--repl-backlog-size", "256mb")
	pc := authClient(t, p.addr(), "", 0)
	writeTypes(t, p.addr(), "", "before")
	dir := t.TempDir()
	args := []string{"--dir", dir, "--enable-debug-command", "yes", "--save", "3600 1", "--replicaof", "127.0.0.1 " + strconv.Itoa(p.port)}
	s := startBinary(t, args...)
	sc := authClient(t, s.addr(), "", 0)
	waitCaughtUp(t, pc, sc, s)

	wait := benchmarkWrites(t, p.addr())
	// The save comes once the replica applied some of the writes: its
	// offset is past the full sync's.
	synced := atoi(infoFields(t, sc, "replication")["slave_repl_offset"])
	deadline := time.Now().Add(60 * time.Second)
	for atoi(infoFields(t, sc, "replication")["slave_repl_offset"]) == synced {
		if time.Now().After(deadline) {
			t.Fatal("the replica applied none of the writes in 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := sc.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(60 * time.Second)
	for infoFields(t, sc, "persistence")["rdb_bgsave_in_progress"] != "0" {
		if time.Now().After(deadline) {
			t.Fatal("BGSAVE did not end in 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := infoFields(t, sc, "persistence")["rdb_last_bgsave_status"]; st != "ok" {
		t.Fatalf("BGSAVE: %s\n%s", st, s.stderr.String())
	}
	_ = s.stop(t, syscall.SIGKILL)
	wait()
	writeTypes(t, p.addr(), "", "gap")
	before := infoFields(t, pc, "stats")

	s = startBinary(t, args...)
	sc = authClient(t, s.addr(), "", 0)
	waitCaughtUp(t, pc, sc, s)
	if t.Failed() {
		return
	}
	defer func() {
		if t.Failed() {
			t.Logf("the restarted replica's log:\n%s", s.stderr.String())
		}
	}()
	expectSyncs(t, "the primary", pc, atoi(before["sync_full"]), atoi(before["sync_partial_ok"])+1)
	compareDatasets(t, p.addr(), "", s.addr())
}

// TestRestartedReplicaOfRedisResyncsPartially: the same with redis-server
// as the primary and the file written at shutdown (SIGTERM with a save
// policy), which redis-check-rdb accepts.
func TestRestartedReplicaOfRedisResyncsPartially(t *testing.T) {
	rAddr := redistest.StartServer(t, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	_, rPort, _ := net.SplitHostPort(rAddr)
	rc := authClient(t, rAddr, "", 0)
	writeTypes(t, rAddr, "", "before")
	dir := t.TempDir()
	args := []string{"--dir", dir, "--enable-debug-command", "yes", "--save", "3600 1", "--replicaof", "127.0.0.1 " + rPort}
	s := startBinary(t, args...)
	sc := authClient(t, s.addr(), "", 0)
	waitCaughtUp(t, rc, sc, s)
	// The stream ends in database 9: the file's repl-stream-db.
	if err := authClient(t, rAddr, "", 9).Incr(context.Background(), "db9").Err(); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, rc, sc, s)
	if err := s.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("shoal exited with %v", err)
	}
	redistest.CheckRDB(t, filepath.Join(dir, "dump.rdb"))
	// No SELECT before this one: the restarted replica must be in 9.
	if err := authClient(t, rAddr, "", 9).Incr(context.Background(), "db9").Err(); err != nil {
		t.Fatal(err)
	}
	writeTypes(t, rAddr, "", "gap")

	s = startBinary(t, args...)
	sc = authClient(t, s.addr(), "", 0)
	waitCaughtUp(t, rc, sc, s)
	expectSyncs(t, "redis-server", rc, 1, 1)
	compareDatasets(t, rAddr, "", s.addr())
}
