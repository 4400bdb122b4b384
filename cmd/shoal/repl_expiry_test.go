package main

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
)

// Expiry across replication, as Redis 7.0 does it: a primary deletes the
// keys whose TTL ran out (met by a command, or found by its active cycle)
// and the keys it evicts, and sends DEL for each; a replica never expires
// a key on its own: its reads miss the key, and the primary's DEL removes
// it.

// waitUntil polls cond every 20 ms for up to 30 s and fails the test with
// what if it never holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dbsize is DBSIZE at c, failing the test on an error.
func dbsize(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	n, err := c.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatalf("DBSIZE: %v", err)
	}
	return n
}

// do runs a command at c and returns its reply as go-redis reads it, or
// the error's text.
func do(c *redis.Client, args ...any) string {
	v, err := c.Do(context.Background(), args...).Result()
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%v", v)
}

// holdsFor checks, for a second, that cond holds at every look.
func holdsFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if !cond() {
			t.Fatalf("no longer so: %s", what)
		}
	}
}

// TestRedisReplicaGetsShoalsExpiries: a redis-server replica of a Shoal
// primary keeps keys whose TTL ran out (DBSIZE counts them; GET misses
// them) for as long as Shoal has not deleted them, with its active expirer
// off (DEBUG SET-ACTIVE-EXPIRE 0); a GET on Shoal deletes one and the
// replica follows; the active expirer, back on, deletes the rest; keys
// Shoal evicts under maxmemory go from the replica too, and the two data
// sets end equal.
func TestRedisReplicaGetsShoalsExpiries(t *testing.T) {
	ctx := context.Background()
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	primary := authClient(t, p.addr(), "", 0)
	r := startRedisReplica(t, p.port)
	replica := authClient(t, r.addr, "", 0)
	waitReplicaOnline(t, primary, 1)

	if got := do(primary, "DEBUG", "SET-ACTIVE-EXPIRE", "0"); got != "OK" {
		t.Fatalf("DEBUG SET-ACTIVE-EXPIRE 0: %s", got)
	}
	primary.Set(ctx, "keep", "1", 0)
	for i := range 10 {
		primary.Set(ctx, fmt.Sprintf("v:%d", i), "1", 150*time.Millisecond)
	}
	waitUntil(t, "the replica has the 11 keys", func() bool { return dbsize(t, replica) == 11 })
	waitUntil(t, "the TTLs ran out (PTTL on the replica)", func() bool { return do(replica, "PTTL", "v:9") == "-2" })
	if got := do(replica, "GET", "v:0"); got != "error: redis: nil" {
		t.Fatalf("GET of an expired key on the replica: %s", got)
	}
	holdsFor(t, "the replica keeps the expired keys Shoal has not deleted", func() bool { return dbsize(t, replica) == 11 })

	if got := do(primary, "GET", "v:0"); got != "error: redis: nil" {
		t.Fatalf("GET of an expired key on Shoal: %s", got)
	}
	waitUntil(t, "the replica applied the DEL of the key Shoal met expired", func() bool { return dbsize(t, replica) == 10 })
	if got := do(replica, "EXISTS", "v:1"); got != "0" {
		t.Fatalf("EXISTS v:1 on the replica: %s", got)
	}

	do(primary, "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	waitUntil(t, "Shoal's active expirer's DELs reached the replica", func() bool { return dbsize(t, replica) == 1 })

	// Eviction: a random key goes for each new one past maxmemory.
	used := atoi(infoFields(t, primary, "memory")["used_memory"])
	primary.ConfigSet(ctx, "maxmemory-policy", "allkeys-random")
	primary.ConfigSet(ctx, "maxmemory", fmt.Sprint(used+256<<10))
	value := strings.Repeat("x", 1000)
	for i := 0; atoi(infoFields(t, primary, "stats")["evicted_keys"]) < 50; i++ {
		if i > 100000 {
			t.Fatal("Shoal evicted nothing after 100000 writes of 1 KB")
		}
		if err := primary.Set(ctx, fmt.Sprintf("e:%d", i), value, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := primary.Do(ctx, "WAIT", "1", "10000").Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the replica holds what Shoal holds", func() bool { return dbsize(t, replica) == dbsize(t, primary) })
	compareDatasets(t, p.addr(), "", r.addr)
}

// TestShoalReplicaWaitsForThePrimarysDEL: a Shoal replica and a
// redis-server replica of one redis-server primary whose active expirer is
// off answer alike for keys whose TTL ran out: DBSIZE and INFO keyspace
// count them, GET, EXISTS, TTL, TYPE, KEYS and SCAN miss them, for as long
// as the primary keeps them; a GET on the primary deletes one from both,
// and the primary's active cycle the rest. A write of the replica's own
// client (replica-read-only no) deletes the expired key it names first,
// as Redis's does; with replica-ignore-maxmemory yes the primary's writes
// pass maxmemory.
func TestShoalReplicaWaitsForThePrimarysDEL(t *testing.T) {
	ctx := context.Background()
	primaryAddr := redistest.StartServer(t, "--enable-debug-command", "yes")
	_, port, _ := net.SplitHostPort(primaryAddr)
	primary := authClient(t, primaryAddr, "", 0)
	r := startRedisReplica(t, atoi(port))
	p := startBinary(t, "--dir", t.TempDir(), "--replicaof", "127.0.0.1 "+port)
	replicas := map[string]*redis.Client{"redis-server": authClient(t, r.addr, "", 0), "shoal": authClient(t, p.addr(), "", 0)}
	waitReplicaOnline(t, primary, 2)

	primary.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	primary.Set(ctx, "keep", "1", 0)
	for i := range 5 {
		primary.Set(ctx, fmt.Sprintf("e:%d", i), "1", 150*time.Millisecond)
	}
	for name, c := range replicas {
		waitUntil(t, name+" has the 6 keys", func() bool { return dbsize(t, c) == 6 })
		waitUntil(t, "the TTLs ran out on "+name, func() bool { return do(c, "PTTL", "e:4") == "-2" })
	}
	answers := func(name string) []string {
		c := replicas[name]
		ks := infoFields(t, c, "keyspace")["db0"]
		ks = ks[:strings.Index(ks, ",avg_ttl")] // Redis estimates avg_ttl; Shoal reports 0
		return []string{
			do(c, "DBSIZE"), ks, do(c, "GET", "e:0"), do(c, "EXISTS", "e:0", "e:1", "keep"), do(c, "TTL", "e:0"),
			do(c, "PTTL", "e:1"), do(c, "TYPE", "e:2"), do(c, "KEYS", "*"), do(c, "SCAN", "0", "COUNT", "100"),
			do(c, "MGET", "e:3", "keep"), do(c, "STRLEN", "e:4"), do(c, "OBJECT", "ENCODING", "e:4"),
		}
	}
	want := answers("redis-server")
	if want[0] != "6" {
		t.Fatalf("the redis-server replica's DBSIZE is %s, want 6: %q", want[0], want)
	}
	holdsFor(t, "the Shoal replica answers as the redis-server replica and keeps the keys", func() bool {
		got := answers("shoal")
		if !reflect.DeepEqual(got, want) {
			t.Logf("shoal:        %q\nredis-server: %q", got, want)
			return false
		}
		return true
	})

	if got := do(primary, "GET", "e:0"); got != "error: redis: nil" {
		t.Fatalf("GET of an expired key on the primary: %s", got)
	}
	for name, c := range replicas {
		waitUntil(t, name+" applied the primary's DEL", func() bool { return dbsize(t, c) == 5 })
	}
	primary.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	for name, c := range replicas {
		waitUntil(t, name+" applied the DELs of the primary's active cycle", func() bool { return dbsize(t, c) == 1 })
	}

	// A writable replica: its own client's write deletes the expired key
	// it names (and the SET XX then finds none), a read does not.
	primary.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	primary.Set(ctx, "w", "1", 150*time.Millisecond)
	primary.Set(ctx, "r", "1", 150*time.Millisecond)
	var writes [][]string
	for _, name := range []string{"redis-server", "shoal"} {
		c := replicas[name]
		waitUntil(t, name+" has w", func() bool { return dbsize(t, c) == 3 })
		waitUntil(t, "w's TTL ran out on "+name, func() bool { return do(c, "PTTL", "w") == "-2" })
		c.ConfigSet(ctx, "replica-read-only", "no")
		writes = append(writes, []string{do(c, "GET", "r"), do(c, "SET", "w", "2", "XX"), do(c, "DBSIZE"), do(c, "SET", "w", "3"), do(c, "GET", "w")})
	}
	if !reflect.DeepEqual(writes[0], writes[1]) {
		t.Fatalf("writable replicas: shoal %q, redis-server %q", writes[1], writes[0])
	}
	if writes[0][2] != "2" {
		t.Fatalf("DBSIZE after a write to an expired key: %s, want 2", writes[0][2])
	}

	// replica-ignore-maxmemory yes (the default): the primary's writes
	// are applied past the replica's maxmemory, nothing is evicted.
	shoal := replicas["shoal"]
	if got := do(shoal, "CONFIG", "GET", "replica-ignore-maxmemory"); got != "map[replica-ignore-maxmemory:yes]" {
		t.Fatalf("CONFIG GET replica-ignore-maxmemory: %s", got)
	}
	shoal.ConfigSet(ctx, "maxmemory-policy", "allkeys-random")
	shoal.ConfigSet(ctx, "maxmemory", "1")
	for i := range 100 {
		primary.Set(ctx, fmt.Sprintf("m:%d", i), strings.Repeat("x", 1000), 0)
	}
	if err := primary.Do(ctx, "WAIT", "2", "10000").Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the Shoal replica applied the 100 writes past maxmemory", func() bool { return dbsize(t, shoal) == dbsize(t, primary) })
	if ev := infoFields(t, shoal, "stats")["evicted_keys"]; ev != "0" {
		t.Fatalf("the replica evicted %s keys with replica-ignore-maxmemory yes", ev)
	}
}
