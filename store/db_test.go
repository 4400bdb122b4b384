package store

import (
	"errors"
	"strconv"
	"testing"
)

func TestDatabasesAreSeparateKeyspaces(t *testing.T) {
	s0 := newTestStore(t, Options{Shards: 4})
	s1 := s0.NewDB()
	t.Cleanup(s1.Close)
	set(t, s0, "k", "zero", SetOptions{})
	set(t, s1, "k", "one", SetOptions{})
	set(t, s1, "only1", "x", SetOptions{})
	if v, _ := mustGet(t, s0, "k"); v != "zero" {
		t.Fatalf("db0 k = %q", v)
	}
	if v, _ := mustGet(t, s1, "k"); v != "one" {
		t.Fatalf("db1 k = %q", v)
	}
	if s0.DBSize() != 1 || s1.DBSize() != 2 {
		t.Fatalf("DBSize %d and %d, want 1 and 2", s0.DBSize(), s1.DBSize())
	}
	s1.Flush()
	if s0.DBSize() != 1 || s1.DBSize() != 0 {
		t.Fatalf("after flushing db1: DBSize %d and %d, want 1 and 0", s0.DBSize(), s1.DBSize())
	}
	if !s0.SameGroup(s1) || s0.SameGroup(newTestStore(t, Options{})) {
		t.Fatal("SameGroup is wrong")
	}
}

func TestDatabasesShareMaxMemoryAndEvictAcross(t *testing.T) {
	s0 := newTestStore(t, Options{Shards: 4, Policy: AllKeysRandom})
	s1 := s0.NewDB()
	t.Cleanup(s1.Close)
	val := string(make([]byte, 1000))
	for i := 0; i < 200; i++ {
		set(t, s0, "a"+strconv.Itoa(i), val, SetOptions{})
	}
	// The limit set through one database holds for both.
	limit := s0.Stats().UsedMemory + 50_000
	s1.SetMaxMemory(limit)
	if s0.MaxMemory() != limit {
		t.Fatalf("db0's limit is %d after setting %d through db1", s0.MaxMemory(), limit)
	}
	// db1 is empty: room for its writes comes from db0's keys.
	for i := 0; i < 200; i++ {
		set(t, s1, "b"+strconv.Itoa(i), val, SetOptions{})
	}
	if used := s0.Stats().UsedMemory + s1.Stats().UsedMemory; used > limit {
		t.Fatalf("the databases use %d bytes together, over the shared limit %d", used, limit)
	}
	if s0.Stats().EvictedKeys == 0 {
		t.Fatal("nothing was evicted from db0 to make room in db1")
	}
	s0.SetPolicy(NoEviction)
	if s1.Policy() != NoEviction {
		t.Fatal("the policy is not shared")
	}
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, _, _, err = s1.Set(nil, b("c"+strconv.Itoa(i)), b(val), SetOptions{})
	}
	if !errors.Is(err, ErrOOM) {
		t.Fatalf("a write over the shared limit under noeviction: %v, want ErrOOM", err)
	}
}

func TestMoveAndCopyBetweenDatabases(t *testing.T) {
	clk := newClock(1_000_000)
	s0 := newTestStore(t, Options{Shards: 4, Now: clk.now})
	s1 := s0.NewDB()
	t.Cleanup(s1.Close)
	set(t, s0, "k", "v", SetOptions{ExpireAt: clk.now() + 5000})
	if ok, err := s0.MoveTo(s1, b("k")); !ok || err != nil {
		t.Fatalf("MoveTo = %v, %v", ok, err)
	}
	if _, ok := mustGet(t, s0, "k"); ok {
		t.Fatal("the moved key is still in db0")
	}
	if v, _ := mustGet(t, s1, "k"); v != "v" || s1.PTTL(b("k")) != 5000 {
		t.Fatalf("db1 k = %q with PTTL %d, want v with 5000", v, s1.PTTL(b("k")))
	}
	// MOVE refuses a key the target has, and a missing one.
	set(t, s0, "k", "other", SetOptions{})
	if ok, _ := s0.MoveTo(s1, b("k")); ok {
		t.Fatal("MoveTo overwrote the target's key")
	}
	if ok, _ := s0.MoveTo(s1, b("missing")); ok {
		t.Fatal("MoveTo moved a missing key")
	}
	if v, _ := mustGet(t, s0, "k"); v != "other" {
		t.Fatalf("a refused move changed the source: %q", v)
	}
	// COPY ... DB: without REPLACE it keeps the target, with it overwrites.
	if ok, _ := s0.CopyTo(s1, b("k"), b("k"), false); ok {
		t.Fatal("CopyTo without replace overwrote")
	}
	if ok, err := s0.CopyTo(s1, b("k"), b("k2"), false); !ok || err != nil {
		t.Fatalf("CopyTo = %v, %v", ok, err)
	}
	if ok, _ := s0.CopyTo(s1, b("k"), b("k"), true); !ok {
		t.Fatal("CopyTo with replace refused")
	}
	for _, k := range []string{"k", "k2"} {
		if v, _ := mustGet(t, s1, k); v != "other" {
			t.Fatalf("db1 %s = %q after the copies", k, v)
		}
	}
	if v, _ := mustGet(t, s0, "k"); v != "other" {
		t.Fatal("CopyTo removed the source")
	}
	// Both directions at once cannot deadlock.
	done := make(chan bool)
	for _, dir := range [][2]*Store{{s0, s1}, {s1, s0}} {
		go func() {
			for i := 0; i < 2000; i++ {
				_, _ = dir[0].CopyTo(dir[1], b("k"), b("k"), true)
			}
			done <- true
		}()
	}
	<-done
	<-done
}
