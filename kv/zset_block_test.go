package kv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/aof"
)

func init() {
	diffCases["zset-blocking-at-once"] = []step{
		c("ZADD z 1 a 2 b 3 c 4 d"), c("BZPOPMIN z 0"), c("BZPOPMAX z 0"), c("BZPOPMIN noz z 0"), c("BZPOPMIN noz 0.01"),
		c("BZPOPMAX noz noz2 0.01"), c("SET s x"), c("BZPOPMIN s 0"), c("BZPOPMIN noz s 0"), c("BZPOPMIN z s 0"),
		c("BZPOPMIN z -1"), c("BZPOPMIN z abc"), c("BZPOPMAX z inf"), c("BZPOPMIN z 1e400"),
		c("ZADD y 1 a 2 b 3 c"), c("BZMPOP 0 2 noz y MIN COUNT 2"), c("BZMPOP 0 1 y MAX"), c("BZMPOP 0.01 1 y MAX"),
		c("BZMPOP 0 0 y MIN"), c("BZMPOP x 1 y MIN"), c("BZMPOP -1 1 y MIN"), c("BZMPOP 0 1 y MIDDLE"),
		c("BZMPOP 0 1 y MIN COUNT 0"), c("BZMPOP 0 1 s MIN"), c("BZMPOP 0 2 y MIN"), c("ZADD y 1.5 e"),
		c("BZMPOP 0 1 y MIN COUNT 10"), c("EXISTS y"), c("BZPOPMIN"), c("BZPOPMIN z"), c("BZMPOP 0 1 y"),
	}
}

// TestBlockingZPopAcrossLoops: BZPOPMIN parks without stopping its loop and is
// served, on another loop, by a ZADD that creates the set, and by a RENAME
// that brings one; BZMPOP by a ZUNIONSTORE.
func TestBlockingZPopAcrossLoops(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		waiter := oneConn(t, srv.addr, proto)
		writer := oneConn(t, srv.addr, 2)
		done := startBlocked(t, writer, func() *redis.ZWithKey { return waiter.BZPopMin(ctx, 0, "z1", "z2").Val() })
		writer.ZAdd(ctx, "z2", redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 1, Member: "a"})
		select {
		case got := <-done:
			if got == nil || got.Key != "z2" || got.Member != "a" || got.Score != 1 {
				t.Fatalf("RESP%d BZPOPMIN got %+v", proto, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("RESP%d BZPOPMIN was not served by ZADD", proto)
		}
		if got := writer.ZRange(ctx, "z2", 0, -1).Val(); strings.Join(got, ",") != "b" {
			t.Fatalf("left in z2: %v", got)
		}

		done = startBlocked(t, writer, func() *redis.ZWithKey { return waiter.BZPopMax(ctx, 0, "z3").Val() })
		if err := writer.Rename(ctx, "z2", "z3").Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-done:
			if got == nil || got.Key != "z3" || got.Member != "b" {
				t.Fatalf("BZPOPMAX after RENAME got %+v", got)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("BZPOPMAX was not served by a RENAME bringing a sorted set")
		}

		mdone := make(chan []redis.Z, 1)
		go func() {
			_, zs, _ := waiter.BZMPop(ctx, 0, "max", 5, "dst").Result()
			mdone <- zs
		}()
		waitBlocked(t, writer, 1)
		writer.ZAdd(ctx, "src", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 3, Member: "y"})
		if n := writer.ZUnionStore(ctx, "dst", &redis.ZStore{Keys: []string{"src"}}).Val(); n != 2 {
			t.Fatalf("ZUNIONSTORE = %d", n)
		}
		select {
		case got := <-mdone:
			if len(got) != 2 || got[0].Member != "y" || got[1].Member != "x" {
				t.Fatalf("BZMPOP MAX COUNT 5 got %+v", got)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("BZMPOP was not served by ZUNIONSTORE")
		}
		if writer.Exists(ctx, "dst").Val() != 0 {
			t.Fatal("the emptied destination still exists")
		}
		waitBlocked(t, writer, 0)
	}
}

// TestBlockingZPopIsLoggedAsItsEffect: a served BZPOPMIN is written to the
// append-only file as the ZPOPMIN it did, so a restart has the same set.
func TestBlockingZPopIsLoggedAsItsEffect(t *testing.T) {
	srv := startAOF(t, aof.FsyncAlways)
	ctx := context.Background()
	waiter := oneConn(t, srv.addr, 2)
	writer := oneConn(t, srv.addr, 2)
	done := startBlocked(t, writer, func() *redis.ZWithKey { return waiter.BZPopMin(ctx, 0, "q").Val() })
	writer.ZAdd(ctx, "q", redis.Z{Score: 5, Member: "e"}, redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 3, Member: "c"})
	if got := <-done; got == nil || got.Member != "a" {
		t.Fatalf("BZPOPMIN got %+v", got)
	}
	if got := writer.BZPopMax(ctx, time.Second, "q").Val(); got == nil || got.Member != "e" {
		t.Fatalf("BZPOPMAX at once got %+v", got)
	}
	log := srv.stopAndReadLog(t)
	for _, want := range []string{"*2\r\n$7\r\nZPOPMIN\r\n$1\r\nq\r\n", "*2\r\n$7\r\nZPOPMAX\r\n$1\r\nq\r\n"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the log lacks %q:\n%q", want, log)
		}
	}
	if strings.Contains(strings.ToUpper(log), "BZPOP") {
		t.Fatalf("a blocking command was logged as itself:\n%q", log)
	}
	rdb := oneConn(t, srv.restart(t).addr, 2)
	if got := rdb.ZRange(ctx, "q", 0, -1).Val(); strings.Join(got, ",") != "c" {
		t.Fatalf("replayed q: %v", got)
	}
}
