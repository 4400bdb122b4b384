package store

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// liveCount is the shards' own count, which DBSize would purge first.
func liveCount(s *Store) int {
	n := 0
	for i := range s.shards {
		s.shards[i].mu.RLock()
		n += s.shards[i].count
		s.shards[i].mu.RUnlock()
	}
	return n
}

func TestActiveExpireReclaimsUntouchedKeys(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 8, Now: clk.now})
	for i := 0; i < 4000; i++ {
		o := SetOptions{}
		if i%4 != 0 {
			o.ExpireAt = clk.now() + 100
		}
		set(t, s, "k"+strconv.Itoa(i), "v", o)
	}
	clk.advance(101)
	// Each cycle keeps sampling a shard while over a quarter of its sample expired, so
	// with 3/4 of the keys expired a generous budget reclaims them all.
	for c := 0; c < 10 && liveCount(s) > 1000; c++ {
		s.activeExpire(time.Second)
	}
	if n := liveCount(s); n != 1000 {
		t.Fatalf("after active expiry %d keys remain in the shards, want the 1000 without TTL", n)
	}
	if st := s.Stats(); st.ExpiredKeys != 3000 || st.Expires != 0 {
		t.Fatalf("stats: %+v", st)
	}
	checkInvariants(t, s)
}

func TestActiveExpirerRunsInBackground(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 4, Now: clk.now, ActiveExpireInterval: 5 * time.Millisecond})
	for i := 0; i < 500; i++ {
		set(t, s, "k"+strconv.Itoa(i), "v", SetOptions{ExpireAt: clk.now() + 50})
	}
	clk.advance(51)
	deadline := time.Now().Add(10 * time.Second) // a bound on a hang, not a timing assertion
	for liveCount(s) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("background expirer left %d expired keys", liveCount(s))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fill(t *testing.T, s *Store, prefix string, n int, o SetOptions) (errs int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, _, _, err := s.Set(nil, b(prefix+strconv.Itoa(i)), b("0123456789"), o); err != nil {
			if !errors.Is(err, ErrOOM) {
				t.Fatal(err)
			}
			errs++
		}
	}
	return errs
}

func TestNoEvictionRejectsWrites(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4, MaxMemory: 20_000})
	if fill(t, s, "k", 1000, SetOptions{}) == 0 {
		t.Fatal("no write failed with ErrOOM under noeviction")
	}
	used := s.Stats().UsedMemory
	if used > 20_000 {
		t.Fatalf("used %d over maxmemory 20000", used)
	}
	n := s.DBSize()
	if _, ok := mustGet(t, s, "k0"); !ok {
		t.Fatal("reads must keep working when full")
	}
	if _, err := s.IncrBy(b("counter"), 1); !errors.Is(err, ErrOOM) {
		t.Fatalf("IncrBy when full: %v", err)
	}
	s.Del(bs("k0", "k1", "k2", "k3", "k4"))
	if s.DBSize() != n-5 {
		t.Fatal("Del must work when full")
	}
	if _, _, _, err := s.Set(nil, b("again"), b("v"), SetOptions{}); err != nil {
		t.Fatalf("write after freeing memory: %v", err)
	}
	s.SetMaxMemory(0)
	if fill(t, s, "more", 100, SetOptions{}) != 0 {
		t.Fatal("writes failed with maxmemory removed")
	}
}

// survivors counts the keys prefix0 to prefix<n-1> still in s, those of
// the first half (the ones a test kept using) and those of the second.
func survivors(s *Store, prefix string, n int) (firstHalf, secondHalf int) {
	for i := 0; i < n; i++ {
		if s.Exists(bs(prefix+strconv.Itoa(i))) == 1 {
			if i < n/2 {
				firstHalf++
			} else {
				secondHalf++
			}
		}
	}
	return firstHalf, secondHalf
}

func TestAllKeysLRUKeepsRecentlyUsed(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 4, Now: clk.now, Policy: AllKeysLRU})
	fill(t, s, "old", 1000, SetOptions{})
	s.SetMaxMemory(s.Stats().UsedMemory + 1000)
	clk.advance(100_000) // 100 s later the first half is read again
	for i := 0; i < 500; i++ {
		mustGet(t, s, "old"+strconv.Itoa(i))
	}
	clk.advance(10_000)
	if fill(t, s, "new", 500, SetOptions{}) != 0 {
		t.Fatal("a write failed although keys could be evicted")
	}
	touched, untouched := survivors(s, "old", 1000)
	st := s.Stats()
	if st.EvictedKeys < 400 || st.UsedMemory > s.MaxMemory() {
		t.Fatalf("evicted %d, used %d of %d", st.EvictedKeys, st.UsedMemory, s.MaxMemory())
	}
	// Sampled LRU is approximate; the recently read half must still clearly win.
	if touched < 4*untouched || touched < 400 {
		t.Fatalf("survivors: %d recently read vs %d idle", touched, untouched)
	}
	checkInvariants(t, s)
}

func TestVolatilePoliciesOnlyEvictKeysWithTTL(t *testing.T) {
	for _, p := range []Policy{VolatileLRU, VolatileTTL} {
		t.Run(p.String(), func(t *testing.T) {
			clk := newClock(1_000_000)
			s := newTestStore(t, Options{Shards: 4, Now: clk.now, Policy: p})
			fill(t, s, "keep", 300, SetOptions{})
			for i := 0; i < 300; i++ {
				// Later keys expire later: volatile-ttl must evict the early ones first.
				set(t, s, "ttl"+strconv.Itoa(i), "0123456789", SetOptions{ExpireAt: clk.now() + 1_000_000 + int64(i)*1000})
			}
			s.SetMaxMemory(s.Stats().UsedMemory)
			if fill(t, s, "new", 100, SetOptions{}) != 0 {
				t.Fatal("writes failed while keys with TTL remained")
			}
			for i := 0; i < 300; i++ {
				if s.Exists(bs("keep"+strconv.Itoa(i))) != 1 {
					t.Fatalf("keep%d (no TTL) was evicted under %s", i, p)
				}
			}
			if p == VolatileTTL {
				early, late := 0, 0
				for i := 0; i < 100; i++ {
					early += s.Exists(bs("ttl" + strconv.Itoa(i)))
					late += s.Exists(bs("ttl" + strconv.Itoa(200+i)))
				}
				if early*2 > late {
					t.Fatalf("volatile-ttl kept %d of the 100 soonest-expiring vs %d of the latest", early, late)
				}
			}
			// Once only keys without TTL remain, writes fail.
			if errs := fill(t, s, "flood", 1000, SetOptions{}); errs == 0 {
				t.Fatal("no ErrOOM after every volatile key was evicted")
			}
			if s.Stats().Expires != 0 {
				t.Fatalf("%d volatile keys left while writes fail", s.Stats().Expires)
			}
			checkInvariants(t, s)
		})
	}
}

func TestAllKeysRandomStaysUnderLimit(t *testing.T) {
	s := newTestStore(t, Options{Shards: 8, MaxMemory: 50_000, Policy: AllKeysRandom})
	for round := 0; round < 3; round++ {
		if errs := fill(t, s, fmt.Sprint("r", round, ":"), 2000, SetOptions{}); errs != 0 {
			t.Fatalf("%d writes failed under allkeys-random", errs)
		}
		if st := s.Stats(); st.UsedMemory > 50_000 || st.EvictedKeys == 0 {
			t.Fatalf("round %d: %+v", round, st)
		}
	}
	big := make([]byte, 60_000)
	if _, _, _, err := s.Set(nil, b("huge"), big, SetOptions{}); !errors.Is(err, ErrOOM) {
		t.Fatalf("a value larger than maxmemory: %v, want ErrOOM", err)
	}
	checkInvariants(t, s)
}

func TestUsedMemoryReturnsToZero(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4})
	var keys [][]byte
	for i := 0; i < 3000; i++ {
		k := b("k" + strconv.Itoa(i))
		keys = append(keys, k)
		s.Set(nil, k, make([]byte, i%5000), SetOptions{})
	}
	if st := s.Stats(); st.UsedMemory < 3000*entryOverhead {
		t.Fatalf("used %d for 3000 keys", st.UsedMemory)
	}
	checkInvariants(t, s)
	s.Del(keys)
	if st := s.Stats(); st.UsedMemory != 0 || st.Keys != 0 {
		t.Fatalf("after deleting everything: %+v", st)
	}
	for i := range s.shards {
		if len(s.shards[i].arena.pages) != 0 || len(s.shards[i].entries) != 0 {
			t.Fatalf("shard %d kept %d pages and %d entries after emptying", i, len(s.shards[i].arena.pages), len(s.shards[i].entries))
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range []Policy{NoEviction, AllKeysRandom, AllKeysLRU, VolatileLRU, VolatileTTL, VolatileRandom, AllKeysLFU, VolatileLFU} {
		if got, err := ParsePolicy(p.String()); got != p || err != nil {
			t.Errorf("ParsePolicy(%q) = %v %v", p.String(), got, err)
		}
	}
	if _, err := ParsePolicy("allkeys-mru"); err == nil {
		t.Error("unsupported policy accepted")
	}
	if p, _ := ParsePolicy("AllKeys-LRU"); p != AllKeysLRU {
		t.Error("ParsePolicy is not case-insensitive")
	}
}

// TestExternalMemoryCountsAgainstMaxMemory: memory outside the store (the
// clients' output buffers, as Redis counts them) takes room under
// maxmemory: with it, writes fail under noeviction and evict under the
// other policies; without it they fit again.
func TestExternalMemoryCountsAgainstMaxMemory(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4, MaxMemory: 100_000})
	if fill(t, s, "k", 100, SetOptions{}) != 0 {
		t.Fatal("100 small keys do not fit in 100 KB")
	}
	s.SetExternalMemory(100_000)
	if _, _, _, err := s.Set(nil, b("new"), b("v"), SetOptions{}); !errors.Is(err, ErrOOM) {
		t.Fatalf("Set with external memory at maxmemory, under noeviction: %v, want ErrOOM", err)
	}
	s.SetPolicy(AllKeysRandom)
	n := s.DBSize()
	if _, _, _, err := s.Set(nil, b("new"), b("v"), SetOptions{}); !errors.Is(err, ErrOOM) {
		// Evicting every key cannot make room the clients hold.
		t.Fatalf("Set with external memory at maxmemory, allkeys-random: %v, want ErrOOM once all is evicted", err)
	}
	if s.DBSize() >= n {
		t.Fatalf("no key was evicted for the external memory (%d keys, %d before)", s.DBSize(), n)
	}
	s.SetExternalMemory(0)
	if _, _, _, err := s.Set(nil, b("new"), b("v"), SetOptions{}); err != nil {
		t.Fatalf("Set once the external memory is gone: %v", err)
	}
	if s.Stats().UsedMemory > 100_000 {
		t.Fatalf("UsedMemory %d", s.Stats().UsedMemory)
	}
}
