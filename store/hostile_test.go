package store

import (
	"errors"
	"math"
	"math/big"
	"testing"
)

// TestSetRangeHugeOffset: offset+len(val) used to wrap negative for offsets near
// MaxInt64, pass the MaxStringLen check and panic in the arena (new key) or in a slice
// expression (existing key), killing the server.
func TestSetRangeHugeOffset(t *testing.T) {
	for _, maxMem := range []int64{0, 1 << 30} {
		s := newTestStore(t, Options{MaxMemory: maxMem})
		set(t, s, "exists", "abc", SetOptions{})
		for _, key := range []string{"missing", "exists"} {
			for _, off := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 2, MaxStringLen, MaxStringLen + 1} {
				n, err := s.SetRange(b(key), off, b("xy"))
				if !errors.Is(err, ErrTooLong) {
					t.Errorf("maxmemory %d: SetRange(%s, %d) = %d, %v; want ErrTooLong", maxMem, key, off, n, err)
				}
			}
		}
		if v, _ := mustGet(t, s, "exists"); v != "abc" {
			t.Errorf("a refused SetRange changed the value to %q", v)
		}
		if _, ok := mustGet(t, s, "missing"); ok {
			t.Error("a refused SetRange created the key")
		}
	}
}

// hostileInts are the integers a client can send that break naive arithmetic.
var hostileInts = []int64{math.MinInt64, math.MinInt64 + 1, -MaxStringLen - 1, -MaxStringLen, -1, 0, 1,
	MaxStringLen - 1, MaxStringLen, MaxStringLen + 1, math.MaxInt64 - 1, math.MaxInt64}

// TestHostileIntegers drives every store operation that takes a client-controlled
// integer with each of hostileInts, on a missing key, a short string, an integer and a
// non-string, with and without maxmemory, and checks each result against Redis's rules
// computed in arbitrary precision: no panic, and the documented error or value.
func TestHostileIntegers(t *testing.T) {
	const now = 1_700_000_000_000
	for _, maxMem := range []int64{0, 1 << 20} {
		clk := newClock(now)
		s := newTestStore(t, Options{MaxMemory: maxMem, Now: clk.now})
		reset := func() {
			s.Flush()
			set(t, s, "str", "hello", SetOptions{})
			set(t, s, "num", "42", SetOptions{})
			set(t, s, "list", "x", SetOptions{})
			forceKind(t, s, "list", kindList)
		}
		for _, x := range hostileInts {
			for _, y := range hostileInts {
				reset()
				checkGetRange(t, s, "str", "hello", x, y)
				checkGetRange(t, s, "missing", "", x, y)
			}
			for _, key := range []string{"missing", "str", "num", "list"} {
				reset()
				checkSetRange(t, s, key, x, maxMem)
				reset()
				checkIncrBy(t, s, key, x)
				reset()
				checkExpire(t, s, key, x, now)
				reset()
				checkSetExpireAt(t, s, key, x, now)
				reset()
				checkGetEx(t, s, key, x, now)
			}
			cursor, count := uint64(x), int(x)
			for range 3 { // a hostile cursor is just a position; it must end the scan
				next, _ := s.Scan(cursor, nil, count, "")
				if next == 0 {
					break
				}
				cursor = next
			}
			if maxMem > 0 {
				if err := s.reserve(x); err != nil && !errors.Is(err, ErrOOM) {
					t.Errorf("reserve(%d) = %v", x, err)
				}
			}
		}
	}
}

func bigInt(v int64) *big.Int { return big.NewInt(v) }

func checkGetRange(t *testing.T, s *Store, key, val string, start, end int64) {
	t.Helper()
	got, err := s.GetRange(nil, b(key), start, end)
	if err != nil {
		t.Fatalf("GetRange(%s, %d, %d): %v", key, start, end, err)
	}
	// Redis's getrangeCommand, in arbitrary precision.
	n := bigInt(int64(len(val)))
	lo, hi := bigInt(start), bigInt(end)
	want := ""
	if !(start < 0 && end < 0 && start > end) {
		if lo.Sign() < 0 {
			lo.Add(lo, n)
		}
		if hi.Sign() < 0 {
			hi.Add(hi, n)
		}
		if lo.Sign() < 0 {
			lo.SetInt64(0)
		}
		if hi.Sign() < 0 {
			hi.SetInt64(0)
		}
		if hi.Cmp(n) >= 0 {
			hi.Sub(n, bigInt(1))
		}
		if n.Sign() > 0 && lo.Cmp(hi) <= 0 {
			want = val[lo.Int64() : hi.Int64()+1]
		}
	}
	if string(got) != want {
		t.Errorf("GetRange(%s, %d, %d) = %q, want %q", key, start, end, got, want)
	}
}

func checkSetRange(t *testing.T, s *Store, key string, offset int64, maxMem int64) {
	t.Helper()
	old, _, _ := s.Get(nil, b(key))
	for _, val := range []string{"", "xy"} {
		n, err := s.SetRange(b(key), offset, b(val))
		total := new(big.Int).Add(bigInt(offset), bigInt(int64(len(val))))
		var want error
		switch {
		case offset < 0:
			want = ErrOffsetRange
		case val != "" && total.Cmp(bigInt(MaxStringLen)) <= 0 && maxMem > 0 && total.Int64() > maxMem/2:
			want = ErrOOM // refused before the key is looked at, as Redis refuses denyoom commands
		case key == "list":
			want = ErrWrongType
		case val != "" && total.Cmp(bigInt(MaxStringLen)) > 0:
			want = ErrTooLong
		}
		if want != nil {
			if !errors.Is(err, want) {
				t.Errorf("SetRange(%s, %d, %q) = %d, %v; want %v", key, offset, val, n, err, want)
			}
			if cur, _, _ := s.Get(nil, b(key)); string(cur) != string(old) {
				t.Errorf("refused SetRange(%s, %d, %q) changed the value", key, offset, val)
			}
			continue
		}
		if err != nil {
			t.Errorf("SetRange(%s, %d, %q): %v", key, offset, val, err)
			continue
		}
		wantLen := len(old)
		if val != "" {
			wantLen = max(wantLen, int(offset)+len(val))
		}
		if n != wantLen {
			t.Errorf("SetRange(%s, %d, %q) = %d, want %d", key, offset, val, n, wantLen)
		}
	}
	s.Del(bs(key)) // do not keep a 512 MiB value around
}

func checkIncrBy(t *testing.T, s *Store, key string, delta int64) {
	t.Helper()
	got, err := s.IncrBy(b(key), delta)
	var cur int64
	switch key {
	case "list":
		if !errors.Is(err, ErrWrongType) {
			t.Errorf("IncrBy(list) = %v", err)
		}
		return
	case "str":
		if !errors.Is(err, ErrNotInteger) {
			t.Errorf("IncrBy(str) = %v", err)
		}
		return
	case "num":
		cur = 42
	}
	sum := new(big.Int).Add(bigInt(cur), bigInt(delta))
	if !sum.IsInt64() {
		if !errors.Is(err, ErrOverflow) {
			t.Errorf("IncrBy(%s=%d, %d) = %d, %v; want ErrOverflow", key, cur, delta, got, err)
		}
		if key == "num" {
			if v, _ := mustGet(t, s, key); v != "42" {
				t.Errorf("overflowing IncrBy changed the value to %q", v)
			}
		}
		return
	}
	if err != nil || got != sum.Int64() {
		t.Errorf("IncrBy(%s=%d, %d) = %d, %v; want %d", key, cur, delta, got, err, sum.Int64())
	}
}

// checkTTL checks key's state after an expiry of at was applied at now.
func checkTTL(t *testing.T, s *Store, op, key string, at, now int64, existed bool) {
	t.Helper()
	exp, pttl := s.ExpireTime(b(key)), s.PTTL(b(key))
	switch {
	case !existed || (at != 0 && at <= now):
		if exp != -2 || pttl != -2 {
			t.Errorf("%s(%s, %d): ExpireTime %d PTTL %d, want the key gone", op, key, at, exp, pttl)
		}
	case at == 0:
	default:
		if exp != at || pttl != at-now || pttl < 0 {
			t.Errorf("%s(%s, %d): ExpireTime %d PTTL %d, want %d and %d", op, key, at, exp, pttl, at, at-now)
		}
	}
}

func checkExpire(t *testing.T, s *Store, key string, at, now int64) {
	t.Helper()
	existed := key != "missing"
	if got := s.Expire(b(key), at, ExpireAlways); got != existed {
		t.Errorf("Expire(%s, %d) = %v", key, at, got)
	}
	if at == 0 {
		return // 0 is a time in the past for Expire
	}
	checkTTL(t, s, "Expire", key, at, now, existed)
}

func checkSetExpireAt(t *testing.T, s *Store, key string, at, now int64) {
	t.Helper()
	_, _, written, err := s.Set(nil, b(key), b("v"), SetOptions{ExpireAt: at})
	if err != nil || !written {
		t.Errorf("Set(%s, ExpireAt %d) = %v, %v", key, at, written, err)
	}
	checkTTL(t, s, "Set", key, at, now, true)
}

func checkGetEx(t *testing.T, s *Store, key string, at, now int64) {
	t.Helper()
	_, found, err := s.GetEx(nil, b(key), GetExOptions{ExpireAt: at})
	switch key {
	case "list":
		if !errors.Is(err, ErrWrongType) {
			t.Errorf("GetEx(list) = %v", err)
		}
		return
	case "missing":
		if found || err != nil {
			t.Errorf("GetEx(missing) = %v, %v", found, err)
		}
		return
	}
	if !found || err != nil {
		t.Errorf("GetEx(%s, %d) = %v, %v", key, at, found, err)
	}
	checkTTL(t, s, "GetEx", key, at, now, true)
}
