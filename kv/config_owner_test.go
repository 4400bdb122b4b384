package kv_test

import (
	"strings"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// TestMaxMemoryIsReadFromTheStore: CONFIG GET and INFO report the limits
// the store was created with, with nothing told to the Handler (it used to
// keep its own copy, which an embedder had to set by hand), and a CONFIG
// SET reaches the store.
func TestMaxMemoryIsReadFromTheStore(t *testing.T) {
	st := store.New(store.Options{MaxMemory: 10 << 20, Policy: store.AllKeysLRU})
	t.Cleanup(st.Close)
	h := kv.New(st, kv.Options{})
	t.Cleanup(h.Close)
	srv, err := eventloop.NewServer(h, eventloop.Options{Addr: "127.0.0.1:0", Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(t.Context()) })
	c := dialRaw(t, srv.Addr().String())
	if r := c.do("CONFIG", "GET", "maxmemory*"); r != "*4\r\n$9\r\nmaxmemory\r\n$8\r\n10485760\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n" {
		t.Fatalf("CONFIG GET maxmemory*: %q", r)
	}
	if r := c.do("INFO", "memory"); !strings.Contains(r, "maxmemory:10485760\r\n") || !strings.Contains(r, "maxmemory_policy:allkeys-lru\r\n") {
		t.Fatalf("INFO memory: %q", r)
	}
	if r := c.do("CONFIG", "SET", "maxmemory", "1mb"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", r)
	}
	if st.MaxMemory() != 1<<20 {
		t.Fatalf("store maxmemory %d after CONFIG SET 1mb", st.MaxMemory())
	}
}
