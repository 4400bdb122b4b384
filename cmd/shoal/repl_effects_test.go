package main

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestRedisReplicaGetsPFCountCacheAndSortStore: a redis-server replica of
// shoal ends with the same bytes for an HLL whose cached cardinality a
// PFCOUNT filled (PFCOUNT is in the stream, as Redis propagates it) and
// the same list for a SORT ... STORE (logged as DEL and RPUSH).
func TestRedisReplicaGetsPFCountCacheAndSortStore(t *testing.T) {
	ctx := context.Background()
	p := startBinary(t, "--dir", t.TempDir())
	primary := authClient(t, p.addr(), "", 0)
	r := startRedisReplica(t, p.port)
	replica := authClient(t, r.addr, "", 0)
	waitReplicaOnline(t, primary, 1)

	primary.PFAdd(ctx, "hll", "a", "b", "c", "d")
	if n := primary.PFCount(ctx, "hll").Val(); n != 4 {
		t.Fatalf("PFCOUNT = %d", n)
	}
	primary.RPush(ctx, "l", 3, 1, 2)
	primary.MSet(ctx, "w_1", 3, "w_2", 2, "w_3", 1)
	if n := primary.Sort(ctx, "l", &redis.Sort{}).Val(); len(n) != 3 {
		t.Fatalf("SORT = %v", n)
	}
	primary.Do(ctx, "SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*", "STORE", "d")
	waitCaughtUp(t, primary, replica, p)
	want, err := primary.Get(ctx, "hll").Result()
	if err != nil || want[15]&0x80 != 0 {
		t.Fatalf("the primary's HLL has no valid cached count: %q %v", want, err)
	}
	if got := replica.Get(ctx, "hll").Val(); got != want {
		t.Fatalf("the replica's HLL %q, the primary's %q", got, want)
	}
	want2 := primary.LRange(ctx, "d", 0, -1).Val()
	if got := replica.LRange(ctx, "d", 0, -1).Val(); len(want2) != 6 || !slices.Equal(got, want2) {
		t.Fatalf("the replica's d %q, the primary's %q", got, want2)
	}
}
