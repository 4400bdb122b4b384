package store

import (
	"errors"
	"math"
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
