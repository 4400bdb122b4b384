package store

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// recordingLog is a DeletionLog that records what the store tells it, and
// whose Enter refuses the shard indexes in busy.
type recordingLog struct {
	mu      sync.Mutex
	replica bool
	ignore  bool
	busy    map[int]bool
	deleted []string // "key" or "key evicted"
	entered int
	left    int
}

func (r *recordingLog) log() *DeletionLog {
	return &DeletionLog{
		Replica:         func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.replica },
		IgnoreMaxMemory: func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.ignore },
		Enter: func(i int, wait bool) (bool, bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.busy[i] {
				return false, false
			}
			r.entered++
			return true, true
		},
		Leave: func(i int, held bool) { r.mu.Lock(); r.left++; r.mu.Unlock() },
		Deleted: func(s *Store, key []byte, evicted bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			k := string(key)
			if evicted {
				k += " evicted"
			}
			r.deleted = append(r.deleted, k)
		},
	}
}

func (r *recordingLog) took() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.deleted
	r.deleted = nil
	slices.Sort(d)
	return d
}

// TestDeletionLogHearsEveryDeletionOnItsOwn: a key whose TTL ran out is
// reported when a read meets it, when a write's lookup meets it, when
// DBSIZE purges it and when the active cycle finds it; an evicted key is
// reported as evicted; a read whose shard index the log refuses leaves the
// key (it still misses it) and DBSIZE then counts without it.
func TestDeletionLogHearsEveryDeletionOnItsOwn(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 4, Now: clk.now})
	r := &recordingLog{busy: map[int]bool{}}
	s.SetDeletionLog(r.log())
	purge := "purge"
	for i := 0; s.ShardIndex(b(purge)) == s.ShardIndex(b("busy")); i++ {
		purge = "purge" + string(rune('a'+i))
	}
	for _, k := range []string{"read", "write", purge, "busy"} {
		s.Set(nil, b(k), b("v"), SetOptions{ExpireAt: clk.now() + 10})
	}
	s.Set(nil, b("keep"), b("v"), SetOptions{})
	clk.advance(20)

	if _, found, _ := s.Get(nil, b("read")); found {
		t.Fatal("Get found an expired key")
	}
	if got := r.took(); !slices.Equal(got, []string{"read"}) {
		t.Fatalf("after a read: %q", got)
	}
	s.Set(nil, b("write"), b("new"), SetOptions{})
	if got := r.took(); !slices.Equal(got, []string{"write"}) {
		t.Fatalf("after a write: %q", got)
	}
	r.busy[s.ShardIndex(b("busy"))] = true
	if _, found, _ := s.Get(nil, b("busy")); found {
		t.Fatal("Get found an expired key the log did not let it delete")
	}
	if got := s.PTTL(b("busy")); got != -2 {
		t.Fatalf("PTTL of a refused expired key: %d", got)
	}
	if n := s.DBSize(); n != 2 {
		t.Fatalf("DBSIZE %d, want 2 (keep, write)", n)
	}
	got := r.took()
	if slices.Contains(got, "busy") || !slices.Contains(got, purge) {
		t.Fatalf("DBSIZE reported %q: want %s, not busy", got, purge)
	}
	delete(r.busy, s.ShardIndex(b("busy")))
	s.activeExpire(time.Second)
	if got := r.took(); !slices.Equal(got, []string{"busy"}) {
		t.Fatalf("the active cycle reported %q", got)
	}
	if r.entered != r.left {
		t.Fatalf("entered %d times, left %d", r.entered, r.left)
	}

	// Eviction, reported as such; a log refusing every shard index leaves
	// nothing to evict: the write fails.
	s.SetPolicy(AllKeysRandom)
	s.SetMaxMemory(s.Stats().UsedMemory + 1)
	s.Set(nil, b("big"), make([]byte, 4096), SetOptions{})
	if got := r.took(); len(got) == 0 || !slices.ContainsFunc(got, func(k string) bool { return k == "keep evicted" || k == "write evicted" }) {
		t.Fatalf("eviction reported %q", got)
	}
	s.SetMaxMemory(0)
	for _, k := range []string{"x", "y", "z"} {
		s.Set(nil, b(k), b("v"), SetOptions{})
	}
	s.SetMaxMemory(s.Stats().UsedMemory + 1)
	for i := range s.ShardCount() {
		r.busy[i] = true
	}
	if _, _, _, err := s.Set(nil, b("big2"), make([]byte, 64), SetOptions{}); err != ErrOOM {
		t.Fatalf("a write past maxmemory with every victim refused: %v, want ErrOOM", err)
	}
	if got := r.took(); len(got) != 0 {
		t.Fatalf("refused evictions reported %q", got)
	}
	clear(r.busy)
	if _, _, _, err := s.Set(nil, b("big2"), make([]byte, 64), SetOptions{}); err != nil {
		t.Fatalf("a write past maxmemory with victims to evict: %v", err)
	}
	if got := r.took(); len(got) == 0 {
		t.Fatal("the eviction was not reported")
	}
}

// TestReplicaStoreDeletesNothingOnItsOwn: on a replica a key whose TTL ran
// out is missed by reads but kept (DBSIZE counts it), a write's lookup
// finds it live (the primary's commands never find a key expired), the
// active cycle does nothing, Del removes it, and with IgnoreMaxMemory a
// write past maxmemory neither evicts nor fails.
func TestReplicaStoreDeletesNothingOnItsOwn(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 4, Now: clk.now})
	r := &recordingLog{replica: true, busy: map[int]bool{}}
	s.SetDeletionLog(r.log())
	for _, k := range []string{"a", "b", "c"} {
		s.Set(nil, b(k), b("v"), SetOptions{ExpireAt: clk.now() + 10})
	}
	clk.advance(20)
	if _, found, _ := s.Get(nil, b("a")); found {
		t.Fatal("a replica's Get found an expired key")
	}
	s.activeExpire(time.Second)
	if s.ReclaimExpiredRead(b("a")) {
		t.Fatal("a replica's read deleted an expired key")
	}
	if n := s.DBSize(); n != 3 {
		t.Fatalf("a replica's DBSIZE %d, want 3: it counts expired keys", n)
	}
	if n, _ := s.Append(b("b"), b("w")); n != 2 {
		t.Fatalf("APPEND on a replica to a key expired by its clock gave length %d, want 2 (the primary's write)", n)
	}
	if s.Del(bs("c")) != 1 {
		t.Fatal("the primary's DEL did not find the expired key")
	}
	if !s.ReclaimExpired(b("a")) {
		t.Fatal("ReclaimExpired (a writable replica's own write) did not delete")
	}
	if got := r.took(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("a replica reported %q, want only the forced a", got)
	}

	s.SetPolicy(AllKeysRandom)
	s.SetMaxMemory(1)
	r.mu.Lock()
	r.ignore = true
	r.mu.Unlock()
	if _, _, _, err := s.Set(nil, b("d"), b("v"), SetOptions{}); err != nil {
		t.Fatalf("a write past maxmemory with IgnoreMaxMemory: %v", err)
	}
	if st := s.Stats(); st.EvictedKeys != 0 {
		t.Fatalf("%d keys evicted with IgnoreMaxMemory", st.EvictedKeys)
	}
}

// BenchmarkGetWithDeletionLog: a read of a live key with a deletion log
// installed costs what it costs without one (the log is asked only when
// a key has expired): run with -benchmem, 0 allocs/op.
//
//	go test ./store -run '^$' -bench 'GetWithDeletionLog' -benchmem
func BenchmarkGetWithDeletionLog(b *testing.B) {
	for _, withLog := range []bool{false, true} {
		name := "without"
		if withLog {
			name = "with"
		}
		b.Run(name, func(b *testing.B) {
			s := newTestStore(b, Options{})
			if withLog {
				s.SetDeletionLog((&recordingLog{}).log())
			}
			key := []byte("key")
			s.Set(nil, key, []byte("value"), SetOptions{ExpireAt: time.Now().Add(time.Hour).UnixMilli()})
			var dst []byte
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				dst, _, _ = s.Get(dst[:0], key)
			}
		})
	}
}
