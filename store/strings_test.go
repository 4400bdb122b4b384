package store

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// forceKind replaces key with a one-element collection of kind k (object_test.go's
// testList), so WRONGTYPE paths can be tested.
func forceKind(t *testing.T, s *Store, key string, k uint8) {
	t.Helper()
	if s.Del(bs(key)) != 1 {
		t.Fatalf("forceKind: %q missing", key)
	}
	err := s.Update(b(key), Kind(k), 0, func(Object) Object {
		return &testList{kind: Kind(k), elems: []string{"x"}, size: 17}
	})
	if err != nil {
		t.Fatalf("forceKind: %v", err)
	}
}

func TestWrongType(t *testing.T) {
	s := newTestStore(t, Options{})
	set(t, s, "l", "x", SetOptions{})
	forceKind(t, s, "l", kindList)
	if got := s.Type(b("l")); got != "list" {
		t.Fatalf("Type = %q, want list", got)
	}
	if s.Type(b("missing")) != "none" {
		t.Fatal("Type of a missing key is not none")
	}
	checks := map[string]error{}
	_, _, checks["Get"] = s.Get(nil, b("l"))
	_, _, _, checks["Set GET"] = s.Set(nil, b("l"), b("v"), SetOptions{Get: true})
	_, checks["IncrBy"] = s.IncrBy(b("l"), 1)
	_, checks["IncrByFloat"] = s.IncrByFloat(nil, b("l"), 1)
	_, checks["Append"] = s.Append(b("l"), b("v"))
	_, checks["Strlen"] = s.Strlen(b("l"))
	_, checks["GetRange"] = s.GetRange(nil, b("l"), 0, -1)
	_, checks["SetRange"] = s.SetRange(b("l"), 0, b("v"))
	_, _, checks["GetDel"] = s.GetDel(nil, b("l"))
	_, _, checks["GetEx"] = s.GetEx(nil, b("l"), GetExOptions{Persist: true})
	for op, err := range checks {
		if !errors.Is(err, ErrWrongType) {
			t.Errorf("%s on a list: err = %v, want WRONGTYPE", op, err)
		}
	}
	s.MGet(bs("l"), func(_ int, _ []byte, found bool) {
		if found {
			t.Error("MGet returned a list as a string")
		}
	})
	if s.Exists(bs("l")) != 1 {
		t.Error("Exists does not count a list")
	}
	if _, ks := s.Scan(0, nil, 1000, "string"); len(ks) != 0 {
		t.Errorf("Scan TYPE string returned %q", ks)
	}
	if _, ks := s.Scan(0, nil, 1000, "list"); len(ks) != 1 {
		t.Errorf("Scan TYPE list returned %q", ks)
	}
	// Plain SET replaces any type.
	set(t, s, "l", "v", SetOptions{})
	if v, ok := mustGet(t, s, "l"); !ok || v != "v" || s.Type(b("l")) != "string" {
		t.Fatalf("SET over a list: %q %v %s", v, ok, s.Type(b("l")))
	}
}

func TestAppendAndRangesAcrossBlockSizes(t *testing.T) {
	s := newTestStore(t, Options{Shards: 1})
	var want []byte
	chunk := []byte("0123456789abcdefghij")
	for i := 0; i < 600; i++ { // grows through every small class into a large block
		n, err := s.Append(b("k"), chunk)
		want = append(want, chunk...)
		if err != nil || n != len(want) {
			t.Fatalf("Append #%d = %d %v, want %d", i, n, err, len(want))
		}
	}
	if v, _ := mustGet(t, s, "k"); v != string(want) {
		t.Fatal("value differs after appends")
	}
	if got, _ := s.GetRange(nil, b("k"), -25, -21); string(got) != string(want[len(want)-25:len(want)-20]) {
		t.Fatalf("GetRange(-25,-21) = %q", got)
	}
	// Shrink back to a small block with SET, then pad with SETRANGE.
	set(t, s, "k", "hello", SetOptions{})
	n, err := s.SetRange(b("k"), 10, b("world"))
	if err != nil || n != 15 {
		t.Fatalf("SetRange = %d %v", n, err)
	}
	if v, _ := mustGet(t, s, "k"); v != "hello\x00\x00\x00\x00\x00world" {
		t.Fatalf("SetRange padding: %q", v)
	}
	if n, _ := s.SetRange(b("k"), 1, b("EL")); n != 15 {
		t.Fatalf("SetRange inside = %d", n)
	}
	if v, _ := mustGet(t, s, "k"); v != "hELlo\x00\x00\x00\x00\x00world" {
		t.Fatalf("SetRange inside: %q", v)
	}
	if n, _ := s.SetRange(b("new"), 0, nil); n != 0 || s.Exists(bs("new")) != 0 {
		t.Fatal("SetRange with an empty value created a key")
	}
	if n, _ := s.SetRange(b("k"), 100, nil); n != 15 {
		t.Fatalf("SetRange empty value on existing = %d, want the length", n)
	}
	if _, err := s.SetRange(b("k"), -1, b("x")); !errors.Is(err, ErrOffsetRange) {
		t.Fatalf("negative offset: %v", err)
	}
	if _, err := s.SetRange(b("k"), MaxStringLen, b("x")); !errors.Is(err, ErrTooLong) {
		t.Fatalf("offset past 512 MiB: %v", err)
	}
	if n, _ := mustGet(t, s, "k"); len(n) != 15 {
		t.Fatal("a failed SetRange changed the value")
	}
	for _, c := range []struct {
		start, end int64
		want       string
	}{{0, 4, "hELlo"}, {-5, -1, "world"}, {5, 2, ""}, {-1, -5, ""}, {100, 200, ""}, {-100, 1, "hE"}, {0, -100, "h"}} {
		if got, _ := s.GetRange(nil, b("k"), c.start, c.end); string(got) != c.want {
			t.Errorf("GetRange(%d, %d) = %q, want %q", c.start, c.end, got, c.want)
		}
	}
	if got, err := s.GetRange([]byte("x"), b("missing"), 0, -1); string(got) != "x" || err != nil {
		t.Fatalf("GetRange on a missing key = %q %v", got, err)
	}
	if n, _ := s.Strlen(b("k")); n != 15 {
		t.Fatalf("Strlen = %d", n)
	}
	checkInvariants(t, s)
}

// TestSetRangePadsWithZeros: the bytes SetRange adds before its offset
// read as zeros whatever block the value lands in. A new large block is
// zero already and is not cleared again; one grown in place, or a small
// one from a free list, may hold old bytes and is.
func TestSetRangePadsWithZeros(t *testing.T) {
	for _, c := range []struct {
		name   string
		before []string // values SET in turn before the SetRange; none: a new key
		offset int
	}{
		{"new small", nil, 100},
		{"new large", nil, 5000},
		{"small grown small", []string{strings.Repeat("x", 300), "ab"}, 200},
		{"small grown large", []string{strings.Repeat("x", 300), "ab"}, 5000},
		{"large grown to a new block", []string{strings.Repeat("x", 3000)}, 8000},
		{"large grown in place over old bytes", []string{strings.Repeat("x", 3000), strings.Repeat("y", 2000)}, 2500},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTestStore(t, Options{Shards: 1})
			for _, v := range c.before {
				set(t, s, "k", v, SetOptions{})
			}
			kept := ""
			if n := len(c.before); n > 0 {
				kept = c.before[n-1]
			}
			if n, err := s.SetRange(b("k"), int64(c.offset), b("z")); err != nil || n != c.offset+1 {
				t.Fatalf("SetRange = %d %v, want %d", n, err, c.offset+1)
			}
			want := kept + strings.Repeat("\x00", c.offset-len(kept)) + "z"
			if v, _ := mustGet(t, s, "k"); v != want {
				t.Fatalf("value %.40q…, want %.40q…", v[len(kept):], want[len(kept):])
			}
			checkInvariants(t, s)
		})
	}
}

func TestRename(t *testing.T) {
	clk := newClock(5_000_000)
	s := newTestStore(t, Options{Now: clk.now})
	set(t, s, "a", "1", SetOptions{ExpireAt: clk.now() + 1000})
	set(t, s, "b", "2", SetOptions{})
	if err := s.Rename(b("a"), b("c")); err != nil {
		t.Fatal(err)
	}
	if v, _ := mustGet(t, s, "c"); v != "1" || s.PTTL(b("c")) != 1000 || s.Exists(bs("a")) != 0 {
		t.Fatal("Rename lost the value or the TTL, or kept the source")
	}
	if ok, err := s.RenameNX(b("c"), b("b")); ok || err != nil {
		t.Fatalf("RenameNX onto an existing key = %v %v", ok, err)
	}
	if err := s.Rename(b("c"), b("b")); err != nil {
		t.Fatal(err)
	}
	if v, _ := mustGet(t, s, "b"); v != "1" || s.PTTL(b("b")) != 1000 || s.DBSize() != 1 {
		t.Fatal("Rename over an existing key did not replace it")
	}
	if err := s.Rename(b("b"), b("b")); err != nil {
		t.Fatal("Rename to itself failed:", err)
	}
	if ok, _ := s.RenameNX(b("b"), b("b")); ok {
		t.Fatal("RenameNX to itself returned true, Redis returns 0")
	}
	if err := s.Rename(b("zz"), b("b")); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("Rename of a missing key: %v", err)
	}
	clk.advance(1001)
	if err := s.Rename(b("b"), b("d")); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("Rename of an expired key: %v", err)
	}
}

func TestKeysScanRandomKeyHideExpired(t *testing.T) {
	clk := newClock(9_000_000)
	s := newTestStore(t, Options{Shards: 16, Now: clk.now})
	var live []string
	for i := 0; i < 500; i++ {
		k := "key:" + string(rune('a'+i%26)) + strconv.Itoa(i)
		if i%2 == 0 {
			set(t, s, k, "v", SetOptions{ExpireAt: clk.now() + 10})
		} else {
			set(t, s, k, "v", SetOptions{})
			live = append(live, k)
		}
	}
	slices.Sort(live)
	clk.advance(11)
	if got := sortedStrings(s.Keys(b("*"))); !slices.Equal(got, live) {
		t.Fatalf("Keys returned %d keys, want %d live", len(got), len(live))
	}
	var scanned [][]byte
	for c, first := uint64(0), true; first || c != 0; first = false {
		var ks [][]byte
		c, ks = s.Scan(c, b("key:*"), 7, "")
		scanned = append(scanned, ks...)
	}
	if got := slices.Compact(sortedStrings(scanned)); !slices.Equal(got, live) {
		t.Fatalf("Scan returned %d keys, want %d", len(got), len(live))
	}
	for i := 0; i < 200; i++ {
		k, ok := s.RandomKey()
		if _, found := slices.BinarySearch(live, string(k)); !ok || !found {
			t.Fatalf("RandomKey = %q %v, not a live key", k, ok)
		}
	}
	if s.DBSize() != len(live) {
		t.Fatalf("DBSize = %d, want %d", s.DBSize(), len(live))
	}
	if got := s.Keys(b("key:b*")); len(got) != 20 || !bytes.HasPrefix(got[0], b("key:b")) {
		t.Fatalf("Keys(key:b*) = %q, want the 20 keys key:b1, key:b27, ...", got)
	}
	s.Flush()
	if _, ok := s.RandomKey(); ok || s.DBSize() != 0 || s.Stats().UsedMemory != 0 {
		t.Fatal("Flush left keys or memory behind")
	}
	checkInvariants(t, s)
}
