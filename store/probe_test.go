package store

import (
	"fmt"
	"testing"
)

// TestProbeLengthsMatchUniformHashing guards the bit split of the 64-bit key hash: the top
// bits choose the shard, the low bits the home slot, bits 24..31 the tag. If these ever
// overlapped (say the slot came from the shard bits), every key of a shard would share a
// home slot and lookups would walk whole clusters. With independent bits, linear probing
// at load a costs (1+1/(1-a))/2 probes per successful lookup on average (Knuth), which is
// what this checks per shard on the keys redis-benchmark and shoal-load use.
//
// The churn case deletes and re-adds keys so that backward-shift deletion and the shrink
// and grow rehashes have run: they must not leave longer runs than a fresh table.
func TestProbeLengthsMatchUniformHashing(t *testing.T) {
	const n = 100_000
	key := func(i int) []byte { return fmt.Appendf(nil, "key:%012d", i) }
	t.Run("fresh", func(t *testing.T) {
		s := New(Options{ActiveExpireInterval: -1})
		defer s.Close()
		for i := 0; i < n; i++ {
			s.Set(nil, key(i), []byte("xxx"), SetOptions{})
		}
		checkProbeLengths(t, s)
	})
	t.Run("churn", func(t *testing.T) {
		s := New(Options{ActiveExpireInterval: -1})
		defer s.Close()
		// Smaller than the fresh case so that it stays quick under -race.
		const m = 30_000
		for i := 0; i < 8*m/3; i++ {
			s.Set(nil, key(i), []byte("xxx"), SetOptions{})
		}
		// Delete 7 keys in 8 (shrinking most shards' index), then add new keys back up
		// to m live keys: what is left went through deletes, shrinks and regrowth.
		for i := 0; i < 8*m/3; i++ {
			if i%8 != 0 {
				s.Del([][]byte{key(i)})
			}
		}
		for i := 8 * m / 3; s.DBSize() < m; i++ {
			s.Set(nil, key(i), []byte("xxx"), SetOptions{})
		}
		checkProbeLengths(t, s)
	})
}

func checkProbeLengths(t *testing.T, s *Store) {
	t.Helper()
	n := float64(s.DBSize())
	var probes, expected float64
	var falseTags, longest int
	for si := range s.shards {
		sh := &s.shards[si]
		mask := len(sh.index) - 1
		load := float64(sh.count) / float64(len(sh.index))
		if load > 0.75 {
			t.Fatalf("shard %d: load %.3f above 3/4 (%d keys, %d slots)", si, load, sh.count, len(sh.index))
		}
		expected += float64(sh.count) * (1 + 1/(1-load)) / 2
		for i, slot := range sh.index {
			if slot == 0 {
				continue
			}
			h := sh.entries[int(slot&slotIDMask)-1].hash
			home := int(h) & mask
			probes += float64((i-home)&mask + 1)
			longest = max(longest, (i-home)&mask+1)
			for j := home; j != i; j = (j + 1) & mask {
				if sh.index[j]>>slotIDBits == h>>slotIDBits {
					falseTags++ // a slot whose tag matches but whose key does not
				}
			}
		}
	}
	avg, want := probes/n, expected/n
	t.Logf("%.0f keys: %.3f probes per hit (uniform hashing predicts %.3f), longest %d, %.4f tag false positives per hit",
		n, avg, want, longest, float64(falseTags)/n)
	if avg > want*1.15 {
		t.Errorf("average probes per hit %.3f, want at most 1.15 x %.3f: hash bits are correlated", avg, want)
	}
	// An 8-bit tag passes about 1/256 of the foreign slots a probe visits.
	if fp := float64(falseTags) / n; fp > 0.02 {
		t.Errorf("tag false positives per hit %.4f, want < 0.02: tag bits correlate with slot bits", fp)
	}
}
