package kv_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestGoRedisStreams drives the stream commands through go-redis's typed
// API, RESP3 and RESP2: XAdd (generated and explicit IDs, trims), XRange,
// XRevRange, XLen, XDel, XTrim, XRead.
func TestGoRedisStreams(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	forEachProtocol(t, redis.Options{Addr: srv.addr}, func(t *testing.T, rdb *redis.Client, _ int) {
		ctx := context.Background()
		check, eq := goredisHelpers(t)
		check("FLUSHALL", rdb.FlushAll(ctx).Err())
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []any{"a", "1", "b", "2"}}).Result()
		check("XADD", err)
		eq("XADD id", id, "1-1")
		id, err = rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: map[string]any{"c": "3"}}).Result()
		check("XADD *", err)
		if id <= "1-1" || len(id) < 15 {
			t.Errorf("XADD * = %q", id)
		}
		eq("XADD MAXLEN", rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", MaxLen: 2, ID: "*", Values: []any{"d", "4"}}).Err(), nil)
		eq("XLEN", rdb.XLen(ctx, "s").Val(), 2)
		msgs, err := rdb.XRange(ctx, "s", "-", "+").Result()
		check("XRANGE", err)
		if len(msgs) != 2 || msgs[0].Values["c"] != "3" || msgs[1].Values["d"] != "4" {
			t.Errorf("XRANGE = %v", msgs)
		}
		rev, err := rdb.XRevRangeN(ctx, "s", "+", "-", 1).Result()
		check("XREVRANGE", err)
		if len(rev) != 1 || rev[0].ID != msgs[1].ID {
			t.Errorf("XREVRANGE COUNT 1 = %v", rev)
		}
		eq("XDEL", rdb.XDel(ctx, "s", msgs[0].ID, "9-9").Val(), 1)
		eq("XTRIM", rdb.XTrimMaxLen(ctx, "s", 0).Val(), 1)
		eq("XLEN emptied", rdb.XLen(ctx, "s").Val(), 0)
		eq("TYPE", rdb.Type(ctx, "s").Val(), "stream")

		check("XADD t", rdb.XAdd(ctx, &redis.XAddArgs{Stream: "t", ID: "5-1", Values: []any{"x", "y"}}).Err())
		streams, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{"t", "s", "0", "0"}, Count: 10}).Result()
		check("XREAD", err)
		if len(streams) != 1 || streams[0].Stream != "t" || len(streams[0].Messages) != 1 || streams[0].Messages[0].ID != "5-1" {
			t.Errorf("XREAD = %v", streams)
		}
		if _, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{"t", "$"}, Block: 10 * time.Millisecond}).Result(); err != redis.Nil {
			t.Errorf("XREAD BLOCK that times out: %v, want redis.Nil", err)
		}
	})
}

// TestXReadBlockWokenByXAdd parks readers on a stream with XREAD BLOCK 0
// $ (and one on a key that does not exist yet), then adds from another
// connection: every reader gets the new entry, and one waiting for an ID
// the entry does not reach keeps waiting without holding back the others.
func TestXReadBlockWokenByXAdd(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	ctx := context.Background()
	w := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer w.Close()
	if err := w.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []any{"f", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	const readers = 8
	results := make(chan string, readers+1)
	var wg sync.WaitGroup
	start := func(key, id string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: srv.addr, ReadTimeout: -1})
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.XRead(ctx, &redis.XReadArgs{Streams: []string{key, id}, Block: 0}).Result()
			if err != nil {
				results <- "error: " + err.Error()
				return
			}
			results <- fmt.Sprintf("%s %s %v", r[0].Stream, r[0].Messages[0].ID, r[0].Messages[0].Values)
		}()
		return c
	}
	// The far reader parks first: the others queue behind it.
	far := start("s", "100-0")
	defer far.Close()
	for i := 0; i < readers-1; i++ {
		defer start("s", "$").Close()
	}
	defer start("later", "$").Close()
	waitFor(t, "the readers parked", func() bool { return clientsBlocked(t, w) == readers+1 })
	check := func(key, id string) {
		t.Helper()
		if err := w.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: id, Values: []any{"n", id}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	check("s", "2-1")
	check("later", "1-1")
	for i := 0; i < readers; i++ {
		select {
		case got := <-results:
			if got != "s 2-1 map[n:2-1]" && got != "later 1-1 map[n:1-1]" {
				t.Errorf("reader got %q", got)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d readers answered", i, readers)
		}
	}
	if n := clientsBlocked(t, w); n != 1 {
		t.Errorf("blocked clients after the adds: %d, want the far reader only", n)
	}
	check("s", "100-1")
	if got := <-results; got != "s 100-1 map[n:100-1]" {
		t.Errorf("far reader got %q", got)
	}
	wg.Wait()
}

// clientsBlocked reads INFO's blocked_clients.
func clientsBlocked(t *testing.T, c *redis.Client) int {
	t.Helper()
	info := c.Info(context.Background(), "clients").Val()
	var n int
	for _, line := range strings.Split(info, "\r\n") {
		if _, err := fmt.Sscanf(line, "blocked_clients:%d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("no blocked_clients in %q", info)
	return 0
}

// TestGoRedisStreamGroups drives consumer groups through go-redis's typed
// API, RESP3 and RESP2: XGroupCreateMkStream, XReadGroup, XPending and
// XPendingExt, XAck, XClaim and XClaimJustID, XAutoClaim, XGroup
// CREATECONSUMER/DELCONSUMER/SETID/DESTROY, XInfoGroups, XInfoConsumers,
// XInfoStream and XInfoStreamFull.
func TestGoRedisStreamGroups(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	forEachProtocol(t, redis.Options{Addr: srv.addr}, func(t *testing.T, rdb *redis.Client, _ int) {
		ctx := context.Background()
		check, eq := goredisHelpers(t)
		check("FLUSHALL", rdb.FlushAll(ctx).Err())
		check("XGROUP CREATE MKSTREAM", rdb.XGroupCreateMkStream(ctx, "s", "g", "$").Err())
		if err := rdb.XGroupCreate(ctx, "s", "g", "$").Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSYGROUP") {
			t.Errorf("XGROUP CREATE twice: %v", err)
		}
		for i := 1; i <= 3; i++ {
			check("XADD", rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: fmt.Sprintf("%d-1", i), Values: []any{"n", i}}).Err())
		}
		got, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "alice", Streams: []string{"s", ">"}, Count: 2}).Result()
		check("XREADGROUP", err)
		if len(got) != 1 || len(got[0].Messages) != 2 || got[0].Messages[1].ID != "2-1" || got[0].Messages[1].Values["n"] != "2" {
			t.Errorf("XREADGROUP = %v", got)
		}
		pending, err := rdb.XPending(ctx, "s", "g").Result()
		check("XPENDING", err)
		eq("XPENDING", fmt.Sprintln(pending.Count, pending.Lower, pending.Higher, pending.Consumers), "2 1-1 2-1 map[alice:2]\n")
		ext, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "s", Group: "g", Start: "-", End: "+", Count: 10}).Result()
		check("XPENDING extended", err)
		if len(ext) != 2 || ext[0].Consumer != "alice" || ext[0].RetryCount != 1 {
			t.Errorf("XPENDING extended = %v", ext)
		}
		claimed, err := rdb.XClaim(ctx, &redis.XClaimArgs{Stream: "s", Group: "g", Consumer: "bob", Messages: []string{"1-1"}}).Result()
		check("XCLAIM", err)
		if len(claimed) != 1 || claimed[0].ID != "1-1" || claimed[0].Values["n"] != "1" {
			t.Errorf("XCLAIM = %v", claimed)
		}
		ids, err := rdb.XClaimJustID(ctx, &redis.XClaimArgs{Stream: "s", Group: "g", Consumer: "bob", Messages: []string{"2-1", "9-9"}}).Result()
		check("XCLAIM JUSTID", err)
		eq("XCLAIM JUSTID", ids, []string{"2-1"})
		msgs, start, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: "s", Group: "g", Consumer: "carol", Start: "0", Count: 1}).Result()
		check("XAUTOCLAIM", err)
		if len(msgs) != 1 || msgs[0].ID != "1-1" || start != "2-1" {
			t.Errorf("XAUTOCLAIM = %v, cursor %q", msgs, start)
		}
		eq("XACK", rdb.XAck(ctx, "s", "g", "1-1", "2-1", "7-7").Val(), 2)
		eq("CREATECONSUMER", rdb.XGroupCreateConsumer(ctx, "s", "g", "dave").Val(), 1)
		groups, err := rdb.XInfoGroups(ctx, "s").Result()
		check("XINFO GROUPS", err)
		if len(groups) != 1 || groups[0].Name != "g" || groups[0].Consumers != 4 || groups[0].Pending != 0 ||
			groups[0].LastDeliveredID != "2-1" || groups[0].EntriesRead != 2 || groups[0].Lag != 1 {
			t.Errorf("XINFO GROUPS = %+v", groups)
		}
		consumers, err := rdb.XInfoConsumers(ctx, "s", "g").Result()
		check("XINFO CONSUMERS", err)
		if len(consumers) != 4 || consumers[0].Name != "alice" || consumers[3].Name != "dave" {
			t.Errorf("XINFO CONSUMERS = %+v", consumers)
		}
		eq("DELCONSUMER", rdb.XGroupDelConsumer(ctx, "s", "g", "dave").Val(), 0)
		info, err := rdb.XInfoStream(ctx, "s").Result()
		check("XINFO STREAM", err)
		if info.Length != 3 || info.Groups != 1 || info.FirstEntry.ID != "1-1" || info.LastEntry.ID != "3-1" || info.EntriesAdded != 3 {
			t.Errorf("XINFO STREAM = %+v", info)
		}
		_, err = rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "erin", Streams: []string{"s", ">"}}).Result()
		check("XREADGROUP the rest", err)
		full, err := rdb.XInfoStreamFull(ctx, "s", 0).Result()
		check("XINFO STREAM FULL", err)
		if len(full.Groups) != 1 || len(full.Groups[0].Pending) != 1 || full.Groups[0].Pending[0].Consumer != "erin" ||
			len(full.Groups[0].Consumers) != 4 || len(full.Entries) != 3 {
			t.Errorf("XINFO STREAM FULL = %+v", full)
		}
		check("SETID", rdb.XGroupSetID(ctx, "s", "g", "0").Err())
		eq("DESTROY", rdb.XGroupDestroy(ctx, "s", "g").Val(), 1)
		if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "x", Streams: []string{"s", ">"}}).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOGROUP") {
			t.Errorf("XREADGROUP of a destroyed group: %v", err)
		}
	})
}
