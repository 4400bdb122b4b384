package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
)

// TestDatabasesThroughTheAOF: go-redis clients on databases 0, 3 and 15
// (redis://host/N URLs) write the same key names concurrently; MOVE,
// COPY ... DB, SWAPDB and FLUSHDB move data between databases; a
// BGREWRITEAOF runs between two rounds of writes. Shoal reloads every
// database from its file, and redis-server 7 loads the same file into the
// same databases.
func TestDatabasesThroughTheAOF(t *testing.T) {
	redistest.Binary(t, "redis-server")
	dir := t.TempDir()
	p := startBinary(t, aofArgs(dir, "everysec")...)
	ctx := context.Background()
	dbClient := func(addr string, db int) *redis.Client {
		opt, err := redis.ParseURL(fmt.Sprintf("redis://%s/%d", addr, db))
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(opt)
		t.Cleanup(func() { c.Close() })
		return c
	}
	dbs := []int{0, 3, 15}
	round := func(r int) {
		var wg sync.WaitGroup
		for _, db := range dbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := dbClient(p.addr(), db)
				for i := 0; i < 200; i++ {
					k := fmt.Sprintf("k%d", i)
					if err := c.Set(ctx, k, fmt.Sprintf("r%d-db%d-%d", r, db, i), 0).Err(); err != nil {
						t.Error(err)
						return
					}
					if i%10 == 0 {
						c.RPush(ctx, "list", fmt.Sprintf("r%d-%d", r, i))
						c.Expire(ctx, k, time.Hour)
					}
				}
			}()
		}
		wg.Wait()
	}
	round(1)
	c0, c3 := dbClient(p.addr(), 0), dbClient(p.addr(), 3)
	mustDo := func(c *redis.Client, args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	mustDo(c0, "SET", "mover", "from0", "EX", "1000")
	mustDo(c0, "MOVE", "mover", "5")
	mustDo(c3, "COPY", "list", "list3", "DB", "7")
	mustDo(c0, "BGREWRITEAOF")
	waitRewritten(t, c0, 20*time.Second)
	round(2)
	mustDo(c0, "SWAPDB", "3", "9")
	mustDo(dbClient(p.addr(), 15), "FLUSHDB")
	mustDo(dbClient(p.addr(), 15), "SET", "after-flush", "v")
	want := snapshotDBs(t, p.addr())
	if len(want[0]) < 200 || len(want[9]) < 200 || len(want[5]) != 1 || len(want[7]) != 1 || len(want[15]) != 1 || len(want[3]) != 0 {
		t.Fatalf("unexpected keyspace before the restart: %v", dbSizes(want))
	}
	p.terminate(t)
	p2 := startBinary(t, aofArgs(dir, "everysec")...)
	compareDBs(t, "shoal reloaded", snapshotDBs(t, p2.addr()), want)
	p2.terminate(t)
	addr := redisLoadingAOF(t, dir)
	compareDBs(t, "redis loaded", snapshotDBs(t, addr), want)
}

// snapshotDBs reads every key of the 16 databases: strings and lists, with
// their expiry times.
func snapshotDBs(t *testing.T, addr string) [16]map[string]string {
	t.Helper()
	ctx := context.Background()
	var out [16]map[string]string
	for db := range out {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db, PoolSize: 1})
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		out[db] = map[string]string{}
		for _, k := range keys {
			var v string
			switch typ := c.Type(ctx, k).Val(); typ {
			case "string":
				v = c.Get(ctx, k).Val()
			case "list":
				v = strings.Join(c.LRange(ctx, k, 0, -1).Val(), ",")
			default:
				t.Fatalf("db %d key %s: unexpected type %s", db, k, typ)
			}
			at := c.Do(ctx, "PEXPIRETIME", k).Val()
			out[db][k] = fmt.Sprintf("%s @%v", v, at)
		}
		c.Close()
	}
	return out
}

func dbSizes(s [16]map[string]string) []int {
	n := make([]int, len(s))
	for i := range s {
		n[i] = len(s[i])
	}
	return n
}

func compareDBs(t *testing.T, what string, got, want [16]map[string]string) {
	t.Helper()
	for db := range want {
		if len(got[db]) != len(want[db]) {
			t.Errorf("%s: db %d has %d keys, want %d (sizes %v, want %v)", what, db, len(got[db]), len(want[db]), dbSizes(got), dbSizes(want))
			continue
		}
		for k, w := range want[db] {
			if got[db][k] != w {
				t.Errorf("%s: db %d key %s = %q, want %q", what, db, k, got[db][k], w)
			}
		}
	}
}
