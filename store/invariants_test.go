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
		live, volatile, slots, objects := 0, 0, 0, 0
		var accounted int64
		for id := range sh.entries {
			e := &sh.entries[id]
			if e.kind() == kindFree {
				continue
			}
			live++
			accounted += int64(sh.arena.blockBytes(e.ref, e.size())) + entryOverhead
			if isObject(e.kind()) {
				o := sh.objectOf(e)
				if o == nil || uint8(o.Kind()) != e.kind() || o.Len() == 0 {
					t.Fatalf("shard %d: key %q of kind %d holds object %v", i, sh.key(e), e.kind(), o)
				}
				accounted += o.Size()
				objects++
			}
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
		tabled := 0
		for _, o := range sh.objs {
			if o != nil {
				tabled++
			}
		}
		if tabled != objects || len(sh.objs)-tabled != len(sh.freeObjs) {
			t.Fatalf("shard %d: %d objects in the table (%d free slots of %d), %d keys hold one", i, tabled, len(sh.freeObjs), len(sh.objs), objects)
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
		if sh.next != nil {
			// A migration under way: next holds exactly the live ids below migrated.
			want, got := 0, 0
			for id := 0; id < sh.migrated; id++ {
				if sh.entries[id].kind() != kindFree {
					want++
				}
			}
			for _, slot := range sh.next {
				if slot != 0 {
					got++
					if id := int(slot&slotIDMask) - 1; id >= sh.migrated || sh.entries[id].kind() == kindFree {
						t.Fatalf("shard %d: next index holds id %d (migrated %d, kind %d)", i, id, sh.migrated, sh.entries[id].kind())
					}
				}
			}
			if got != want {
				t.Fatalf("shard %d: next index holds %d ids, want %d", i, got, want)
			}
			mask := len(sh.next) - 1
			for id := 0; id < sh.migrated; id++ {
				e := &sh.entries[id]
				if e.kind() == kindFree {
					continue
				}
				want := (e.hash>>slotIDBits)<<slotIDBits | uint32(id+1)
				j := int(e.hash) & mask
				for sh.next[j] != want {
					if sh.next[j] == 0 {
						t.Fatalf("shard %d: id %d not reachable in the next index", i, id)
					}
					j = (j + 1) & mask
				}
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
