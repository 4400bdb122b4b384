package store

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestPrefetchChangesNothing: Prefetch over present, missing, empty, large and
// colliding keys, more keys than PrefetchMax, leaves every key, value, counter and
// idle time as it was.
func TestPrefetchChangesNothing(t *testing.T) {
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprint("collide=", collide), func(t *testing.T) {
			clk := newClock(1_000_000_000)
			s := newTestStore(t, Options{Shards: 4, Now: clk.now})
			if collide {
				s.testHash = func(k []byte) uint64 { return uint64(len(k)) % 3 }
			}
			big := make([]byte, 5000)
			set(t, s, "", "", SetOptions{})
			set(t, s, "big", string(big), SetOptions{})
			for i := range 100 {
				set(t, s, fmt.Sprint("k", i), fmt.Sprint("v", i), SetOptions{})
			}
			clk.advance(10_000)
			keys := bs("", "big", "missing", "k1", "k2", "k99", "k100")
			for i := range 2 * PrefetchMax {
				keys = append(keys, b(fmt.Sprint("k", i*3)))
			}
			before := s.Stats()
			s.Prefetch(keys)
			s.Prefetch(nil)
			if after := s.Stats(); after != before {
				t.Fatalf("stats %+v after Prefetch, %+v before", after, before)
			}
			if idle, ok := s.IdleSeconds(b("k1")); !ok || idle != 10 {
				t.Fatalf("idle time of k1 after Prefetch = %d, %v; want 10 (untouched)", idle, ok)
			}
			if v, ok := mustGet(t, s, "big"); !ok || v != string(big) {
				t.Fatalf("big = %d bytes, %v", len(v), ok)
			}
			for i := range 100 {
				if v, ok := mustGet(t, s, fmt.Sprint("k", i)); !ok || v != fmt.Sprint("v", i) {
					t.Fatalf("k%d = %q, %v", i, v, ok)
				}
			}
		})
	}
}

// TestPrefetchDoesNotWaitForWriters: with a key's shard write-locked, Prefetch
// skips it rather than wait (a pipeline must not stall behind a resize or a
// multi-key write on another loop).
func TestPrefetchDoesNotWaitForWriters(t *testing.T) {
	s := newTestStore(t, Options{Shards: 1})
	set(t, s, "a", "1", SetOptions{})
	l := s.lockKey(b("a"))
	done := make(chan struct{})
	go func() {
		s.Prefetch(bs("a", "b"))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Fatal("Prefetch waited for the write lock")
	}
	s.unlock(l)
}

// TestPrefetchDuringWrites runs Prefetch against concurrent inserts, deletes and
// the resizes they cause; under -race it checks every read it makes is locked.
func TestPrefetchDuringWrites(t *testing.T) {
	s := newTestStore(t, Options{Shards: 2})
	keys := make([][]byte, 2000)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Prefetch(keys[i%len(keys)/PrefetchMax*PrefetchMax:][:PrefetchMax])
		}
	}()
	for round := range 3 {
		for _, k := range keys {
			s.Set(nil, k, k, SetOptions{})
		}
		if round < 2 {
			s.Del(keys)
		}
	}
	close(stop)
	wg.Wait()
	for _, k := range keys {
		if v, ok, _ := s.Get(nil, k); !ok || string(v) != string(k) {
			t.Fatalf("%s = %q, %v", k, v, ok)
		}
	}
}

// BenchmarkGetRandom16 reads windows of 16 random keys of a million, as a
// pipeline of 16 GETs does, without and with Prefetch of each window first.
// The keyspace is larger than the CPU caches, so each lookup's slot, entry
// and block miss; the comparison is what overlapping those misses saves.
func BenchmarkGetRandom16(b *testing.B) {
	const n = 1 << 20
	s := New(Options{ActiveExpireInterval: -1})
	b.Cleanup(s.Close)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i) + ":000000")
		s.Set(nil, keys[i], []byte("value"), SetOptions{})
	}
	order := make([][]byte, 1<<16)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range order {
		order[i] = keys[rng.IntN(n)]
	}
	for _, prefetch := range []bool{false, true} {
		b.Run(fmt.Sprint("prefetch=", prefetch), func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				w := order[i&(len(order)-1):][:PrefetchMax]
				i += PrefetchMax
				if prefetch {
					s.Prefetch(w)
				}
				for _, k := range w {
					var ok bool
					if buf, ok, _ = s.Get(buf[:0], k); !ok {
						b.Fatal("miss")
					}
				}
			}
		})
	}
}
