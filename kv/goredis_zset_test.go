package kv_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestGoRedisZSets drives the sorted-set commands through go-redis's typed
// API, RESP3 (its default) and RESP2: the client must parse every reply
// shape (flat and paired WITHSCORES, doubles, ZMPOP's nesting).
func TestGoRedisZSets(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	forEachProtocol(t, redis.Options{Addr: srv.addr}, func(t *testing.T, rdb *redis.Client, _ int) {
		testGoRedisZSets(t, rdb)
	})
}

func testGoRedisZSets(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	check, eq := goredisHelpers(t)
	check("FLUSHALL", rdb.FlushAll(ctx).Err())

	n, err := rdb.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2.5, Member: "b"}, redis.Z{Score: math.Inf(1), Member: "c"}).Result()
	check("ZADD", err)
	eq("ZADD added", n, 3)
	eq("ZADD GT", rdb.ZAddArgs(ctx, "z", redis.ZAddArgs{GT: true, Ch: true, Members: []redis.Z{{Score: 0, Member: "a"}, {Score: 3, Member: "b"}}}).Val(), 1)
	f, err := rdb.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{Members: []redis.Z{{Score: 0.5, Member: "a"}}}).Result()
	check("ZADD INCR", err)
	eq("ZADD INCR", f, 1.5)
	if _, err := rdb.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{NX: true, Members: []redis.Z{{Score: 1, Member: "a"}}}).Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("ZADD NX INCR on an existing member: %v, want nil reply", err)
	}
	eq("ZINCRBY", rdb.ZIncrBy(ctx, "z", 0.25, "a").Val(), 1.75)
	if err := rdb.ZIncrBy(ctx, "z", math.Inf(-1), "c").Err(); err == nil || err.Error() != "ERR resulting score is not a number (NaN)" {
		t.Errorf("ZINCRBY -inf on inf: %v", err)
	}
	eq("ZCARD", rdb.ZCard(ctx, "z").Val(), 3)
	eq("ZSCORE", rdb.ZScore(ctx, "z", "c").Val(), math.Inf(1))
	eq("ZMSCORE", rdb.ZMScore(ctx, "z", "a", "b").Val(), []float64{1.75, 3})
	eq("ZRANK", rdb.ZRank(ctx, "z", "b").Val(), 1)
	eq("ZREVRANK", rdb.ZRevRank(ctx, "z", "c").Val(), 0)
	if _, err := rdb.ZRank(ctx, "z", "nosuch").Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("ZRANK missing: %v", err)
	}
	eq("ZRANGE WITHSCORES", rdb.ZRangeWithScores(ctx, "z", 0, -1).Val(), []redis.Z{{Score: 1.75, Member: "a"}, {Score: 3, Member: "b"}, {Score: math.Inf(1), Member: "c"}})
	//lint:ignore SA1019 the deprecated form is still a Redis 7.0 command under test
	eq("ZREVRANGE", rdb.ZRevRange(ctx, "z", 0, 1).Val(), []string{"c", "b"})
	//lint:ignore SA1019 the deprecated form is still a Redis 7.0 command under test
	eq("ZRANGEBYSCORE", rdb.ZRangeByScore(ctx, "z", &redis.ZRangeBy{Min: "(1.75", Max: "+inf"}).Val(), []string{"b", "c"})
	eq("ZREVRANGEBYSCORE WITHSCORES", rdb.ZRevRangeByScoreWithScores(ctx, "z", &redis.ZRangeBy{Min: "-inf", Max: "+inf", Offset: 1, Count: 1}).Val(), []redis.Z{{Score: 3, Member: "b"}})
	eq("ZRANGE BYSCORE REV LIMIT", rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: "+inf", Stop: "-inf", ByScore: true, Rev: true, Offset: 0, Count: 2}).Val(), []string{"c", "b"})
	eq("ZRANGESTORE", rdb.ZRangeStore(ctx, "dst", redis.ZRangeArgs{Key: "z", Start: 0, Stop: 1}).Val(), 2)
	eq("ZCOUNT", rdb.ZCount(ctx, "z", "2", "inf").Val(), 2)

	check("ZADD lex", rdb.ZAdd(ctx, "lex", redis.Z{Member: "a"}, redis.Z{Member: "b"}, redis.Z{Member: "c"}, redis.Z{Member: "d"}).Err())
	//lint:ignore SA1019 the deprecated form is still a Redis 7.0 command under test
	eq("ZRANGEBYLEX", rdb.ZRangeByLex(ctx, "lex", &redis.ZRangeBy{Min: "(a", Max: "[c"}).Val(), []string{"b", "c"})
	//lint:ignore SA1019 the deprecated form is still a Redis 7.0 command under test
	eq("ZREVRANGEBYLEX", rdb.ZRevRangeByLex(ctx, "lex", &redis.ZRangeBy{Min: "-", Max: "+", Count: 2}).Val(), []string{"d", "c"})
	eq("ZLEXCOUNT", rdb.ZLexCount(ctx, "lex", "-", "+").Val(), 4)
	eq("ZREMRANGEBYLEX", rdb.ZRemRangeByLex(ctx, "lex", "[a", "(c").Val(), 2)
	eq("ZREMRANGEBYRANK", rdb.ZRemRangeByRank(ctx, "lex", 0, 0).Val(), 1)
	eq("ZREMRANGEBYSCORE", rdb.ZRemRangeByScore(ctx, "lex", "-inf", "inf").Val(), 1)
	eq("emptied key", rdb.Exists(ctx, "lex").Val(), 0)

	check("ZADD a", rdb.ZAdd(ctx, "sa", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"}).Err())
	check("ZADD b", rdb.ZAdd(ctx, "sb", redis.Z{Score: 10, Member: "y"}, redis.Z{Score: 20, Member: "w"}).Err())
	eq("ZUNION WITHSCORES", rdb.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"sa", "sb"}, Weights: []float64{2, 1}}).Val(),
		[]redis.Z{{Score: 2, Member: "x"}, {Score: 14, Member: "y"}, {Score: 20, Member: "w"}})
	eq("ZINTER WITHSCORES", rdb.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"sa", "sb"}, Aggregate: "MAX"}).Val(), []redis.Z{{Score: 10, Member: "y"}})
	eq("ZDIFF", rdb.ZDiff(ctx, "sa", "sb").Val(), []string{"x"})
	eq("ZDIFF WITHSCORES", rdb.ZDiffWithScores(ctx, "sb", "sa").Val(), []redis.Z{{Score: 20, Member: "w"}})
	eq("ZINTERCARD", rdb.ZInterCard(ctx, 0, "sa", "sb").Val(), 1)
	eq("ZUNIONSTORE", rdb.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"sa", "sb"}}).Val(), 3)
	eq("ZINTERSTORE", rdb.ZInterStore(ctx, "i", &redis.ZStore{Keys: []string{"sa", "sb"}}).Val(), 1)
	eq("ZDIFFSTORE", rdb.ZDiffStore(ctx, "d", "sa", "sb").Val(), 1)

	eq("ZPOPMIN", rdb.ZPopMin(ctx, "u").Val(), []redis.Z{{Score: 1, Member: "x"}})
	eq("ZPOPMAX 2", rdb.ZPopMax(ctx, "u", 2).Val(), []redis.Z{{Score: 20, Member: "w"}, {Score: 12, Member: "y"}})
	key, popped, err := rdb.ZMPop(ctx, "min", 5, "nosuch", "sa").Result()
	check("ZMPOP", err)
	eq("ZMPOP key", key, "sa")
	eq("ZMPOP elements", popped, []redis.Z{{Score: 1, Member: "x"}, {Score: 2, Member: "y"}})
	if _, _, err := rdb.ZMPop(ctx, "max", 1, "nosuch").Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("ZMPOP on missing keys: %v", err)
	}

	members := make([]redis.Z, 300)
	for i := range members {
		members[i] = redis.Z{Score: float64(i) / 3, Member: "m" + strconv.Itoa(i)}
	}
	check("ZADD big", rdb.ZAdd(ctx, "big", members...).Err())
	eq("OBJECT ENCODING big", rdb.ObjectEncoding(ctx, "big").Val(), "skiplist")
	rnd := rdb.ZRandMemberWithScores(ctx, "big", 10).Val()
	seen := map[string]bool{}
	for _, z := range rnd {
		i, _ := strconv.Atoi(z.Member.(string)[1:])
		if seen[z.Member.(string)] || z.Score != float64(i)/3 {
			t.Errorf("ZRANDMEMBER 10 WITHSCORES: %v", rnd)
		}
		seen[z.Member.(string)] = true
	}
	eq("ZRANDMEMBER 10", len(rnd), 10)
	eq("ZRANDMEMBER -500", len(rdb.ZRandMember(ctx, "big", -500).Val()), 500)

	// A full ZSCAN of a large set returns every member once or more, with its score.
	got := map[string]string{}
	var cursor uint64
	for {
		page, next, err := rdb.ZScan(ctx, "big", cursor, "", 20).Result()
		check("ZSCAN", err)
		for i := 0; i+1 < len(page); i += 2 {
			got[page[i]] = page[i+1]
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if len(got) != len(members) {
		t.Fatalf("ZSCAN returned %d members, want %d", len(got), len(members))
	}
	for _, m := range members {
		if s, _ := strconv.ParseFloat(got[m.Member.(string)], 64); s != m.Score {
			t.Errorf("ZSCAN %s score %q, want %v", m.Member, got[m.Member.(string)], m.Score)
		}
	}
	ranks := rdb.ZRange(ctx, "big", 100, 104).Val()
	eq("ZRANGE on a skiplist", ranks, []string{"m100", "m101", "m102", "m103", "m104"})

	check("SET", rdb.Set(ctx, "str", "v", 0).Err())
	if err := rdb.ZAdd(ctx, "str", redis.Z{Score: 1, Member: "a"}).Err(); err == nil || err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Errorf("ZADD on a string: %v", err)
	}
	eq("TYPE", rdb.Type(ctx, "big").Val(), "zset")
}
