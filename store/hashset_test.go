package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// hashContents returns h as a Go map, checking Range and Len agree.
func hashContents(t *testing.T, h *Hash) map[string]string {
	t.Helper()
	m := map[string]string{}
	h.Range(func(f, v []byte) bool {
		if _, dup := m[string(f)]; dup {
			t.Fatalf("Range returned field %q twice", f)
		}
		m[string(f)] = string(v)
		return true
	})
	if len(m) != h.Len() {
		t.Fatalf("Range gave %d fields, Len says %d", len(m), h.Len())
	}
	return m
}

func setContents(t *testing.T, s *Set) map[string]bool {
	t.Helper()
	m := map[string]bool{}
	s.Range(func(e []byte) bool {
		if m[string(e)] {
			t.Fatalf("Range returned member %q twice", e)
		}
		m[string(e)] = true
		return true
	})
	if len(m) != s.Len() {
		t.Fatalf("Range gave %d members, Len says %d", len(m), s.Len())
	}
	return m
}

func TestHashListpackKeepsInsertionOrderAndConvertsPastLimits(t *testing.T) {
	h := NewHash()
	for i := 0; i < HashMaxListpackEntries; i++ {
		h.Set([]byte(fmt.Sprint("f", i)), []byte(strconv.Itoa(i)))
	}
	h.Set([]byte("f3"), []byte("replaced, longer than before")) // keeps its place
	if h.Encoding() != "listpack" || h.Len() != HashMaxListpackEntries {
		t.Fatalf("%d fields: encoding %s, len %d", HashMaxListpackEntries, h.Encoding(), h.Len())
	}
	var order []string
	h.Range(func(f, v []byte) bool { order = append(order, string(f)); return true })
	for i, f := range order {
		if f != fmt.Sprint("f", i) {
			t.Fatalf("position %d holds %s: listpack order is insertion order", i, f)
		}
	}
	if v, _ := h.Get([]byte("f3")); string(v) != "replaced, longer than before" {
		t.Fatalf("f3 = %q", v)
	}
	h.Set([]byte("one more"), []byte("x"))
	if h.Encoding() != "hashtable" {
		t.Fatalf("%d fields: encoding %s, want hashtable", h.Len(), h.Encoding())
	}
	for _, f := range order {
		h.Delete([]byte(f))
	}
	if h.Encoding() != "hashtable" || h.Len() != 1 {
		t.Fatalf("after deleting: %s with %d fields; a hash never converts back", h.Encoding(), h.Len())
	}

	long := strings.Repeat("v", HashMaxListpackValue)
	for _, tc := range []struct {
		f, v string
		enc  string
	}{
		{long, "x", "listpack"}, {"x", long, "listpack"}, {long + "v", "x", "hashtable"}, {"x", long + "v", "hashtable"},
	} {
		h := NewHash()
		h.Set([]byte("a"), []byte("b"))
		h.Set([]byte(tc.f), []byte(tc.v))
		if h.Encoding() != tc.enc {
			t.Errorf("field of %d bytes, value of %d: %s, want %s", len(tc.f), len(tc.v), h.Encoding(), tc.enc)
		}
		if v, ok := h.Get([]byte(tc.f)); !ok || string(v) != tc.v {
			t.Errorf("Get after conversion: %q %v", v, ok)
		}
	}
}

func TestSetEncodingsFollowRedis70(t *testing.T) {
	s := NewSet()
	for i := 0; i < SetMaxIntsetEntries; i++ {
		s.Add([]byte(strconv.Itoa((i * 7919) % 100003)))
	}
	if s.Encoding() != "intset" {
		t.Fatalf("%d integers: %s", s.Len(), s.Encoding())
	}
	var prev int64 = -1
	s.Range(func(m []byte) bool {
		v, _ := strconv.ParseInt(string(m), 10, 64)
		if v <= prev {
			t.Fatalf("intset not ascending: %d after %d", v, prev)
		}
		prev = v
		return true
	})
	s.Add([]byte("-1"))
	if s.Encoding() != "hashtable" {
		t.Fatalf("%d integers: %s, want hashtable", s.Len(), s.Encoding())
	}
	for _, tc := range []struct {
		members []string
		enc     string
	}{
		{[]string{"1", "-5", "9223372036854775807", "-9223372036854775808"}, "intset"},
		{[]string{"1", "a"}, "hashtable"},
		{[]string{"-0"}, "hashtable"}, {[]string{"01"}, "hashtable"}, {[]string{"+1"}, "hashtable"},
		{[]string{"9223372036854775808"}, "hashtable"}, {[]string{" 1"}, "hashtable"},
	} {
		s := NewSet()
		for _, m := range tc.members {
			s.Add([]byte(m))
		}
		if s.Encoding() != tc.enc {
			t.Errorf("%q: %s, want %s", tc.members, s.Encoding(), tc.enc)
		}
		for _, m := range tc.members {
			if !s.Has([]byte(m)) {
				t.Errorf("%q: %q missing", tc.members, m)
			}
		}
	}
}

func TestIntsetWidensAndKeepsValues(t *testing.T) {
	s := NewSet()
	vals := []int64{5, -3, 40000, -70000, 1 << 40, -(1 << 62), 0, 32767, -32768, 2147483647, -2147483648}
	for i, v := range vals {
		s.Add([]byte(strconv.FormatInt(v, 10)))
		want := slices.Clone(vals[:i+1])
		slices.Sort(want)
		var got []int64
		s.Range(func(m []byte) bool {
			v, _ := strconv.ParseInt(string(m), 10, 64)
			got = append(got, v)
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("after adding %d (width %d): %v, want %v", v, s.w, got, want)
		}
	}
	if s.w != 8 {
		t.Fatalf("width %d after adding 1<<40", s.w)
	}
}

// TestHashAgainstMap and TestSetAgainstMap apply random operations to a collection
// and to a Go map and compare them after every step, through both encodings and the
// dict's page recycling and compaction.
func TestHashAgainstMap(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed))
		h, model := NewHash(), map[string]string{}
		field := func() string {
			if rng.IntN(50) == 0 {
				return strings.Repeat("F", 65+rng.IntN(3))
			}
			return fmt.Sprint("f", rng.IntN(700))
		}
		value := func() string {
			switch rng.IntN(100) {
			case 0:
				return strings.Repeat("big", 3000) // a page of its own
			case 1:
				return strings.Repeat("v", 65)
			}
			return strings.Repeat("x", rng.IntN(20))
		}
		for i := 0; i < 20000; i++ {
			switch op := rng.IntN(10); {
			case op < 5:
				f, v := field(), value()
				_, had := model[f]
				if added := h.Set([]byte(f), []byte(v)); added == had {
					t.Fatalf("seed %d op %d: Set(%q) added=%v, model had it: %v", seed, i, f, added, had)
				}
				model[f] = v
			case op < 8 || len(model) > 1500:
				f := field()
				_, had := model[f]
				if h.Delete([]byte(f)) != had {
					t.Fatalf("seed %d op %d: Delete(%q) disagrees with the model (%v)", seed, i, f, had)
				}
				delete(model, f)
			default:
				f := field()
				v, ok := h.Get([]byte(f))
				if mv, had := model[f]; ok != had || string(v) != mv {
					t.Fatalf("seed %d op %d: Get(%q) = %q %v, model %q %v", seed, i, f, v, ok, mv, had)
				}
			}
			if i%500 == 0 || i == 19999 {
				got := hashContents(t, h)
				if len(got) != len(model) {
					t.Fatalf("seed %d op %d: %d fields, model %d", seed, i, len(got), len(model))
				}
				for f, v := range model {
					if got[f] != v {
						t.Fatalf("seed %d op %d: field %q = %q, model %q", seed, i, f, got[f], v)
					}
				}
				checkDict(t, h.d)
				c := h.Clone().(*Hash)
				h.Set([]byte("clone-probe"), []byte("x"))
				if _, ok := c.Get([]byte("clone-probe")); ok {
					t.Fatal("a clone saw a change to its original")
				}
				h.Delete([]byte("clone-probe"))
			}
		}
	}
}

func TestSetAgainstMap(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		s, model := NewSet(), map[string]bool{}
		member := func() string {
			if seed%2 == 0 && rng.IntN(200) != 0 {
				return strconv.Itoa(rng.IntN(900) - 300) // mostly an intset, for a while
			}
			return fmt.Sprint("m", rng.IntN(3000))
		}
		for i := 0; i < 20000; i++ {
			switch op := rng.IntN(12); {
			case op < 6:
				m := member()
				if s.Add([]byte(m)) == model[m] {
					t.Fatalf("seed %d op %d: Add(%q) disagrees with the model", seed, i, m)
				}
				model[m] = true
			case op < 9:
				m := member()
				if s.Remove([]byte(m)) != model[m] {
					t.Fatalf("seed %d op %d: Remove(%q) disagrees with the model", seed, i, m)
				}
				delete(model, m)
			case op < 10 && s.Len() > 1:
				k := 1 + rng.IntN(s.Len()-1)
				popped := map[string]bool{}
				s.Pop(k, func(m []byte) {
					if !model[string(m)] || popped[string(m)] {
						t.Fatalf("seed %d op %d: Pop gave %q (member: %v, repeated: %v)", seed, i, m, model[string(m)], popped[string(m)])
					}
					popped[string(m)] = true
				})
				if len(popped) != k {
					t.Fatalf("seed %d op %d: Pop(%d) gave %d", seed, i, k, len(popped))
				}
				for m := range popped {
					delete(model, m)
				}
			default:
				m := member()
				if s.Has([]byte(m)) != model[m] {
					t.Fatalf("seed %d op %d: Has(%q) disagrees with the model", seed, i, m)
				}
			}
			if i%500 == 0 || i == 19999 {
				got := setContents(t, s)
				if len(got) != len(model) {
					t.Fatalf("seed %d op %d: %d members, model %d", seed, i, len(got), len(model))
				}
				for m := range model {
					if !got[m] {
						t.Fatalf("seed %d op %d: %q missing", seed, i, m)
					}
				}
				checkDict(t, s.d)
			}
		}
	}
}

// checkDict checks the dict's bookkeeping: every element findable through its
// slot, live and garbage bytes matching the pages, page capacity matching.
func checkDict(t *testing.T, d *bdict) {
	t.Helper()
	if d == nil {
		return
	}
	live, n := 0, 0
	perPage := map[uint32]int{}
	for id := range d.ents {
		e := d.ents[id]
		if e.page == dnil {
			continue
		}
		n++
		live += int(e.klen + e.vlen)
		perPage[e.page] += int(e.klen + e.vlen)
		if d.find(d.key(uint32(id))) != uint32(id) {
			t.Fatalf("element %d (%q) not found by its key", id, d.key(uint32(id)))
		}
	}
	if n != d.n || live != d.liveBytes {
		t.Fatalf("%d elements of %d bytes; dict counts %d of %d", n, live, d.n, d.liveBytes)
	}
	garbage, capacity := 0, int64(0)
	for i, p := range d.pages {
		if p.buf == nil {
			continue
		}
		if perPage[uint32(i)] != p.live {
			t.Fatalf("page %d: %d live bytes, counted %d", i, perPage[uint32(i)], p.live)
		}
		garbage += len(p.buf) - p.live
		capacity += int64(cap(p.buf))
	}
	if garbage != d.garbage || capacity != d.pageBytes {
		t.Fatalf("garbage %d, capacity %d; dict counts %d, %d", garbage, capacity, d.garbage, d.pageBytes)
	}
	if d.garbage >= dictPageSize && d.garbage > 2*d.liveBytes+dictPageSize {
		t.Fatalf("garbage %d for %d live bytes: compaction did not run", d.garbage, d.liveBytes)
	}
}

func TestRandomAndPopAreUniformEnough(t *testing.T) {
	for _, n := range []int{5, 300, 2000} {
		for _, ints := range []bool{true, false} {
			s := NewSet()
			for i := 0; i < n; i++ {
				m := strconv.Itoa(i)
				if !ints {
					m = "m" + m
				}
				s.Add([]byte(m))
			}
			counts := map[string]int{}
			draws := n * 200
			s.Random(draws, false, func(m []byte) { counts[string(m)]++ })
			if len(counts) != n {
				t.Fatalf("n=%d ints=%v: %d of the members drawn in %d draws", n, ints, len(counts), draws)
			}
			for m, c := range counts {
				if c < 100 || c > 320 {
					t.Fatalf("n=%d: %q drawn %d times of an expected 200", n, m, c)
				}
			}
			for _, k := range []int{1, n / 4, n - 1} {
				if k == 0 {
					continue
				}
				seen := map[string]bool{}
				s.Random(k, true, func(m []byte) {
					if seen[string(m)] || !s.Has(m) {
						t.Fatalf("unique draw repeated or invented %q", m)
					}
					seen[string(m)] = true
				})
				if len(seen) != k {
					t.Fatalf("unique draw of %d gave %d", k, len(seen))
				}
			}
		}
	}
}

func TestSetPopKeepsRemainderAsIntsetLikeRedis(t *testing.T) {
	s := NewSet()
	for i := 0; i < 1000; i++ {
		s.Add([]byte(strconv.Itoa(i)))
	}
	if s.Encoding() != "hashtable" {
		t.Fatal(s.Encoding())
	}
	s.Pop(600, func([]byte) {}) // 600*5 > 1000: the 400 left are rebuilt, as an intset
	if s.Encoding() != "intset" || s.Len() != 400 {
		t.Fatalf("after popping 600 of 1000 integers: %s with %d", s.Encoding(), s.Len())
	}
	s.Add([]byte("x"))
	for i := 0; i < 2000; i++ {
		s.Add([]byte(strconv.Itoa(i)))
	}
	s.Pop(10, func([]byte) {}) // few: popped one by one, encoding kept
	if s.Encoding() != "hashtable" || s.Len() != 1991 {
		t.Fatalf("after popping 10: %s with %d", s.Encoding(), s.Len())
	}
}

func TestScanReturnsEveryElementAcrossResizes(t *testing.T) {
	h := NewHash()
	for i := 0; i < 5000; i++ {
		h.Set([]byte(fmt.Sprint("f", i)), []byte("v"))
	}
	seen := map[string]bool{}
	cursor, calls := uint64(0), 0
	for {
		cursor = h.Scan(cursor, 10, func(f, _ []byte) { seen[string(f)] = true })
		calls++
		// Grow then shrink the table mid-iteration; fields 0..999 stay throughout.
		switch calls {
		case 20:
			for i := 5000; i < 20000; i++ {
				h.Set([]byte(fmt.Sprint("f", i)), []byte("v"))
			}
		case 100:
			for i := 1000; i < 20000; i++ {
				h.Delete([]byte(fmt.Sprint("f", i)))
			}
		}
		if cursor == 0 {
			break
		}
		if calls > 100000 {
			t.Fatal("scan does not end")
		}
	}
	for i := 0; i < 1000; i++ {
		if !seen[fmt.Sprint("f", i)] {
			t.Fatalf("f%d, present throughout, never returned", i)
		}
	}
}

func TestSizeTracksContents(t *testing.T) {
	h := NewHash()
	empty := h.Size()
	for i := 0; i < 100000; i++ {
		h.Set([]byte(fmt.Sprint("field:", i)), bytes.Repeat([]byte{'v'}, 50))
	}
	big := h.Size()
	if big < 100000*60 || big > 100000*300 {
		t.Fatalf("100k fields of ~60 bytes: Size %d", big)
	}
	for i := 0; i < 100000; i++ {
		h.Delete([]byte(fmt.Sprint("field:", i)))
	}
	h.Set([]byte("last"), []byte("v"))
	if small := h.Size(); small > big/10 || small < empty {
		t.Fatalf("after deleting all but one: Size %d (full %d)", small, big)
	}
}

func TestHashIncrByFloat(t *testing.T) {
	for _, tc := range []struct {
		cur, incr, want string
		err             error
	}{
		{"", "1.5", "1.5", nil},
		{"0.1", "0.2", "0.3", nil},
		{"1.7976931348623157e308", "1.7976931348623157e308", "", nil}, // finite in long double
		{"abc", "1", "", ErrHashNotFloat},
		{"1", "abc", "", ErrNotFloat},
		{"1", "inf", "", ErrHashNaNOrInf},
		{"1", "nan", "", ErrNotFloat},
		{"inf", "1", "", ErrNaNOrInf},
		{"5", "-5", "0", nil},
	} {
		var cur []byte
		if tc.cur != "" {
			cur = []byte(tc.cur)
		}
		got, err := HashIncrByFloat(nil, cur, []byte(tc.incr))
		if err != tc.err {
			t.Errorf("%s + %s: error %v, want %v", tc.cur, tc.incr, err, tc.err)
			continue
		}
		if tc.want != "" && string(got) != tc.want {
			t.Errorf("%s + %s = %s, want %s", tc.cur, tc.incr, got, tc.want)
		}
		if err == nil && tc.want == "" && !strings.HasPrefix(string(got), "35953862697246313") {
			t.Errorf("%s + %s = %s", tc.cur, tc.incr, got)
		}
	}
}

func TestHashSetsStayOutOfTheGoHeap(t *testing.T) {
	// The large encoding keeps a fixed number of Go pointers however many elements.
	s := NewSet()
	for i := 0; i < 100000; i++ {
		s.Add([]byte(fmt.Sprint("member-", i)))
	}
	pages := 0
	for _, p := range s.d.pages {
		if p.buf != nil {
			pages++
		}
	}
	if per := 100000 / pages; per < 100 {
		t.Fatalf("%d pages for 100k members: %d members per Go object", pages, per)
	}
	keys := make([]string, 0, 10)
	s.Scan(0, 10, func(m []byte) { keys = append(keys, string(m)) })
	sort.Strings(keys)
	if len(keys) == 0 {
		t.Fatal("scan of a large set returned nothing")
	}
}
