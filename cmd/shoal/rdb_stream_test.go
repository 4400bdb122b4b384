package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
)

// fillStreams writes streams of several shapes: many nodes, deleted
// entries, changing fields, an emptied stream with XSETID state.
func fillStreams(t *testing.T, addr string) []string {
	t.Helper()
	ctx := context.Background()
	c := dbClient(t, addr, 0)
	for i := 1; i <= 500; i++ {
		f := "f"
		if i%40 == 0 {
			f = "other"
		}
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "big", ID: fmt.Sprintf("%d-1", i), Values: []any{f, i, "text", strings.Repeat("t", i%70)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.XDel(ctx, "big", "3-1", "250-1", "500-1")
	c.XAdd(ctx, &redis.XAddArgs{Stream: "empty", ID: "7-7", Values: []any{"a", "b"}})
	c.XDel(ctx, "empty", "7-7")
	c.Do(ctx, "XSETID", "empty", "9-9", "ENTRIESADDED", "12", "MAXDELETEDID", "7-7")
	c.XAdd(ctx, &redis.XAddArgs{Stream: "small", Values: []any{"k", "v"}})
	return []string{"big", "empty", "small"}
}

// dumps returns each key's DUMP payload: a stream's nodes, counters and
// IDs, byte for byte.
func dumps(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, k := range keys {
		d, err := dbClient(t, addr, 0).Dump(context.Background(), k).Result()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		m[k] = d
	}
	return m
}

// TestRDBStreamsBetweenRedisAndShoal: a dump.rdb with streams written by
// redis-server loads into Shoal with the same nodes (DUMP payloads equal),
// and the file Shoal then saves loads back into redis-server the same.
func TestRDBStreamsBetweenRedisAndShoal(t *testing.T) {
	redistest.Binary(t, "redis-server")
	ctx := context.Background()
	rdir := t.TempDir()
	raddr := redisOn(t, rdir)
	keys := fillStreams(t, raddr)
	want := dumps(t, raddr, keys)
	if err := dbClient(t, raddr, 0).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(rdir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startBinary(t, "--dir", dir)
	if got := dumps(t, p.addr(), keys); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the streams differ after Shoal loaded redis-server's file")
	}
	if err := dbClient(t, p.addr(), 0).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	back := t.TempDir()
	b, err = os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(back, "dump.rdb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	raddr2 := redisOn(t, back)
	if got := dumps(t, raddr2, keys); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the streams differ after redis-server loaded Shoal's file")
	}
}
