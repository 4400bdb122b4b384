package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestDisklessSyncDelayGathersReplicas: with repl-diskless-sync, a primary
// waits repl-diskless-sync-delay seconds from the first replica asking for
// a full sync, so that others share its snapshot (INFO lists the waiting
// replica as wait_bgsave), and starts at once when
// repl-diskless-sync-max-replicas are waiting; with the limit off, the
// delay alone starts it.
func TestDisklessSyncDelayGathersReplicas(t *testing.T) {
	p := startBinary(t, "--dir", t.TempDir(), "--repl-diskless-sync", "yes",
		"--repl-diskless-sync-delay", "3600", "--repl-diskless-sync-max-replicas", "2")
	primary := client(t, p.addr())
	if got := do(primary, "SET", "k", "v"); got != "OK" {
		t.Fatal(got)
	}
	startRedisReplica(t, p.port)
	waitUntil(t, "the first replica waiting", func() bool {
		return strings.Contains(replInfo(t, primary)["slave0"], "state=wait_bgsave")
	})
	holdsFor(t, "the first replica waits for a second one (or the hour's delay)", func() bool {
		info := replInfo(t, primary)
		return info["connected_slaves"] == "1" && strings.Contains(info["slave0"], "state=wait_bgsave")
	})
	startRedisReplica(t, p.port)
	waitReplicaOnline(t, primary, 2)
	if !strings.Contains(p.stderr.String(), `msg="starting a diskless full sync" replicas=2`) {
		t.Fatalf("the two replicas did not share one snapshot; the log:\n%s", p.stderr.String())
	}

	// No limit: the delay alone starts the sync of a third replica.
	for _, kv := range [][2]string{{"repl-diskless-sync-max-replicas", "0"}, {"repl-diskless-sync-delay", "1"}} {
		if got := do(primary, "CONFIG", "SET", kv[0], kv[1]); got != "OK" {
			t.Fatalf("CONFIG SET %s %s: %s", kv[0], kv[1], got)
		}
	}
	third := startRedisReplica(t, p.port)
	waitReplicaOnline(t, primary, 3)
	if got := do(client(t, third.addr), "GET", "k"); got != "v" {
		t.Fatalf("the third replica's GET k: %s", got)
	}
	// At least the second: 1s, 1.02s, ... (not 150ms).
	if !regexp.MustCompile(`msg="starting a diskless full sync" replicas=1 waited=([1-9][0-9.]*s|[1-9]m)`).MatchString(p.stderr.String()) {
		t.Fatalf("the third replica's sync did not wait the delay; the log:\n%s", p.stderr.String())
	}
}
