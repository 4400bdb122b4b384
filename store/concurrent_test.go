package store

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestConcurrentIncrByIsAtomic(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4})
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := 0; i < each; i++ {
				if _, err := s.IncrBy(b("c"+strconv.Itoa(i%3)), 1); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	total := int64(0)
	for i := 0; i < 3; i++ {
		v, _ := mustGet(t, s, "c"+strconv.Itoa(i))
		n, _ := strconv.ParseInt(v, 10, 64)
		total += n
	}
	if total != workers*each {
		t.Fatalf("counters sum to %d, want %d", total, workers*each)
	}
}

// TestMultiKeyOpsAreAtomic: writers MSet a group of keys (spread over shards) to one
// value; readers MGet the group and must never see two different values.
func TestMultiKeyOpsAreAtomic(t *testing.T) {
	s := newTestStore(t, Options{Shards: 16})
	group := bs("g:a", "g:b", "g:c", "g:d", "g:e", "g:f", "g:g", "g:h", "g:i", "g:j")
	pairs := func(v string) [][]byte {
		var p [][]byte
		for _, k := range group {
			p = append(p, k, b(v))
		}
		return p
	}
	if err := s.MSet(pairs("0")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				s.MSet(pairs(strconv.Itoa(w*1_000_000 + i)))
			}
		})
	}
	torn := 0
	for i := 0; i < 3000; i++ {
		var first string
		s.MGet(group, func(j int, v []byte, found bool) {
			if !found {
				torn++
			} else if j == 0 {
				first = string(v)
			} else if string(v) != first {
				torn++
			}
		})
	}
	stop.Store(true)
	wg.Wait()
	if torn != 0 {
		t.Fatalf("MGet saw %d torn MSets", torn)
	}
}

// TestConcurrentMixedOps hammers every operation from several goroutines (run it with
// -race) and then checks the shards' bookkeeping. The race detector does not see memory
// outside the Go heap, so it runs a second time with the store's pages on the heap.
func TestConcurrentMixedOps(t *testing.T) {
	t.Run("offheap", func(t *testing.T) { testConcurrentMixedOps(t, false) })
	t.Run("heap", func(t *testing.T) { testConcurrentMixedOps(t, true) })
}

func testConcurrentMixedOps(t *testing.T, heap bool) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 8, Now: clk.now, Policy: AllKeysLRU})
	if heap {
		useHeap(s)
	}
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := 0; w < 6; w++ {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			var dst []byte
			for i := 0; i < 4000; i++ {
				k := b("k" + strconv.Itoa(r.IntN(300)))
				k2 := b("k" + strconv.Itoa(r.IntN(300)))
				switch r.IntN(16) {
				case 0:
					s.Set(nil, k, make([]byte, r.IntN(6000)), SetOptions{ExpireAt: clk.now() + int64(r.IntN(50))})
				case 1:
					s.Set(dst[:0], k, b("12"), SetOptions{Get: true, KeepTTL: true})
				case 2:
					dst, _, _ = s.Get(dst[:0], k)
				case 3:
					s.Del([][]byte{k, k2})
				case 4:
					s.IncrBy(k, 1)
				case 5:
					s.Append(k, b("xyz"))
				case 6:
					s.Rename(k, k2)
				case 7:
					s.MSet([][]byte{k, b("a"), k2, b("b")})
				case 8:
					s.MGet([][]byte{k, k2}, func(int, []byte, bool) {})
				case 9:
					s.Expire(k, clk.now()+int64(r.IntN(100)), ExpireCond(r.IntN(5)))
				case 10:
					s.Scan(uint64(r.IntN(64)), b("k1*"), 10, "")
				case 11:
					s.RandomKey()
					s.DBSize()
				case 12:
					s.SetRange(k, int64(r.IntN(100)), b("zz"))
				case 13:
					clk.advance(1)
				case 14:
					s.GetEx(dst[:0], k, GetExOptions{Persist: true})
				case 15:
					if r.IntN(50) == 0 {
						s.SetMaxMemory(int64(r.IntN(2)) * 200_000)
					}
				}
			}
		})
	}
	bg := make(chan struct{})
	go func() {
		defer close(bg)
		for !stop.Load() {
			s.activeExpire(time.Millisecond)
			s.Keys(b("*"))
		}
	}()
	wg.Wait()
	stop.Store(true)
	<-bg
	checkInvariants(t, s)
}

// TestScanReturnsStableKeysDuringGrowthAndShrink: keys present for the whole scan are all
// returned while other goroutines make the shards' tables double and halve repeatedly.
func TestScanReturnsStableKeysDuringGrowthAndShrink(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4})
	const stable = 2000
	for i := 0; i < stable; i++ {
		set(t, s, "stable:"+strconv.Itoa(i), "v", SetOptions{})
	}
	var stop atomic.Bool
	var resizes atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Go(func() {
			var keys [][]byte
			for round := 0; !stop.Load(); round++ {
				n := 2000 + round%5*4000
				for i := 0; i < n; i++ {
					k := b("churn:" + strconv.Itoa(w) + ":" + strconv.Itoa(i))
					s.Set(nil, k, b("x"), SetOptions{})
					keys = append(keys, k)
				}
				s.Del(keys) // grows then shrinks every shard's index
				keys = keys[:0]
				resizes.Add(1)
			}
		})
	}
	for pass := 0; pass < 5 || resizes.Load() < 4; pass++ {
		seen := scanAll(s, "stable:*", 5, nil)
		if len(seen) != stable {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("pass %d: scan returned %d of %d stable keys", pass, len(seen), stable)
		}
	}
	stop.Store(true)
	wg.Wait()
	checkInvariants(t, s)
}

// TestScanCursorAcrossResizes drives the resize between scan calls deterministically:
// after each call the table doubles or halves.
func TestScanCursorAcrossResizes(t *testing.T) {
	s := newTestStore(t, Options{Shards: 2})
	for i := 0; i < 500; i++ {
		set(t, s, "s"+strconv.Itoa(i), "v", SetOptions{})
	}
	seen := scanAll(s, "s*", 40, func(call int) {
		if call%2 == 0 {
			for i := 0; i < 3000; i++ {
				set(t, s, "grow"+strconv.Itoa(i), "v", SetOptions{})
			}
		} else {
			var ks [][]byte
			for i := 0; i < 3000; i++ {
				ks = append(ks, b("grow"+strconv.Itoa(i)))
			}
			s.Del(ks)
		}
	})
	if len(seen) != 500 {
		t.Fatalf("scan across resizes returned %d of 500 keys", len(seen))
	}
}

// scanAll runs a SCAN of s for match to the end, count keys a call, and returns
// how many times each key came back. between, if not nil, runs after each call
// but the last, numbered from 0.
func scanAll(s *Store, match string, count int, between func(call int)) map[string]int {
	seen := map[string]int{}
	cursor := uint64(0)
	for call := 0; ; call++ {
		var ks [][]byte
		cursor, ks = s.Scan(cursor, b(match), count, "")
		for _, k := range ks {
			seen[string(k)]++
		}
		if cursor == 0 {
			return seen
		}
		if between != nil {
			between(call)
		}
	}
}
