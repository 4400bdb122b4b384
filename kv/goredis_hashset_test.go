package kv_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestGoRedisHashesAndSets drives the hash and set commands through
// go-redis's typed API, RESP3 (its default: maps and sets) and RESP2, and
// checks the random commands by their properties: counts, distinctness,
// membership, and what SPOP leaves behind.
func TestGoRedisHashesAndSets(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	forEachProtocol(t, redis.Options{Addr: srv.addr}, func(t *testing.T, rdb *redis.Client, _ int) {
		testGoRedisHashes(t, rdb)
		testGoRedisSets(t, rdb)
	})
}

func testGoRedisHashes(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	check, eq := goredisHelpers(t)
	check("FLUSHALL", rdb.FlushAll(ctx).Err())

	eq("HSET", rdb.HSet(ctx, "h", "a", "1", "b", "2", "c", "3").Val(), 3)
	eq("HSET map", rdb.HSet(ctx, "h", map[string]any{"d": "4"}).Val(), 1)
	eq("HGETALL", rdb.HGetAll(ctx, "h").Val(), map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"})
	eq("HGET", rdb.HGet(ctx, "h", "b").Val(), "2")
	if err := rdb.HGet(ctx, "h", "nosuch").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("HGET of a missing field: %v", err)
	}
	eq("HMGET", rdb.HMGet(ctx, "h", "a", "nosuch", "d").Val(), []any{"1", nil, "4"})
	eq("HKEYS", rdb.HKeys(ctx, "h").Val(), []string{"a", "b", "c", "d"})
	eq("HVALS", rdb.HVals(ctx, "h").Val(), []string{"1", "2", "3", "4"})
	eq("HLEN", rdb.HLen(ctx, "h").Val(), 4)
	eq("HEXISTS", rdb.HExists(ctx, "h", "a").Val(), true)
	eq("HSTRLEN", rdb.HStrLen(ctx, "h", "a").Val(), 1)
	eq("HSETNX", rdb.HSetNX(ctx, "h", "a", "x").Val(), false)
	eq("HMSET", rdb.HMSet(ctx, "h", "e", "5").Val(), true)
	eq("HINCRBY", rdb.HIncrBy(ctx, "h", "a", 41).Val(), 42)
	eq("HINCRBYFLOAT", rdb.HIncrByFloat(ctx, "h", "f", 1.5).Val(), 1.5)
	if err := rdb.HIncrBy(ctx, "h", "f", 1).Err(); err == nil || err.Error() != "ERR hash value is not an integer" {
		t.Errorf("HINCRBY on 1.5: %v", err)
	}
	eq("HDEL", rdb.HDel(ctx, "h", "e", "f", "nosuch").Val(), 2)
	keys, cursor, err := rdb.HScan(ctx, "h", 0, "", 0).Result()
	check("HSCAN", err)
	eq("HSCAN", fmt.Sprint(keys, cursor), "[a 42 b 2 c 3 d 4] 0")
	if err := rdb.HGet(ctx, "nohash", "f").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("HGET on a missing key: %v", err)
	}
	check("SET", rdb.Set(ctx, "str", "v", 0).Err())
	if err := rdb.HGet(ctx, "str", "f").Err(); err == nil || err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Errorf("HGET on a string: %v", err)
	}

	// HRANDFIELD: distinct fields for a positive count, repeats for a
	// negative one, values matching their fields.
	all := rdb.HGetAll(ctx, "h").Val()
	fields := rdb.HRandField(ctx, "h", 3).Val()
	if len(fields) != 3 || len(slices.Compact(slices.Sorted(slices.Values(fields)))) != 3 {
		t.Errorf("HRANDFIELD 3: %v", fields)
	}
	for _, f := range fields {
		if _, ok := all[f]; !ok {
			t.Errorf("HRANDFIELD returned %q, not a field", f)
		}
	}
	pairs := rdb.HRandFieldWithValues(ctx, "h", -20).Val()
	if len(pairs) != 20 {
		t.Errorf("HRANDFIELD -20 WITHVALUES: %d pairs", len(pairs))
	}
	for _, p := range pairs {
		if all[p.Key] != p.Value {
			t.Errorf("HRANDFIELD WITHVALUES paired %q with %q", p.Key, p.Value)
		}
	}
	eq("HRANDFIELD past the size", len(rdb.HRandField(ctx, "h", 100).Val()), 4)

	// A large hash (hashtable) through the same API.
	big := map[string]any{}
	for i := 0; i < 2000; i++ {
		big[fmt.Sprint("field", i)] = i
	}
	check("HSET big", rdb.HSet(ctx, "big", big).Err())
	eq("OBJECT ENCODING", rdb.ObjectEncoding(ctx, "big").Val(), "hashtable")
	got := rdb.HGetAll(ctx, "big").Val()
	eq("HGETALL big", len(got), 2000)
	eq("HGET big", got["field1234"], "1234")
	seen := map[string]bool{}
	var cur uint64
	for {
		page, next, err := rdb.HScan(ctx, "big", cur, "field1*", 50).Result()
		check("HSCAN big", err)
		for i := 0; i < len(page); i += 2 {
			seen[page[i]] = true
		}
		if cur = next; cur == 0 {
			break
		}
	}
	eq("HSCAN MATCH field1*", len(seen), 1111)
}

func testGoRedisSets(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	check, eq := goredisHelpers(t)
	check("FLUSHALL", rdb.FlushAll(ctx).Err())

	eq("SADD", rdb.SAdd(ctx, "s", 3, 1, 2).Val(), 3)
	eq("SMEMBERS intset", rdb.SMembers(ctx, "s").Val(), []string{"1", "2", "3"})
	eq("SADD", rdb.SAdd(ctx, "t", "2", "3", "x").Val(), 3)
	eq("SISMEMBER", rdb.SIsMember(ctx, "s", 2).Val(), true)
	eq("SMISMEMBER", rdb.SMIsMember(ctx, "s", 1, 9).Val(), []bool{true, false})
	eq("SCARD", rdb.SCard(ctx, "t").Val(), 3)
	eq("SINTER", rdb.SInter(ctx, "s", "t").Val(), []string{"2", "3"})
	eq("SUNION", slices.Sorted(slices.Values(rdb.SUnion(ctx, "s", "t").Val())), []string{"1", "2", "3", "x"})
	eq("SDIFF", rdb.SDiff(ctx, "s", "t").Val(), []string{"1"})
	eq("SINTERSTORE", rdb.SInterStore(ctx, "i", "s", "t").Val(), 2)
	eq("SUNIONSTORE", rdb.SUnionStore(ctx, "u", "s", "t").Val(), 4)
	eq("SDIFFSTORE", rdb.SDiffStore(ctx, "d", "t", "s").Val(), 1)
	eq("SINTERCARD", rdb.SInterCard(ctx, 1, "s", "t").Val(), 1)
	eq("SMOVE", rdb.SMove(ctx, "t", "s", "x").Val(), true)
	eq("SMEMBERS map", rdb.SMembersMap(ctx, "s").Val(), map[string]struct{}{"1": {}, "2": {}, "3": {}, "x": {}})
	eq("SREM", rdb.SRem(ctx, "s", "x", "nosuch").Val(), 1)
	members, cursor, err := rdb.SScan(ctx, "s", 0, "", 0).Result()
	check("SSCAN", err)
	eq("SSCAN", fmt.Sprint(slices.Sorted(slices.Values(members)), cursor), "[1 2 3] 0") // a hashtable since "x"

	// SRANDMEMBER and SPOP by their properties.
	for i := 0; i < 1000; i++ {
		check("SADD", rdb.SAdd(ctx, "r", fmt.Sprint("m", i)).Err())
	}
	r := rdb.SRandMemberN(ctx, "r", 100).Val()
	if len(r) != 100 || len(slices.Compact(slices.Sorted(slices.Values(r)))) != 100 {
		t.Errorf("SRANDMEMBER 100: %d members, not all distinct", len(r))
	}
	if rep := rdb.SRandMemberN(ctx, "r", -3000).Val(); len(rep) != 3000 {
		t.Errorf("SRANDMEMBER -3000: %d", len(rep))
	}
	popped := rdb.SPopN(ctx, "r", 300).Val()
	if len(popped) != 300 || len(slices.Compact(slices.Sorted(slices.Values(popped)))) != 300 {
		t.Errorf("SPOP 300: %d members, not all distinct", len(popped))
	}
	eq("SCARD after SPOP", rdb.SCard(ctx, "r").Val(), 700)
	for _, m := range popped {
		if rdb.SIsMember(ctx, "r", m).Val() {
			t.Errorf("%q popped but still a member", m)
		}
	}
	one, err := rdb.SPop(ctx, "r").Result()
	check("SPOP", err)
	if rdb.SIsMember(ctx, "r", one).Val() {
		t.Errorf("%q popped but still a member", one)
	}
	eq("SPOP the rest", len(rdb.SPopN(ctx, "r", 10000).Val()), 699)
	eq("EXISTS after emptying", rdb.Exists(ctx, "r").Val(), 0)
	if err := rdb.SPop(ctx, "r").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("SPOP on a missing key: %v", err)
	}
}

// TestSetsAcrossLoops: clients on different loops SMOVE members between
// two sets concurrently; none is lost or duplicated.
func TestSetsAcrossLoops(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 4})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr, PoolSize: 8})
	defer rdb.Close()
	for i := 0; i < 500; i++ {
		rdb.SAdd(ctx, "a", fmt.Sprint("m", i))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: srv.addr})
			defer c.Close()
			for i := 0; i < 300; i++ {
				m := fmt.Sprint("m", (g*131+i)%500)
				src, dst := "a", "b"
				if i%2 == 1 {
					src, dst = dst, src
				}
				if err := c.SMove(ctx, src, dst, m).Err(); err != nil {
					t.Error(err)
					return
				}
				c.HIncrBy(ctx, "counter", "n", 1)
			}
		}()
	}
	wg.Wait()
	a, b := rdb.SMembers(ctx, "a").Val(), rdb.SMembers(ctx, "b").Val()
	all := append(a, b...)
	slices.Sort(all)
	if len(all) != 500 || len(slices.Compact(all)) != 500 {
		t.Errorf("after concurrent SMOVEs: %d + %d members", len(a), len(b))
	}
	if n := rdb.HGet(ctx, "counter", "n").Val(); n != "2400" {
		t.Errorf("HINCRBY from 8 clients x 300: %s", n)
	}
}
