package store

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// removals records what a RemoveHook is told.
type removals struct {
	mu      sync.Mutex
	expired []string
	evicted []string
	dbs     map[*Store]bool
}

func (r *removals) hook(s *Store, key []byte, evicted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dbs == nil {
		r.dbs = map[*Store]bool{}
	}
	r.dbs[s] = true
	if evicted {
		r.evicted = append(r.evicted, string(key))
	} else {
		r.expired = append(r.expired, string(key))
	}
}

// TestRemoveHookHearsActiveExpiryOfEveryDatabase: each key the active
// cycle removes, in any database of the group, reaches the hook once, with
// its database; the keys without a TTL do not.
func TestRemoveHookHearsActiveExpiryOfEveryDatabase(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 8, Now: clk.now})
	other := s.NewDB()
	defer other.Close()
	var r removals
	s.SetRemoveHook(r.hook)
	defer s.SetRemoveHook(nil)
	var want []string
	for i := 0; i < 200; i++ {
		k := "k" + strconv.Itoa(i)
		o := SetOptions{}
		if i%2 == 0 {
			o.ExpireAt = clk.now() + 10
			want = append(want, k)
		}
		set(t, s, k, "v", o)
	}
	set(t, other, "o", "v", SetOptions{ExpireAt: clk.now() + 10})
	want = append(want, "o")
	clk.advance(11)
	for c := 0; c < 20 && (liveCount(s) > 100 || liveCount(other) > 0); c++ {
		s.activeExpire(time.Second)
		other.activeExpire(time.Second)
	}
	slices.Sort(want)
	slices.Sort(r.expired)
	if !slices.Equal(r.expired, want) || len(r.evicted) != 0 {
		t.Fatalf("hook heard expired %v, evicted %v; want expired %v", r.expired, r.evicted, want)
	}
	if !r.dbs[s] || !r.dbs[other] || len(r.dbs) != 2 {
		t.Fatalf("hook heard of databases %v", r.dbs)
	}
}

// TestRemoveHookHearsEvictions: every key eviction removes reaches the
// hook, and is gone.
func TestRemoveHookHearsEvictions(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4, Policy: AllKeysRandom, MaxMemory: 64 << 10})
	var r removals
	s.SetRemoveHook(r.hook)
	defer s.SetRemoveHook(nil)
	for i := 0; i < 2000; i++ {
		set(t, s, "k"+strconv.Itoa(i), string(make([]byte, 100)), SetOptions{})
	}
	if len(r.evicted) == 0 {
		t.Fatal("nothing was evicted")
	}
	seen := map[string]bool{}
	for _, k := range r.evicted {
		if seen[k] || s.Exists([][]byte{[]byte(k)}) != 0 {
			t.Fatalf("%s: announced twice or still there", k)
		}
		seen[k] = true
	}
	if gone := 2000 - s.DBSize(); gone != len(r.evicted) {
		t.Fatalf("%d keys gone, %d announced", gone, len(r.evicted))
	}
}

// TestReclaimExpired removes a key whose TTL ran out, once, without the
// hook, and leaves live and missing keys alone.
func TestReclaimExpired(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 4, Now: clk.now, ActiveExpireInterval: -1})
	var r removals
	s.SetRemoveHook(r.hook)
	defer s.SetRemoveHook(nil)
	set(t, s, "dies", "v", SetOptions{ExpireAt: clk.now() + 10})
	set(t, s, "lives", "v", SetOptions{})
	clk.advance(11)
	for _, c := range []struct {
		key  string
		want bool
	}{{"dies", true}, {"dies", false}, {"lives", false}, {"missing", false}} {
		if got := s.ReclaimExpired([]byte(c.key)); got != c.want {
			t.Errorf("ReclaimExpired(%s) = %v, want %v", c.key, got, c.want)
		}
	}
	if s.KeyExists([]byte("dies")) || !s.KeyExists([]byte("lives")) {
		t.Error("KeyExists disagrees")
	}
	if st := s.Stats(); st.ExpiredKeys != 1 {
		t.Errorf("expired_keys = %d, want 1", st.ExpiredKeys)
	}
	if len(r.expired) != 0 {
		t.Errorf("the hook heard %v: ReclaimExpired's caller reports it", r.expired)
	}
}

// TestDelEachReportsWhichExisted: DelEach marks the keys it deleted.
func TestDelEachReportsWhichExisted(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4})
	set(t, s, "a", "v", SetOptions{})
	set(t, s, "c", "v", SetOptions{})
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("a")}
	deleted := make([]bool, len(keys))
	if n := s.DelEach(keys, deleted); n != 2 || !slices.Equal(deleted, []bool{true, false, true, false}) {
		t.Fatalf("DelEach = %d, %v", n, deleted)
	}
}
