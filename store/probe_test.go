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
func TestProbeLengthsMatchUniformHashing(t *testing.T) {
	s := New(Options{ActiveExpireInterval: -1})
	defer s.Close()
	const n = 100_000
	for i := 0; i < n; i++ {
		s.Set(fmt.Appendf(nil, "key:%012d", i), []byte("xxx"), SetOptions{}, nil)
	}
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
	t.Logf("%d keys: %.3f probes per hit (uniform hashing predicts %.3f), longest %d, %.4f tag false positives per hit",
		n, avg, want, longest, float64(falseTags)/n)
	if avg > want*1.15 {
		t.Errorf("average probes per hit %.3f, want at most 1.15 x %.3f: hash bits are correlated", avg, want)
	}
	// An 8-bit tag passes about 1/256 of the foreign slots a probe visits.
	if fp := float64(falseTags) / n; fp > 0.02 {
		t.Errorf("tag false positives per hit %.4f, want < 0.02: tag bits correlate with slot bits", fp)
	}
}
