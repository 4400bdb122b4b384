package store

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"
)

// zmodel is the reference: a slice kept sorted by (score, member).
type zmodel []zpair

type zpair struct {
	m string
	s float64
}

func (zm zmodel) less(i int, s float64, m string) bool {
	return zm[i].s < s || (zm[i].s == s && zm[i].m < m)
}

func (zm *zmodel) find(m string) int {
	for i, p := range *zm {
		if p.m == m {
			return i
		}
	}
	return -1
}

func (zm *zmodel) set(m string, s float64) bool {
	added := true
	if i := zm.find(m); i >= 0 {
		if (*zm)[i].s == s {
			return false
		}
		*zm = append((*zm)[:i], (*zm)[i+1:]...)
		added = false
	}
	i := sort.Search(len(*zm), func(i int) bool { return !zm.less(i, s, m) })
	*zm = append(*zm, zpair{})
	copy((*zm)[i+1:], (*zm)[i:])
	(*zm)[i] = zpair{m, s}
	return added
}

func (zm *zmodel) remove(m string) bool {
	i := zm.find(m)
	if i < 0 {
		return false
	}
	*zm = append((*zm)[:i], (*zm)[i+1:]...)
	return true
}

// checkZSet compares every observable of z with the model, and the tree's invariants.
func checkZSet(t *testing.T, z *ZSet, zm zmodel, ctx string) {
	t.Helper()
	if z.Len() != len(zm) {
		t.Fatalf("%s: Len %d, model %d", ctx, z.Len(), len(zm))
	}
	i := 0
	z.Range(0, z.Len(), false, func(m []byte, s float64) bool {
		if string(m) != zm[i].m || s != zm[i].s {
			t.Fatalf("%s: rank %d is %q %v, model %q %v", ctx, i, m, s, zm[i].m, zm[i].s)
		}
		i++
		return true
	})
	if i != len(zm) {
		t.Fatalf("%s: Range visited %d of %d", ctx, i, len(zm))
	}
	i = len(zm) - 1
	z.Range(0, z.Len(), true, func(m []byte, s float64) bool {
		if string(m) != zm[i].m {
			t.Fatalf("%s: reverse rank %d is %q, model %q", ctx, i, m, zm[i].m)
		}
		i--
		return true
	})
	if tr := z.tree; tr != nil {
		checkTree(t, tr, ctx)
	}
}

func checkTree(t *testing.T, tr *ztree, ctx string) {
	t.Helper()
	var walk func(node uint32, level int) (count int, maxID uint32)
	walk = func(node uint32, level int) (int, uint32) {
		if level == 0 {
			l := &tr.leaves[node]
			if l.n == 0 && tr.n > 0 {
				t.Fatalf("%s: empty leaf in a non-empty tree", ctx)
			}
			if l.n == 0 {
				return 0, znil
			}
			return int(l.n), l.ids[l.n-1]
		}
		in := &tr.inners[node]
		if in.n == 0 {
			t.Fatalf("%s: empty inner node", ctx)
		}
		total := 0
		for k := 0; k < int(in.n); k++ {
			c, mx := walk(in.kids[k], level-1)
			if c != int(in.cnt[k]) || mx != in.max[k] {
				t.Fatalf("%s: inner child %d: count %d (kept %d), max %d (kept %d)", ctx, k, c, in.cnt[k], mx, in.max[k])
			}
			total += c
		}
		return total, in.max[in.n-1]
	}
	if c, _ := walk(tr.root, tr.height); c != tr.n {
		t.Fatalf("%s: tree counts %d, n %d", ctx, c, tr.n)
	}
	live := 0
	for _, s := range tr.slots {
		if s != 0 {
			live++
		}
	}
	if live != tr.n {
		t.Fatalf("%s: %d hash slots used, n %d", ctx, live, tr.n)
	}
}

func TestZSetModelRandomOps(t *testing.T) {
	for _, cfg := range []struct {
		name    string
		members int
		ops     int
		scores  int
	}{
		{"small", 40, 3000, 10},
		{"converts", 300, 8000, 50},
		{"large", 5000, 40000, 1000},
		{"samescore", 800, 6000, 1},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(len(cfg.name))))
			z := NewZSet(1, 1)
			var zm zmodel
			member := func() string {
				k := rng.Intn(cfg.members)
				if k%97 == 0 {
					return fmt.Sprintf("long-member-%070d", k) // converts a listpack
				}
				return fmt.Sprintf("m%d", k)
			}
			score := func() float64 {
				if cfg.scores == 1 {
					return 0 // the lexicographic commands' precondition
				}
				switch rng.Intn(20) {
				case 0:
					return math.Inf(1)
				case 1:
					return math.Inf(-1)
				}
				return float64(rng.Intn(cfg.scores)) / 4
			}
			for op := 0; op < cfg.ops; op++ {
				ctx := fmt.Sprintf("op %d", op)
				switch r := rng.Intn(100); {
				case r < 45:
					m, s := member(), score()
					if got, want := z.Set([]byte(m), s), zm.set(m, s); got != want {
						t.Fatalf("%s: Set(%s) added %v, model %v", ctx, m, got, want)
					}
				case r < 65:
					m := member()
					if got, want := z.Remove([]byte(m)), zm.remove(m); got != want {
						t.Fatalf("%s: Remove(%s) %v, model %v", ctx, m, got, want)
					}
				case r < 75:
					m := member()
					rank, ok := z.Rank([]byte(m))
					if want := zm.find(m); ok != (want >= 0) || (ok && rank != want) {
						t.Fatalf("%s: Rank(%s) = %d %v, model %d", ctx, m, rank, ok, want)
					}
					s, ok := z.Score([]byte(m))
					if want := zm.find(m); ok != (want >= 0) || (ok && s != zm[want].s) {
						t.Fatalf("%s: Score(%s) = %v %v", ctx, m, s, ok)
					}
				case r < 82 && len(zm) > 0:
					k := rng.Intn(len(zm))
					m, s := z.At(k)
					if string(m) != zm[k].m || s != zm[k].s {
						t.Fatalf("%s: At(%d) = %q %v, model %v", ctx, k, m, s, zm[k])
					}
				case r < 90:
					sr := ScoreRange{Min: score(), Max: score(), MinEx: rng.Intn(2) == 0, MaxEx: rng.Intn(2) == 0}
					lo, hi := z.ScoreRanks(sr)
					wlo, whi := 0, 0
					if !sr.Empty() {
						for i, p := range zm {
							if !sr.gteMin(p.s) {
								wlo = i + 1
							}
							if sr.lteMax(p.s) {
								whi = i + 1
							}
						}
						whi = max(whi, wlo)
					}
					if lo != wlo || hi != whi {
						t.Fatalf("%s: ScoreRanks(%+v) = [%d,%d), model [%d,%d)", ctx, sr, lo, hi, wlo, whi)
					}
				case r < 94 && cfg.scores == 1:
					lr := LexRange{Min: LexBound{Value: []byte(member()), Ex: rng.Intn(2) == 0}, Max: LexBound{Value: []byte(member()), Ex: rng.Intn(2) == 0}}
					if rng.Intn(5) == 0 {
						lr.Min = LexBound{Inf: -1, Ex: true}
					}
					if rng.Intn(5) == 0 {
						lr.Max = LexBound{Inf: 1, Ex: true}
					}
					for _, rev := range []bool{false, true} {
						lo, hi := z.LexRanks(lr, rev)
						wlo, whi := 0, 0
						if !lr.Empty() {
							for i, p := range zm {
								if !lr.gteMin([]byte(p.m)) {
									wlo = i + 1
								}
								if lr.lteMax([]byte(p.m)) {
									whi = i + 1
								}
							}
							whi = max(whi, wlo)
						}
						if hi-lo != whi-wlo || (hi > lo && lo != wlo) {
							t.Fatalf("%s: LexRanks(%q..%q, rev %v) = [%d,%d), model [%d,%d)", ctx, lr.Min.Value, lr.Max.Value, rev, lo, hi, wlo, whi)
						}
					}
				case r < 96 && len(zm) > 0:
					lo := rng.Intn(len(zm))
					hi := lo + rng.Intn(min(len(zm)-lo, 40)+1)
					if n := z.RemoveRange(lo, hi); n != hi-lo {
						t.Fatalf("%s: RemoveRange(%d,%d) = %d", ctx, lo, hi, n)
					}
					zm = append(zm[:lo], zm[hi:]...)
				case r < 98:
					c := z.Clone().(*ZSet)
					checkZSet(t, c, zm, ctx+" clone")
					c.Set([]byte("only-in-clone"), 1)
					if _, ok := z.Score([]byte("only-in-clone")); ok {
						t.Fatalf("%s: clone shares storage", ctx)
					}
				default:
					checkZSet(t, z, zm, ctx)
				}
				if op%500 == 0 {
					checkZSet(t, z, zm, ctx)
				}
			}
			checkZSet(t, z, zm, "end")
			if cfg.members >= 300 && z.Encoding() != "skiplist" {
				t.Errorf("a set past 128 elements is %s", z.Encoding())
			}
			if z.Size() <= 0 {
				t.Errorf("Size %d", z.Size())
			}
		})
	}
}

func TestZSetEncodings(t *testing.T) {
	z := NewZSet(1, 1)
	for i := 0; i < ZSetMaxListpackEntries; i++ {
		z.Set([]byte(fmt.Sprint("m", i)), float64(i))
	}
	if z.Encoding() != "listpack" {
		t.Fatalf("128 elements: %s", z.Encoding())
	}
	z.Set([]byte("m0"), 5) // an update does not convert
	if z.Encoding() != "listpack" {
		t.Fatalf("after an update: %s", z.Encoding())
	}
	z.Set([]byte("x"), 1)
	if z.Encoding() != "skiplist" {
		t.Fatalf("129 elements: %s", z.Encoding())
	}
	z.RemoveRange(0, 120)
	if z.Encoding() != "skiplist" {
		t.Fatalf("a skiplist set shrinks back to %s", z.Encoding())
	}
	z.Compact()
	if z.Encoding() != "listpack" || z.Len() != 9 {
		t.Fatalf("Compact: %s, %d elements", z.Encoding(), z.Len())
	}
	long := NewZSet(1, 1)
	long.Set(bytes.Repeat([]byte("a"), 65), 1)
	if long.Encoding() != "skiplist" {
		t.Fatalf("a 65-byte member: %s", long.Encoding())
	}
	if NewZSet(1, 65).Encoding() != "skiplist" || NewZSet(129, 1).Encoding() != "skiplist" {
		t.Fatal("NewZSet ignores its hints")
	}
	// A listpack keeps scores as Redis's text does: -0 reads back as 0.
	neg := NewZSet(1, 1)
	neg.Set([]byte("a"), math.Copysign(0, -1))
	if s, _ := neg.Score([]byte("a")); math.Signbit(s) {
		t.Fatal("a listpack kept -0")
	}
	big := NewZSet(200, 1)
	big.Set([]byte("a"), math.Copysign(0, -1))
	if s, _ := big.Score([]byte("a")); !math.Signbit(s) {
		t.Fatal("a skiplist lost -0")
	}
}

// TestZSetScanCoversEverything: a full ZSCAN iteration returns every element that was
// present throughout, even when the set grows and shrinks between calls.
func TestZSetScanCoversEverything(t *testing.T) {
	z := NewZSet(1000, 1)
	for i := 0; i < 2000; i++ {
		z.Set([]byte(fmt.Sprint("stable", i)), float64(i))
	}
	seen := map[string]bool{}
	cursor, calls := uint64(0), 0
	for {
		cursor = z.Scan(cursor, 10, func(m []byte, _ float64) { seen[string(m)] = true })
		calls++
		switch calls % 3 {
		case 0:
			for i := 0; i < 300; i++ {
				z.Set([]byte(fmt.Sprint("extra", calls, "-", i)), 1)
			}
		case 1:
			z.Range(0, z.Len(), false, func(m []byte, _ float64) bool { return true })
			for i := 0; i < 300; i++ {
				z.Remove([]byte(fmt.Sprint("extra", calls-1, "-", i)))
			}
		}
		if cursor == 0 || calls > 100000 {
			break
		}
	}
	for i := 0; i < 2000; i++ {
		if !seen[fmt.Sprint("stable", i)] {
			t.Fatalf("stable%d never returned (%d calls)", i, calls)
		}
	}
}

func TestZSetTreeLargeRanks(t *testing.T) {
	z := NewZSet(1000, 1)
	const n = 100000
	perm := rand.New(rand.NewSource(1)).Perm(n)
	for _, i := range perm {
		z.Set([]byte(fmt.Sprintf("%08d", i)), float64(i%1000))
	}
	for _, i := range perm[:2000] {
		r, ok := z.Rank([]byte(fmt.Sprintf("%08d", i)))
		// ranks: by score i%1000, then member; members with score s are s, s+1000, ...
		want := (i%1000)*(n/1000) + i/1000
		if !ok || r != want {
			t.Fatalf("Rank(%d) = %d, want %d", i, r, want)
		}
	}
	if z.tree.height < 2 {
		t.Fatalf("height %d for %d elements", z.tree.height, n)
	}
	for i := 0; i < n; i += 2 {
		z.Remove([]byte(fmt.Sprintf("%08d", i)))
	}
	checkTree(t, z.tree, "after removing half")
	z.RemoveRange(0, z.Len())
	if z.Len() != 0 || z.tree.height != 0 {
		t.Fatalf("emptied: len %d height %d", z.Len(), z.tree.height)
	}
}

func BenchmarkZSetSetSkiplist(b *testing.B) {
	z := NewZSet(1000, 1)
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("member:%08d", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		z.Set(keys[i&(len(keys)-1)], float64(i%1000))
	}
}

func BenchmarkZSetRankSkiplist(b *testing.B) {
	z := NewZSet(1000, 1)
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("member:%08d", i))
		z.Set(keys[i], float64(i%1000))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := z.Rank(keys[i&(len(keys)-1)]); !ok {
			b.Fatal("missing")
		}
	}
}

func BenchmarkZSetSetListpack(b *testing.B) {
	keys := make([][]byte, 100)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("m%d", i))
	}
	z := NewZSet(1, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		z.Set(keys[i%len(keys)], float64(i%37))
	}
}
