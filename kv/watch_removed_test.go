package kv_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestEvictionFailsWatch: a watched key that maxmemory evicts fails the
// watcher's EXEC, as in Redis 7.0 (performEvictions signals the key as
// modified), in database 0 and in another database.
func TestEvictionFailsWatch(t *testing.T) {
	for _, db := range []string{"0", "5"} {
		t.Run("db"+db, func(t *testing.T) {
			srv := startShoal(t, kv.Options{}, eventloop.Options{})
			watcher, writer := dialRaw(t, srv.addr), dialRaw(t, srv.addr)
			for _, c := range []*rawConn{watcher, writer} {
				if r := c.Do("SELECT", db); r != "+OK\r\n" {
					t.Fatalf("SELECT %s: %q", db, r)
				}
			}
			writer.Do("SET", "watched", "v")
			if r := watcher.Do("WATCH", "watched"); r != "+OK\r\n" {
				t.Fatalf("WATCH: %q", r)
			}
			writer.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
			writer.Do("CONFIG", "SET", "maxmemory", "4mb")
			value := strings.Repeat("x", 512)
			deadline := time.Now().Add(60 * time.Second)
			for i := 0; writer.Do("EXISTS", "watched") == ":1\r\n"; i++ {
				if r := writer.Do("SET", "filler:"+strconv.Itoa(i), value); r != "+OK\r\n" {
					t.Fatalf("SET filler %d: %q", i, r)
				}
				if time.Now().After(deadline) {
					t.Fatal("the watched key was never evicted")
				}
			}
			writer.Do("CONFIG", "SET", "maxmemory", "0")
			watcher.Do("MULTI")
			watcher.Do("SET", "watched", "mine")
			if r := watcher.Do("EXEC"); r != "*-1\r\n" {
				t.Fatalf("EXEC after the watched key was evicted: %q, want a null array", r)
			}
		})
	}
}
