package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/shoalkv/shoal/internal/ascii"
)

// model is the reference: a plain map with Redis semantics written out directly.
type model struct {
	m   map[string]modelEntry
	now func() int64
}

type modelEntry struct {
	val string
	exp int64
}

func (m *model) get(k string) (modelEntry, bool) {
	e, ok := m.m[k]
	if ok && e.exp != 0 && m.now() > e.exp {
		delete(m.m, k)
		return modelEntry{}, false
	}
	return e, ok
}

func (m *model) live() []string {
	var ks []string
	for k := range m.m {
		if _, ok := m.get(k); ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

func sortedStrings(keys [][]byte) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	slices.Sort(out)
	return out
}

// TestModel runs long random operation sequences against Store and the map model and
// compares every reply, with TTLs and an advancing clock.
func TestModel(t *testing.T) {
	for _, tc := range []struct {
		name      string
		shards    int
		collide   bool
		seed, ops uint64
	}{
		{"shards4", 4, false, 1, 20000},
		{"shards1", 1, false, 2, 20000},
		{"shards256", 256, false, 3, 20000},
		{"collisions", 2, true, 4, 10000},
	} {
		t.Run(tc.name, func(t *testing.T) { runModel(t, tc.shards, tc.collide, tc.seed, int(tc.ops)) })
	}
}

func runModel(t *testing.T, shards int, collide bool, seed uint64, ops int) {
	clk := newClock(1_700_000_000_000)
	s := newTestStore(t, Options{Shards: shards, Now: clk.now})
	if collide {
		s.testHash = func(k []byte) uint64 { return uint64(len(k)) % 3 << 62 }
	}
	m := &model{m: map[string]modelEntry{}, now: clk.now}
	r := rand.New(rand.NewPCG(seed, seed*7))
	key := func() string { return "k" + strconv.Itoa(r.IntN(60)) }
	val := func() string {
		switch r.IntN(10) {
		case 0:
			return ""
		case 1:
			return strconv.Itoa(r.IntN(2000) - 1000)
		case 2:
			return string(bytes.Repeat([]byte{byte('a' + r.IntN(26))}, 4000+r.IntN(3000))) // large blocks
		default:
			return string(bytes.Repeat([]byte{byte('a' + r.IntN(26))}, r.IntN(100)))
		}
	}
	ttl := func() int64 {
		if r.IntN(3) == 0 {
			return 0
		}
		return clk.now() + int64(r.IntN(400)) - 50 // sometimes already past
	}
	fail := func(i int, op string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d op %d %s: %s", seed, i, op, fmt.Sprint(args...))
	}
	for i := 0; i < ops; i++ {
		k := key()
		switch op := r.IntN(22); op {
		case 0, 1, 2:
			v, at := val(), ttl()
			o := SetOptions{Mode: SetMode(r.IntN(3)), Get: r.IntN(4) == 0, ExpireAt: at}
			if at == 0 && r.IntN(2) == 0 {
				o.KeepTTL = true
			}
			old, had, written, err := s.Set(nil, b(k), b(v), o)
			e, exists := m.get(k)
			if err != nil || had != (o.Get && exists) || (had && string(old) != e.val) {
				fail(i, "Set", k, o, err, had, string(old))
			}
			wantWritten := !(o.Mode == SetNX && exists) && !(o.Mode == SetXX && !exists)
			if written != wantWritten {
				fail(i, "Set written", written)
			}
			if wantWritten {
				ne := modelEntry{val: v, exp: o.ExpireAt}
				if o.KeepTTL {
					ne.exp = e.exp
				}
				if ne.exp != 0 && ne.exp <= clk.now() {
					delete(m.m, k)
				} else {
					m.m[k] = ne
				}
			}
		case 3, 4, 5:
			v, ok, err := s.Get(nil, b(k))
			e, exists := m.get(k)
			if err != nil || ok != exists || string(v) != e.val {
				fail(i, "Get ", k, ok, exists)
			}
		case 6:
			k2 := key()
			n := s.Del(bs(k, k2))
			want := 0
			for _, x := range []string{k, k2} {
				if _, ok := m.get(x); ok {
					want++
					delete(m.m, x)
				}
			}
			if n != want {
				fail(i, "Del", n, want)
			}
		case 7:
			d := int64(r.IntN(200) - 100)
			n, err := s.IncrBy(b(k), d)
			e, exists := m.get(k)
			cur, isInt := int64(0), true
			if exists {
				cur, isInt = ascii.ParseInt([]byte(e.val))
			}
			if !isInt {
				if !errors.Is(err, ErrNotInteger) {
					fail(i, "IncrBy err", err)
				}
				break
			}
			if err != nil || n != cur+d {
				fail(i, "IncrBy", n, err, cur+d)
			}
			e.val = strconv.FormatInt(cur+d, 10)
			m.m[k] = e
		case 8:
			v := val()
			n, err := s.Append(b(k), b(v))
			e, _ := m.get(k)
			e.val += v
			m.m[k] = e
			if err != nil || n != len(e.val) {
				fail(i, "Append", n, err)
			}
		case 9:
			off, v := int64(r.IntN(6000)), val()
			if r.IntN(2) == 0 {
				off = int64(r.IntN(50))
			}
			n, err := s.SetRange(b(k), off, b(v))
			e, exists := m.get(k)
			if len(v) > 0 || exists {
				if len(v) > 0 {
					buf := []byte(e.val)
					if int(off)+len(v) > len(buf) {
						buf = append(buf, make([]byte, int(off)+len(v)-len(buf))...)
					}
					copy(buf[off:], v)
					e.val = string(buf)
					m.m[k] = e
				}
			}
			if err != nil || n != len(e.val) {
				fail(i, "SetRange", n, err, len(e.val))
			}
		case 10:
			st, en := int64(r.IntN(40)-20), int64(r.IntN(40)-20)
			got, err := s.GetRange(nil, b(k), st, en)
			e, _ := m.get(k)
			want := modelRange(e.val, st, en)
			if err != nil || string(got) != want {
				fail(i, "GetRange", st, en, string(got), want)
			}
		case 11:
			at := ttl()
			cond := ExpireCond(r.IntN(5))
			if at == 0 {
				at = clk.now() + 100
			}
			ok := s.Expire(b(k), at, cond)
			e, exists := m.get(k)
			want := exists
			if exists {
				switch cond {
				case ExpireNX:
					want = e.exp == 0
				case ExpireXX:
					want = e.exp != 0
				case ExpireGT:
					want = e.exp != 0 && at > e.exp
				case ExpireLT:
					want = e.exp == 0 || at < e.exp
				}
			}
			if want {
				if at <= clk.now() {
					delete(m.m, k)
				} else {
					e.exp = at
					m.m[k] = e
				}
			}
			if ok != want {
				fail(i, "Expire", at-clk.now(), cond, ok, want)
			}
		case 12:
			p := s.PTTL(b(k))
			e, exists := m.get(k)
			want := int64(-2)
			if exists {
				want = -1
				if e.exp != 0 {
					want = e.exp - clk.now()
				}
			}
			if p != want {
				fail(i, "PTTL", p, want)
			}
		case 13:
			ok := s.Persist(b(k))
			e, exists := m.get(k)
			if ok != (exists && e.exp != 0) {
				fail(i, "Persist", ok)
			}
			if ok {
				e.exp = 0
				m.m[k] = e
			}
		case 14:
			dst := key()
			nx := r.IntN(2) == 0
			var ok bool
			var err error
			if nx {
				ok, err = s.RenameNX(b(k), b(dst))
			} else {
				err = s.Rename(b(k), b(dst))
				ok = err == nil
			}
			e, exists := m.get(k)
			_, dexists := m.get(dst)
			switch {
			case !exists:
				if !errors.Is(err, ErrNoSuchKey) {
					fail(i, "Rename missing", err)
				}
			case k == dst:
				if err != nil || ok != !nx {
					fail(i, "Rename self", ok, err)
				}
			case nx && dexists:
				if err != nil || ok {
					fail(i, "RenameNX existing", ok, err)
				}
			default:
				if err != nil || !ok {
					fail(i, "Rename", ok, err)
				}
				delete(m.m, k)
				m.m[dst] = e
			}
		case 15:
			clk.advance(int64(r.IntN(60)))
		case 16:
			pairs := bs(k, val(), key(), val())
			nx := r.IntN(2) == 0
			var ok bool
			var err error
			if nx {
				ok, err = s.MSetNX(pairs)
			} else {
				ok, err = true, s.MSet(pairs)
			}
			want := true
			if nx {
				for j := 0; j < len(pairs); j += 2 {
					if _, ex := m.get(string(pairs[j])); ex {
						want = false
					}
				}
			}
			if err != nil || ok != want {
				fail(i, "MSet", ok, err)
			}
			if want {
				for j := 0; j < len(pairs); j += 2 {
					m.m[string(pairs[j])] = modelEntry{val: string(pairs[j+1])}
				}
			}
		case 17:
			keys := bs(k, key(), key())
			s.MGet(keys, func(j int, v []byte, found bool) {
				e, ok := m.get(string(keys[j]))
				if found != ok || string(v) != e.val {
					fail(i, "MGet", j, found)
				}
			})
		case 18:
			v, ok, err := s.GetDel(nil, b(k))
			e, exists := m.get(k)
			if err != nil || ok != exists || string(v) != e.val {
				fail(i, "GetDel", ok)
			}
			delete(m.m, k)
		case 19:
			o := GetExOptions{Persist: r.IntN(3) == 0}
			if r.IntN(2) == 0 {
				o.ExpireAt = ttl()
			}
			v, ok, err := s.GetEx(nil, b(k), o)
			e, exists := m.get(k)
			if err != nil || ok != exists || string(v) != e.val {
				fail(i, "GetEx", ok)
			}
			if exists {
				switch {
				case o.ExpireAt != 0 && o.ExpireAt <= clk.now():
					delete(m.m, k)
				case o.ExpireAt != 0:
					e.exp = o.ExpireAt
					m.m[k] = e
				case o.Persist:
					e.exp = 0
					m.m[k] = e
				}
			}
		case 20:
			if _, exists := m.get(k); s.Exists(bs(k)) != map[bool]int{true: 1}[exists] {
				fail(i, "Exists", exists)
			}
			n, err := s.Strlen(b(k))
			e, _ := m.get(k)
			if err != nil || n != len(e.val) {
				fail(i, "Strlen", n)
			}
		case 21:
			if r.IntN(20) != 0 {
				break
			}
			checkInvariants(t, s)
			want := m.live()
			if got := s.DBSize(); got != len(want) {
				fail(i, "DBSize", got, len(want))
			}
			if got := sortedStrings(s.Keys(b("*"))); !slices.Equal(got, want) {
				fail(i, "Keys", got, want)
			}
			var all [][]byte
			for c, first := uint64(0), true; first || c != 0; first = false {
				var ks [][]byte
				c, ks = s.Scan(c, nil, 1+r.IntN(20), "")
				all = append(all, ks...)
			}
			if got := slices.Compact(sortedStrings(all)); !slices.Equal(got, want) {
				fail(i, "Scan", got, want)
			}
		}
	}
}

// modelRange is GETRANGE written from Redis's description.
func modelRange(v string, start, end int64) string {
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		return ""
	}
	if start < 0 {
		start = max(n+start, 0)
	}
	if end < 0 {
		end = max(n+end, 0)
	}
	end = min(end, n-1)
	if start > end || n == 0 {
		return ""
	}
	return v[start : end+1]
}
