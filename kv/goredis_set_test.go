package kv_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/aof"
)

// TestGoRedisSets drives the set family through go-redis in both protocols,
// checking the random commands by their properties.
func TestGoRedisSets(t *testing.T) {
	ctx := context.Background()
	eachProtocolConn(t, func(rdb *redis.Client, proto int) {
		var all []any
		for i := range 1000 {
			all = append(all, "m"+strconv.Itoa(i))
		}
		if n := rdb.SAdd(ctx, "s", all...).Val(); n != 1000 {
			t.Fatalf("RESP%d SADD = %d", proto, n)
		}
		members := rdb.SMembers(ctx, "s").Val()
		slices.Sort(members)
		if len(members) != 1000 || members[0] != "m0" || len(slices.Compact(members)) != 1000 {
			t.Fatalf("SMEMBERS: %d members", len(members))
		}
		if !rdb.SIsMember(ctx, "s", "m999").Val() || rdb.SIsMember(ctx, "s", "m1000").Val() {
			t.Fatal("SISMEMBER")
		}
		popped := rdb.SPopN(ctx, "s", 300).Val()
		if len(popped) != 300 || len(slices.Compact(slices.Sorted(slices.Values(popped)))) != 300 {
			t.Fatalf("SPOP 300 gave %d members, not all distinct", len(popped))
		}
		for _, m := range popped {
			if rdb.SIsMember(ctx, "s", m).Val() {
				t.Fatalf("popped %s is still a member", m)
			}
		}
		if n := rdb.SCard(ctx, "s").Val(); n != 700 {
			t.Fatalf("SCARD after SPOP 300 = %d", n)
		}
		rand := rdb.SRandMemberN(ctx, "s", 50).Val()
		if len(rand) != 50 || len(slices.Compact(slices.Sorted(slices.Values(rand)))) != 50 {
			t.Fatalf("SRANDMEMBER 50: %d, not distinct", len(rand))
		}
		rep := rdb.SRandMemberN(ctx, "s", -2000).Val()
		if len(rep) != 2000 {
			t.Fatalf("SRANDMEMBER -2000 gave %d", len(rep))
		}
		for _, m := range append(rand, rep...) {
			if !rdb.SIsMember(ctx, "s", m).Val() {
				t.Fatalf("SRANDMEMBER returned a non-member %s", m)
			}
		}
		if n := rdb.SCard(ctx, "s").Val(); n != 700 {
			t.Fatalf("SRANDMEMBER changed the set: %d", n)
		}
		rdb.SAdd(ctx, "t", "m1", "m2", "x")
		inter := rdb.SInter(ctx, "s", "t").Val()
		want := 0
		for _, m := range []string{"m1", "m2"} {
			if !slices.Contains(popped, m) {
				want++
			}
		}
		if len(inter) != want {
			t.Fatalf("SINTER = %v, want %d members", inter, want)
		}
		if !rdb.SMove(ctx, "t", "u", "x").Val() || rdb.SCard(ctx, "u").Val() != 1 {
			t.Fatal("SMOVE")
		}
		var cursor uint64
		seen := map[string]bool{}
		for {
			keys, next, err := rdb.SScan(ctx, "s", cursor, "", 37).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				seen[k] = true
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		if len(seen) != 700 {
			t.Fatalf("SSCAN saw %d of 700 members", len(seen))
		}
		if enc := rdb.ObjectEncoding(ctx, "s").Val(); enc != "hashtable" {
			t.Fatalf("encoding of 1000 strings = %s", enc)
		}
	})
}

// TestSPopIsLoggedAsItsEffect: SPOP picks at random, so it is logged as the
// SREM of what it popped (DEL when it took everything): a replay rebuilds
// exactly the set that was left.
func TestSPopIsLoggedAsItsEffect(t *testing.T) {
	srv := startAOF(t, aof.FsyncAlways)
	ctx := context.Background()
	rdb := oneConn(t, srv.addr, 2)
	var all []any
	for i := range 600 {
		all = append(all, strconv.Itoa(i)) // an intset past 512: a hashtable
	}
	rdb.SAdd(ctx, "s", all...)
	rdb.SPopN(ctx, "s", 250)
	rdb.SPop(ctx, "s")
	rdb.SAdd(ctx, "w", "a", "b")
	rdb.SPopN(ctx, "w", 5) // the whole set: DEL
	left := rdb.SMembers(ctx, "s").Val()
	slices.Sort(left)
	rdb2 := oneConn(t, srv.restart(t).addr, 2)
	got := rdb2.SMembers(ctx, "s").Val()
	slices.Sort(got)
	if len(left) != 349 || !slices.Equal(got, left) {
		t.Fatalf("replayed set has %d members, %d were left (equal: %v)", len(got), len(left), slices.Equal(got, left))
	}
	if rdb2.Exists(ctx, "w").Val() != 0 {
		t.Fatal("the wholly popped set came back")
	}
}
