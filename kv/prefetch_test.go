package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/shoalkv/shoal/store"
)

// TestPrefetchedPipelinesAnswerAsBefore runs the same random pipelines of
// reads, writes, SELECTs, wrong arities and unknown commands on two handlers,
// one with the prefetch of execute's windows and one without: the replies
// must be byte for byte the same, split at any point.
func TestPrefetchedPipelinesAnswerAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cmds := []func(k string) string{
		func(k string) string { return resp3("GET", k) },
		func(k string) string { return resp3("SET", k, "v"+k) },
		func(k string) string { return resp3("INCR", k+":n") },
		func(k string) string { return resp3("DEL", k) },
		func(k string) string { return resp3("APPEND", k, "xy") },
		func(k string) string { return resp3("EXISTS", k, k+":n") },
		func(k string) string { return resp3("SELECT", fmt.Sprint(len(k)%3)) },
		func(k string) string { return resp3("GET") },
		func(k string) string { return resp3("NOSUCH", k) },
		func(k string) string { return resp3("HSET", k+":h", "f", k) },
		func(k string) string { return resp3("HGET", k+":h", "f") },
		func(k string) string { return resp3("MSET", k, "1", k+"x", "2") },
		func(string) string { return "PING\r\n" }, // inline
	}
	var in []byte
	for range 3000 {
		k := fmt.Sprint("k", rng.IntN(40))
		in = append(in, cmds[rng.IntN(len(cmds))](k)...)
	}
	run := func(off bool, split int) []byte {
		noPrefetch = off
		defer func() { noPrefetch = false }()
		st := store.New(store.Options{ActiveExpireInterval: -1})
		defer st.Close()
		h := New(st, Options{})
		defer h.Close()
		cl := benchClient(h)
		cl.out = nil
		// Large enough that the prefetch runs (store.PrefetchPays).
		fill := make([]byte, 1024)
		for db := range 3 {
			for i := 0; !h.db(db).PrefetchPays(); i++ {
				h.db(db).Set(nil, fmt.Appendf(nil, "fill:%d", i), fill, store.SetOptions{})
			}
		}
		rest := in
		for len(rest) > 0 {
			chunk := rest[:min(len(rest), split)]
			n := h.execute(cl, chunk)
			if n == 0 && len(chunk) == len(rest) {
				t.Fatalf("stuck with %d bytes left", len(rest))
			}
			if n == 0 {
				split *= 2 // a command longer than the chunk
				continue
			}
			rest = rest[n:]
		}
		return cl.out
	}
	for _, split := range []int{len(in), 1000, 77} {
		want, got := run(true, split), run(false, split)
		if !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("split %d: replies differ at byte %d: prefetched %q, plain %q", split, i,
				got[i:min(len(got), i+80)], want[i:min(len(want), i+80)])
		}
		if !bytes.Contains(want, []byte("$3\r\nvk1\r\n")) {
			t.Fatalf("split %d: the pipeline read nothing back: %.200q", split, want)
		}
	}
}

// TestPeekCommandOnEveryPrefix: the prefetch scan accepts exactly the
// complete commands of a pipeline, whatever the cut, and never reads past it.
func TestPeekCommandOnEveryPrefix(t *testing.T) {
	in := []byte(resp3("GET", "key:1") + resp3("SET", "k", "value") + resp3("X", "") + "*1\r\n$4\r\nPING\r\n" + resp3("GET", "z"))
	ends := map[int]bool{}
	for pos := 0; ; {
		_, _, next, ok := peekCommand(in, pos)
		if !ok {
			break
		}
		ends[next] = true
		pos = next
	}
	if len(ends) != 3 { // the one-argument PING ends the scan
		t.Fatalf("peeked %d commands, want 3", len(ends))
	}
	for cut := range len(in) + 1 {
		pos := 0
		for {
			name, arg, next, ok := peekCommand(in[:cut], pos)
			if !ok {
				break
			}
			if !ends[next] || next > cut || len(name) == 0 {
				t.Fatalf("cut %d: peeked %q %q ending at %d", cut, name, arg, next)
			}
			pos = next
		}
	}
	for _, bad := range []string{"*2\r\n$3\r\nGET\r\n$99999999\r\nk\r\n", "*9\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nkX\n", "*2\n", "$3\r\n"} {
		if _, _, _, ok := peekCommand([]byte(bad), 0); ok {
			t.Fatalf("peekCommand accepted %q", bad)
		}
	}
}

// resp3 encodes a command as a RESP multibulk.
func resp3(args ...string) string {
	s := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		s += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	return s
}

// TestReadAheadGathersFirstKeys: ReadAhead collects the key of each
// client's first command when it has the plain shape and a first key, per
// database (a change of database prefetches what was gathered), and skips
// unauthenticated clients, other shapes and partial commands.
func TestReadAheadGathersFirstKeys(t *testing.T) {
	st := store.New(store.Options{ActiveExpireInterval: -1})
	defer st.Close()
	h := New(st, Options{})
	defer h.Close()
	fill := make([]byte, 1024)
	for db := range 2 {
		for i := 0; !h.db(db).PrefetchPays(); i++ {
			h.db(db).Set(nil, fmt.Appendf(nil, "fill:%d", i), fill, store.SetOptions{})
		}
	}
	newClient := func(db int, authed bool) *Client {
		c := &Client{}
		c.c.h, c.c.authed = h, authed
		c.c.selected.Store(int32(db))
		return c
	}
	db0, db1, anon := newClient(0, true), newClient(0, true), newClient(0, false)
	db1.c.selected.Store(1)
	var r ReadAhead
	r.Add(db0, []byte(resp3("GET", "a")+resp3("GET", "later")))
	r.Add(db0, []byte(resp3("SET", "b", "v")))
	r.Add(anon, []byte(resp3("GET", "secret")))
	r.Add(db0, []byte("PING\r\n"))
	r.Add(db0, []byte(resp3("PING", "x")))
	r.Add(db0, []byte("*2\r\n$3\r\nGET\r\n$5\r\nparti"))
	r.Add(db0, []byte("*9999999999\r\n"))
	if got := fmt.Sprintf("%q", r.keys[:r.n]); got != `["a" "b"]` || r.db != h.db(0) {
		t.Fatalf("gathered %s in db %p, want [a b] in db 0", got, r.db)
	}
	r.Add(db1, []byte(resp3("GET", "c")))
	if got := fmt.Sprintf("%q", r.keys[:r.n]); got != `["c"]` || r.db != h.db(1) {
		t.Fatalf("after a change of database gathered %s, want [c] in db 1", got)
	}
	r.Flush()
	if r.n != 0 {
		t.Fatalf("%d keys left after Flush", r.n)
	}
}
