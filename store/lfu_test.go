package store

import (
	"strconv"
	"testing"
)

// TestLFUCounterAsRedis: under allkeys-lfu a new key starts at 5, its
// first access takes it to 6 for sure, and the counter decays by one per
// lfu-decay-time minute without accesses.
func TestLFUCounterAsRedis(t *testing.T) {
	clk := newClock(1_000_000_000)
	s := newTestStore(t, Options{Shards: 4, Now: clk.now, Policy: AllKeysLFU})
	set(t, s, "k", "v", SetOptions{})
	if f, _ := s.Frequency(b("k")); f != lfuInitVal {
		t.Fatalf("a new key's counter is %d, want %d", f, lfuInitVal)
	}
	mustGet(t, s, "k")
	if f, _ := s.Frequency(b("k")); f != lfuInitVal+1 {
		t.Fatalf("after one read the counter is %d, want %d", f, lfuInitVal+1)
	}
	for i := 0; i < 1000; i++ {
		mustGet(t, s, "k")
	}
	// Redis's table for lfu-log-factor 10: 1000 hits read 18.
	hot, _ := s.Frequency(b("k"))
	if hot < 10 || hot > 32 { // 3000 trials ranged 14-27, median 19
		t.Fatalf("after 1000 reads the logarithmic counter is %d, want about 18", hot)
	}
	clk.advance(3 * 60_000) // three minutes
	if f, _ := s.Frequency(b("k")); f != hot-3 {
		t.Fatalf("three idle minutes later the counter is %d, want %d", f, hot-3)
	}
}

// TestLFUEvictsTheLeastUsed: with allkeys-lfu, keys read often survive
// eviction and keys never read go first; volatile-random only takes keys
// with a TTL.
func TestLFUEvictsTheLeastUsed(t *testing.T) {
	s := newTestStore(t, Options{Shards: 8, Policy: AllKeysLFU})
	val := string(make([]byte, 200))
	for i := 0; i < 1000; i++ {
		set(t, s, "k"+strconv.Itoa(i), val, SetOptions{})
	}
	for r := 0; r < 20; r++ {
		for i := 0; i < 500; i++ { // the first half is read 20 times
			mustGet(t, s, "k"+strconv.Itoa(i))
		}
	}
	s.SetMaxMemory(s.Stats().UsedMemory * 6 / 10)
	for i := 0; i < 200; i++ {
		set(t, s, "new"+strconv.Itoa(i), val, SetOptions{})
	}
	hot, cold := survivors(s, "k", 1000)
	if hot < 4*cold || hot < 400 {
		t.Fatalf("survivors: %d often read, %d never read", hot, cold)
	}

	v := newTestStore(t, Options{Shards: 4, Policy: VolatileRandom})
	clk := v.Now()
	for i := 0; i < 400; i++ {
		o := SetOptions{}
		if i%2 == 0 {
			o.ExpireAt = clk + 3_600_000
		}
		set(t, v, "v"+strconv.Itoa(i), val, o)
	}
	v.SetMaxMemory(v.Stats().UsedMemory * 8 / 10)
	for i := 0; i < 50; i++ {
		set(t, v, "w"+strconv.Itoa(i), val, SetOptions{ExpireAt: clk + 3_600_000})
	}
	for i := 1; i < 400; i += 2 {
		if v.Exists(bs("v"+strconv.Itoa(i))) == 0 {
			t.Fatalf("volatile-random evicted v%d, which has no TTL", i)
		}
	}
	if v.Stats().EvictedKeys == 0 {
		t.Fatal("volatile-random evicted nothing")
	}
}
