package kv_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestBlockingInsideExecDoesNotBlock: inside MULTI a blocking pop on an
// empty list answers at once as if it had timed out, as in Redis, instead
// of parking the client with every loop stopped for its EXEC.
func TestBlockingInsideExecDoesNotBlock(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	rdb := oneConn(t, srv.addr, 2)
	start := time.Now()
	cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.BLPop(ctx, 0, "empty")
		p.BLMove(ctx, "empty", "dst", "LEFT", "RIGHT", 0)
		p.RPush(ctx, "full", "a")
		p.BLPop(ctx, 0, "full")
		return nil
	})
	if !errors.Is(err, redis.Nil) {
		t.Fatalf("EXEC: %v (want the nil replies of the empty pops)", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("BLPOP 0 inside MULTI blocked")
	}
	if e := cmds[0].Err(); !errors.Is(e, redis.Nil) {
		t.Fatalf("BLPOP of an empty list in EXEC: %v", e)
	}
	if e := cmds[1].Err(); !errors.Is(e, redis.Nil) {
		t.Fatalf("BLMOVE of an empty list in EXEC: %v", e)
	}
	if got := cmds[3].(*redis.StringSliceCmd).Val(); strings.Join(got, ",") != "full,a" {
		t.Fatalf("BLPOP of a filled list in EXEC: %v", got)
	}
	if n := blockedClients(t, rdb); n != 0 {
		t.Fatalf("blocked_clients = %d after EXEC", n)
	}
}

// TestServedPopFailsWatch: a blocked pop served by another client's push
// writes the list, so an EXEC watching it must fail, as after any write.
func TestServedPopFailsWatch(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	waiter := oneConn(t, srv.addr, 2)
	pusher := oneConn(t, srv.addr, 2)
	watcher := oneConn(t, srv.addr, 2)
	done := startBlocked(t, pusher, func() string { return waiter.BLMove(ctx, "q", "dst", "LEFT", "RIGHT", 0).Val() })
	err := watcher.Watch(ctx, func(tx *redis.Tx) error {
		if n := pusher.RPush(ctx, "q", "v").Val(); n != 1 {
			t.Errorf("RPUSH = %d", n)
		}
		<-done // the push and the BLMOVE it served both happened
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "x", "1", 0)
			return nil
		})
		return err
	}, "dst")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("EXEC after a served BLMOVE wrote the watched destination: %v, want a failed transaction", err)
	}
	if watcher.Exists(ctx, "x").Val() != 0 {
		t.Fatal("the failed transaction's SET ran")
	}
}
