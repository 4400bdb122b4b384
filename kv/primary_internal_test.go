package kv

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/shoalkv/shoal/rdb"
	"github.com/shoalkv/shoal/store"
)

// TestSyncSnapshotIsTheInstantsState: writes after a full sync's instant
// encode the shards they reach first, so the snapshot holds every key as
// it was at the instant, whatever the writes did after; and the file is
// one rdb.Reader reads to the end, checksum included.
func TestSyncSnapshotIsTheInstantsState(t *testing.T) {
	st := store.New(store.Options{ActiveExpireInterval: -1})
	defer st.Close()
	h := New(st, Options{})
	defer h.Close()
	cl := &client{h: h, proto: 2, authed: true}
	cl.parser.Limits = &h.opts.Limits
	run := func(args ...string) {
		t.Helper()
		cl.out = cl.out[:0]
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		h.dispatch(cl, b)
		if len(cl.out) > 0 && cl.out[0] == '-' {
			t.Fatalf("%q: %q", args, cl.out)
		}
	}
	const n = 2000
	for i := range n {
		run("SET", "k"+strconv.Itoa(i), "v"+strconv.Itoa(i))
	}
	run("SELECT", "4")
	run("RPUSH", "list", "a", "b")
	run("SELECT", "0")
	h.startFeeding()

	// The instant, as fullSync takes it.
	for i := range h.stripes {
		h.stripes[i].Lock()
	}
	sn := h.newSyncSnapshot()
	h.primary.snapshot.Store(sn)
	for i := range h.stripes {
		h.stripes[i].Unlock()
	}
	// Writes after it, through the logged path.
	for i := 0; i < n; i += 7 {
		run("SET", "k"+strconv.Itoa(i), "changed")
	}
	run("DEL", "k1")
	run("SET", "new", "x")
	run("SELECT", "4")
	run("LPOP", "list")
	if sn.onWrite.Load() == 0 {
		t.Fatal("no write encoded a shard before it ran")
	}
	file, err := h.finishSnapshot(sn)
	if err != nil {
		t.Fatal(err)
	}

	r, err := rdb.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the snapshot: %v", err)
		}
		if rec == nil {
			break
		}
		if rec.Kind == rdb.RecordKey {
			v := string(rec.Value.Str)
			if rec.Value.Kind != rdb.KindString {
				v = "list of " + strconv.Itoa(rec.Value.Len())
			}
			got[strconv.Itoa(rec.DB)+":"+string(rec.Key)] = v
		}
	}
	if len(got) != n+1 {
		t.Fatalf("%d keys in the snapshot, want %d", len(got), n+1)
	}
	for i := range n {
		if k := "0:k" + strconv.Itoa(i); got[k] != "v"+strconv.Itoa(i) {
			t.Fatalf("%s is %q in the snapshot, was %q at the instant", k, got[k], "v"+strconv.Itoa(i))
		}
	}
	if got["4:list"] != "list of 2" {
		t.Fatalf("4:list is %q in the snapshot", got["4:list"])
	}
}
