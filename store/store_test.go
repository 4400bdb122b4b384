package store

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
)

// fakeClock is an injectable clock for Options.Now.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) now() int64       { return c.ms.Load() }
func (c *fakeClock) advance(d int64)  { c.ms.Add(d) }
func newClock(start int64) *fakeClock { c := &fakeClock{}; c.ms.Store(start); return c }
func b(s string) []byte               { return []byte(s) }
func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = b(s)
	}
	return out
}
func newTestStore(t testing.TB, o Options) *Store {
	t.Helper()
	if o.ActiveExpireInterval == 0 {
		o.ActiveExpireInterval = -1
	}
	s := New(o)
	t.Cleanup(s.Close)
	return s
}

func mustGet(t *testing.T, s *Store, key string) (string, bool) {
	t.Helper()
	v, ok, err := s.Get(nil, b(key))
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return string(v), ok
}

func set(t *testing.T, s *Store, key, val string, o SetOptions) {
	t.Helper()
	if _, _, _, err := s.Set(nil, b(key), b(val), o); err != nil {
		t.Fatalf("Set(%q): %v", key, err)
	}
}

func TestGetSetDelExists(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4})
	if _, ok := mustGet(t, s, "a"); ok {
		t.Fatal("empty store returned a value")
	}
	set(t, s, "a", "1", SetOptions{})
	set(t, s, "b", "", SetOptions{})
	if v, ok := mustGet(t, s, "a"); !ok || v != "1" {
		t.Fatalf("Get a = %q %v", v, ok)
	}
	if v, ok := mustGet(t, s, "b"); !ok || v != "" {
		t.Fatalf("empty value: Get b = %q %v", v, ok)
	}
	if n := s.Exists(bs("a", "a", "b", "c")); n != 3 {
		t.Fatalf("Exists counts duplicates: got %d, want 3", n)
	}
	if n := s.Del(bs("a", "c", "a")); n != 1 {
		t.Fatalf("Del = %d, want 1", n)
	}
	if _, ok := mustGet(t, s, "a"); ok {
		t.Fatal("deleted key still visible")
	}
	if s.DBSize() != 1 {
		t.Fatalf("DBSize = %d, want 1", s.DBSize())
	}
	// Binary-safe keys and values.
	k, v := []byte{0, 1, 0xff, '\r', '\n'}, []byte{0, 0, 0}
	s.Set(nil, k, v, SetOptions{})
	got, ok, _ := s.Get(nil, k)
	if !ok || !bytes.Equal(got, v) {
		t.Fatalf("binary value = %q %v", got, ok)
	}
}

func TestSetOptions(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Now: clk.now})
	if _, _, w, _ := s.Set(nil, b("k"), b("v"), SetOptions{Mode: SetXX}); w {
		t.Fatal("XX wrote a missing key")
	}
	if _, _, w, _ := s.Set(nil, b("k"), b("v1"), SetOptions{Mode: SetNX}); !w {
		t.Fatal("NX did not write a missing key")
	}
	old, had, w, _ := s.Set(nil, b("k"), b("v2"), SetOptions{Mode: SetNX, Get: true})
	if w || !had || string(old) != "v1" {
		t.Fatalf("NX GET on existing: old=%q had=%v written=%v", old, had, w)
	}
	old, had, w, _ = s.Set([]byte("prefix:"), b("k"), b("v3"), SetOptions{Mode: SetXX, Get: true, ExpireAt: clk.now() + 5000})
	if !w || !had || string(old) != "prefix:v1" {
		t.Fatalf("XX GET: old=%q had=%v written=%v", old, had, w)
	}
	if p := s.PTTL(b("k")); p != 5000 {
		t.Fatalf("PTTL = %d, want 5000", p)
	}
	set(t, s, "k", "v4", SetOptions{KeepTTL: true})
	if p := s.PTTL(b("k")); p != 5000 {
		t.Fatalf("KEEPTTL lost the TTL: PTTL = %d", p)
	}
	set(t, s, "k", "v5", SetOptions{})
	if p := s.PTTL(b("k")); p != -1 {
		t.Fatalf("plain SET kept the TTL: PTTL = %d", p)
	}
	_, _, w, _ = s.Set(nil, b("k"), b("v6"), SetOptions{ExpireAt: clk.now() - 1})
	if _, ok := mustGet(t, s, "k"); !w || ok {
		t.Fatalf("SET with a past expiry: written=%v, key visible=%v", w, ok)
	}
}

func TestExpiryIsLazyAndExact(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Shards: 2, Now: clk.now})
	set(t, s, "k", "v", SetOptions{ExpireAt: clk.now() + 100})
	clk.advance(100)
	if _, ok := mustGet(t, s, "k"); !ok {
		t.Fatal("key expired at its expiry time; Redis expires strictly after")
	}
	if p := s.PTTL(b("k")); p != 0 {
		t.Fatalf("PTTL at expiry = %d, want 0", p)
	}
	clk.advance(1)
	if _, ok := mustGet(t, s, "k"); ok {
		t.Fatal("expired key visible to Get")
	}
	if s.PTTL(b("k")) != -2 || s.ExpireTime(b("k")) != -2 || s.Exists(bs("k")) != 0 || s.DBSize() != 0 {
		t.Fatal("expired key visible to PTTL / ExpireTime / Exists / DBSize")
	}
	if st := s.Stats(); st.ExpiredKeys != 1 || st.Keys != 0 {
		t.Fatalf("stats after lazy expiry: %+v", st)
	}
}

func TestExpireConditions(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Now: clk.now})
	now := clk.now()
	if s.Expire(b("missing"), now+10, ExpireAlways) {
		t.Fatal("Expire on a missing key returned true")
	}
	set(t, s, "k", "v", SetOptions{})
	cases := []struct {
		at   int64
		cond ExpireCond
		ok   bool
		want int64 // ExpireTime afterwards
	}{
		{now + 1000, ExpireXX, false, -1},
		{now + 1000, ExpireGT, false, -1}, // no TTL counts as infinite
		{now + 1000, ExpireLT, true, now + 1000},
		{now + 500, ExpireNX, false, now + 1000},
		{now + 500, ExpireGT, false, now + 1000},
		{now + 2000, ExpireGT, true, now + 2000},
		{now + 3000, ExpireLT, false, now + 2000},
		{now + 1500, ExpireLT, true, now + 1500},
		{now + 1500, ExpireXX, true, now + 1500},
		{now + 9000, ExpireAlways, true, now + 9000},
	}
	for i, c := range cases {
		if got := s.Expire(b("k"), c.at, c.cond); got != c.ok {
			t.Fatalf("case %d: Expire(%d, %v) = %v, want %v", i, c.at-now, c.cond, got, c.ok)
		}
		if got := s.ExpireTime(b("k")); got != c.want {
			t.Fatalf("case %d: ExpireTime = %d, want %d", i, got, c.want)
		}
	}
	if !s.Persist(b("k")) || s.Persist(b("k")) || s.PTTL(b("k")) != -1 {
		t.Fatal("Persist: want true once, then false, and no TTL")
	}
	if !s.Expire(b("k"), now, ExpireAlways) {
		t.Fatal("Expire in the past must delete and return true")
	}
	if s.Exists(bs("k")) != 0 {
		t.Fatal("Expire in the past did not delete the key")
	}
}

func TestIncrBy(t *testing.T) {
	clk := newClock(1_000_000)
	s := newTestStore(t, Options{Now: clk.now})
	if n, err := s.IncrBy(b("n"), 5); n != 5 || err != nil {
		t.Fatalf("IncrBy on missing = %d %v", n, err)
	}
	s.Expire(b("n"), clk.now()+10_000, ExpireAlways)
	if n, err := s.IncrBy(b("n"), -7); n != -2 || err != nil {
		t.Fatalf("IncrBy = %d %v", n, err)
	}
	if s.PTTL(b("n")) != 10_000 {
		t.Fatal("IncrBy dropped the TTL")
	}
	for _, bad := range []string{"", " 1", "1 ", "+1", "01", "1.0", "abc", "-0", "99999999999999999999"} {
		set(t, s, "x", bad, SetOptions{})
		if _, err := s.IncrBy(b("x"), 1); !errors.Is(err, ErrNotInteger) {
			t.Fatalf("IncrBy on %q: err = %v, want ErrNotInteger", bad, err)
		}
	}
	set(t, s, "x", "9223372036854775806", SetOptions{})
	if n, err := s.IncrBy(b("x"), 1); n != 9223372036854775807 || err != nil {
		t.Fatalf("IncrBy to MaxInt64 = %d %v", n, err)
	}
	if _, err := s.IncrBy(b("x"), 1); !errors.Is(err, ErrOverflow) {
		t.Fatalf("overflow: err = %v", err)
	}
	set(t, s, "x", "-9223372036854775808", SetOptions{})
	if _, err := s.IncrBy(b("x"), -1); !errors.Is(err, ErrOverflow) {
		t.Fatalf("underflow: err = %v", err)
	}
	if v, _ := mustGet(t, s, "x"); v != "-9223372036854775808" {
		t.Fatalf("failed IncrBy changed the value to %q", v)
	}
}

// TestHashCollisionsNeverMixKeys forces every key into a tiny hash space: lookups must
// still compare whole keys.
func TestHashCollisionsNeverMixKeys(t *testing.T) {
	for _, space := range []uint64{1, 4} {
		t.Run(fmt.Sprint(space), func(t *testing.T) {
			s := newTestStore(t, Options{Shards: 2})
			s.testHash = func(k []byte) uint64 {
				var h uint64
				for _, c := range k {
					h = h*31 + uint64(c)
				}
				return h % space
			}
			const n = 300
			for i := 0; i < n; i++ {
				set(t, s, fmt.Sprint("key", i), fmt.Sprint("val", i), SetOptions{})
			}
			for i := 0; i < n; i += 2 {
				if s.Del(bs(fmt.Sprint("key", i))) != 1 {
					t.Fatalf("Del key%d failed", i)
				}
			}
			for i := 0; i < n; i++ {
				v, ok := mustGet(t, s, fmt.Sprint("key", i))
				if want := i%2 == 1; ok != want || (ok && v != fmt.Sprint("val", i)) {
					t.Fatalf("key%d = %q %v under collisions", i, v, ok)
				}
			}
			if _, ok := mustGet(t, s, "key"); ok {
				t.Fatal("a colliding absent key returned a value")
			}
			if s.DBSize() != n/2 {
				t.Fatalf("DBSize = %d, want %d", s.DBSize(), n/2)
			}
		})
	}
}

func TestMultiKeyOperationsDoNotAllocate(t *testing.T) {
	s := New(Options{ActiveExpireInterval: -1})
	defer s.Close()
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	pairs := [][]byte{keys[0], []byte("1"), keys[1], []byte("2"), keys[2], []byte("3")}
	if err := s.MSet(pairs); err != nil {
		t.Fatal(err)
	}
	found := 0
	visit := func(i int, val []byte, ok bool) {
		if ok {
			found++
		}
	}
	for name, op := range map[string]func(){
		"MGet":   func() { s.MGet(keys, visit) },
		"Exists": func() { s.Exists(keys) },
		"MSet":   func() { s.MSet(pairs) },
	} {
		if n := testing.AllocsPerRun(100, op); n != 0 {
			t.Errorf("%s: %v allocs per call, want 0", name, n)
		}
	}
	if found == 0 {
		t.Fatal("MGet found none of the keys it set")
	}
}

// TestWritesDoNotAllocate: every write goes through lockKey/unlock (or the
// multi-key lock); none of them may make the lock state escape to the heap.
// The store is filled first: in a nearly empty store, creating a key in an
// empty shard allocates its index, which is growth, not per-call cost.
func TestWritesDoNotAllocate(t *testing.T) {
	s := New(Options{ActiveExpireInterval: -1})
	defer s.Close()
	k, k2, n, a, v, x := []byte("k"), []byte("k2"), []byte("n"), []byte("a"), []byte("value"), []byte("x")
	dst := make([]byte, 0, 64)
	for i := range 20000 {
		s.Set(nil, []byte("fill:"+strconv.Itoa(i)), v, SetOptions{})
	}
	s.Set(nil, k, v, SetOptions{})
	s.Set(nil, n, []byte("1"), SetOptions{})
	for name, op := range map[string]func(){
		"Set":        func() { s.Set(dst[:0], k, v, SetOptions{Get: true}) },
		"IncrBy":     func() { s.IncrBy(n, 1) },
		"Append":     func() { s.Set(nil, a, x, SetOptions{}); s.Append(a, v) },
		"SetRange":   func() { s.SetRange(k, 1, x) },
		"GetEx":      func() { s.GetEx(dst[:0], k, GetExOptions{Persist: true}) },
		"Expire":     func() { s.Expire(k, s.Now()+100000, ExpireAlways) },
		"Persist":    func() { s.Persist(k) },
		"Del+Set":    func() { s.Del([][]byte{k2}); s.Set(nil, k2, v, SetOptions{}) },
		"GetDel+Set": func() { s.GetDel(dst[:0], k2); s.Set(nil, k2, v, SetOptions{}) },
		"Rename":     func() { s.Rename(k, k2); s.Rename(k2, k) },
	} {
		if n := testing.AllocsPerRun(100, op); n != 0 {
			t.Errorf("%s: %v allocs per call, want 0", name, n)
		}
	}
	// AllocsPerRun calls each op once to warm up, then 100 times.
	if got, _, _ := s.Get(nil, n); string(got) != "102" {
		t.Errorf("after 101 INCRs n = %q, want 102", got)
	}
}
