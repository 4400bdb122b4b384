package kv_test

import (
	"context"
	"errors"
	"flag"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// dbConn is oneConn on database db (go-redis sends SELECT as it connects).
func dbConn(t *testing.T, addr string, db int) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: db, PoolSize: 1, ReadTimeout: -1})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return rdb
}

// TestBlockingWaitsArePerDatabase: a BLPOP on database 1 is not served by
// a push to the same key in database 0, is served by one in database 1 (on
// another loop), and a SWAPDB that brings a filled list under a waiter
// serves it, as Redis's SWAPDB does.
func TestBlockingWaitsArePerDatabase(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	w1 := dbConn(t, srv.addr, 1)
	p0, p1 := dbConn(t, srv.addr, 0), dbConn(t, srv.addr, 1)
	got := make(chan []string, 1)
	served := func(by, want string) {
		t.Helper()
		select {
		case v := <-got:
			if len(v) != 2 || v[1] != want {
				t.Fatalf("%s: the waiter got %v, want [q %s]", by, v, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not serve the waiter", by)
		}
	}
	go func() { got <- w1.BLPop(ctx, 0, "q").Val() }()
	waitBlocked(t, p0, 1)
	p0.RPush(ctx, "q", "in-db0")
	select {
	case v := <-got:
		t.Fatalf("a push to database 0 served a waiter of database 1: %v", v)
	case <-time.After(100 * time.Millisecond):
	}
	p1.RPush(ctx, "q", "in-db1")
	served("a push to database 1", "in-db1")
	if n := p0.LLen(ctx, "q").Val(); n != 1 {
		t.Fatalf("database 0's list has %d elements, want its 1", n)
	}
	// SWAPDB 0 1 puts database 0's list ("in-db0") under a waiter of 1.
	go func() { got <- w1.BLPop(ctx, 0, "q").Val() }()
	waitBlocked(t, p0, 1)
	if err := p0.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
		t.Fatal(err)
	}
	served("SWAPDB", "in-db0") // its database now holds a list
}

// TestWatchIsPerDatabase: a write to a key in another database leaves a
// WATCH of the same name alone; MOVE into the watched database fails it.
func TestWatchIsPerDatabase(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	w, other := dbConn(t, srv.addr, 2), dbConn(t, srv.addr, 0)
	exec := func(during func()) error {
		return w.Watch(ctx, func(tx *redis.Tx) error {
			during()
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "k", "from-tx", 0)
				return nil
			})
			return err
		}, "k")
	}
	if err := exec(func() { other.Set(ctx, "k", "db0", 0) }); err != nil {
		t.Fatalf("a write to k in database 0 failed a WATCH of k in database 2: %v", err)
	}
	w.Del(ctx, "k")
	other.Set(ctx, "k", "moving", 0)
	err := exec(func() {
		if !other.Move(ctx, "k", 2).Val() {
			t.Error("MOVE into database 2 refused")
		}
	})
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("a MOVE into the watched key's database: %v, want TxFailedErr", err)
	}
	if v := w.Get(ctx, "k").Val(); v != "moving" {
		t.Fatalf("database 2's k = %q, want the moved value", v)
	}
}

// TestManyDatabasesCostNothingUntilUsed: with databases at its maximum
// (2^20), the highest index works, INFO keyspace lists the databases used
// and FLUSHALL empties them (each walks only the databases made).
func TestManyDatabasesCostNothingUntilUsed(t *testing.T) {
	params := config.New(config.Params())
	if err := params.ParseFlags(flag.NewFlagSet("t", flag.ContinueOnError), []string{"--databases", "1048576"}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	srv := startShoal(t, kv.Options{Params: params}, eventloop.Options{})
	c := dialRaw(t, srv.addr)
	for _, db := range []string{"1048575", "7", "0"} {
		c.Do("SELECT", db)
		if r := c.Do("SET", "k", db); r != "+OK\r\n" {
			t.Fatalf("SET in database %s: %q", db, r)
		}
	}
	info := c.Do("INFO", "keyspace")
	for _, want := range []string{"db0:keys=1", "db7:keys=1", "db1048575:keys=1"} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO keyspace lacks %s:\n%s", want, info)
		}
	}
	if r := c.Do("FLUSHALL"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r := c.Do("SELECT", "1048576"); !strings.Contains(r, "out of range") {
		t.Fatalf("SELECT 1048576 with databases 1048576: %q", r)
	}
}

// TestInfoKeyspaceEstimatesAvgTTL: each database's avg_ttl in INFO
// keyspace becomes the active expiry's estimate (ms), as Redis's: about
// 100 s where the keys have 100 s to live, 200 s where they have 200 s.
func TestInfoKeyspaceEstimatesAvgTTL(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	c := dialRaw(t, srv.addr)
	for db, ttl := range map[string]string{"0": "100", "3": "200"} {
		c.Do("SELECT", db)
		for i := range 10 {
			if r := c.Do("SET", "k"+strconv.Itoa(i), "v", "EX", ttl); r != "+OK\r\n" {
				t.Fatalf("SET EX %s in db %s: %q", ttl, db, r)
			}
		}
	}
	avg := regexp.MustCompile(`(?m)^db([03]):keys=10,expires=10,avg_ttl=([0-9]+)\r$`)
	// The expirer runs 10 times a second (hz); wait for both estimates.
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := map[string]int{}
		for _, m := range avg.FindAllStringSubmatch(c.Do("INFO", "keyspace"), -1) {
			got[m[1]], _ = strconv.Atoi(m[2])
		}
		if got["0"] != 0 && got["3"] != 0 {
			if got["0"] < 90_000 || got["0"] > 100_000 || got["3"] < 190_000 || got["3"] > 200_000 {
				t.Fatalf("avg_ttl db0 %d ms, db3 %d ms; want about 100 s and 200 s", got["0"], got["3"])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no avg_ttl estimate after 60 s: %q", c.Do("INFO", "keyspace"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
