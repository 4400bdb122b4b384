package store

import (
	"testing"
)

// checkInvariants verifies (holding each shard's read lock; a failure leaves it held) the internal bookkeeping of every shard: counts, the volatile
// count, the expiry lower bound, memory accounting, that each entry is reachable from its
// home slot and that each slot points at a live entry.
func checkInvariants(t testing.TB, s *Store) {
	t.Helper()
	var used int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		live, volatile, slots := 0, 0, 0
		var accounted int64
		for id := range sh.entries {
			e := &sh.entries[id]
			if e.kind() == kindFree {
				continue
			}
			live++
			accounted += int64(sh.arena.blockBytes(e.ref, e.size())) + entryOverhead
			if at := e.expireAt(); at != 0 {
				volatile++
				if sh.nextExpiry == 0 || at < sh.nextExpiry {
					t.Fatalf("shard %d: expiry %d below the bound %d", i, at, sh.nextExpiry)
				}
			}
			if _, got := sh.find(e.hash, sh.key(e)); got != id {
				t.Fatalf("shard %d: entry %d (%q) not reachable, find gave %d", i, id, sh.key(e), got)
			}
			if int(s.hash(sh.key(e))>>s.shardShift) != i {
				t.Fatalf("key %q in the wrong shard %d", sh.key(e), i)
			}
		}
		for _, slot := range sh.index {
			if slot == 0 {
				continue
			}
			slots++
			if sh.entries[int(slot&slotIDMask)-1].kind() == kindFree {
				t.Fatalf("shard %d: slot points at a free entry", i)
			}
		}
		if live != sh.count || slots != sh.count || volatile != sh.volatile || accounted != sh.used {
			t.Fatalf("shard %d: live %d slots %d count %d, volatile %d/%d, used %d/%d",
				i, live, slots, sh.count, volatile, sh.volatile, accounted, sh.used)
		}
		used += sh.used
		sh.mu.RUnlock()
	}
	if used != s.used.Load() {
		t.Fatalf("store used %d, shards sum to %d", s.used.Load(), used)
	}
}
