package kv_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestGoRedisTypedAPI drives every command through go-redis's typed API,
// with its default RESP3 handshake and with Protocol 2.
func TestGoRedisTypedAPI(t *testing.T) {
	srv := startShoal(t, kv.Options{RequirePass: "pw"}, eventloop.Options{Loops: 2})
	forEachProtocol(t, redis.Options{Addr: srv.addr, Password: "pw", ClientName: "typed"}, testTypedAPI)
}

func testTypedAPI(t *testing.T, rdb *redis.Client, proto int) {
	ctx := context.Background()
	check, eq := goredisHelpers(t)
	check("FLUSHALL", rdb.FlushAll(ctx).Err())
	eq("PING", rdb.Ping(ctx).Val(), "PONG")
	eq("ECHO", rdb.Echo(ctx, "hi").Val(), "hi")
	eq("CLIENT GETNAME", rdb.ClientGetName(ctx).Val(), "typed")
	id, err := rdb.ClientID(ctx).Result()
	check("CLIENT ID", err)
	if id <= 0 {
		t.Errorf("CLIENT ID = %d", id)
	}
	list, err := rdb.ClientList(ctx).Result()
	check("CLIENT LIST", err)
	if want := "id=" + strconv.FormatInt(id, 10) + " "; !contains(list, want) || !contains(list, "resp="+strconv.Itoa(proto)) {
		t.Errorf("CLIENT LIST lacks %q / resp=%d:\n%s", want, proto, list)
	}

	// Strings.
	if _, err := rdb.Get(ctx, "k").Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET missing: %v", err)
	}
	check("SET", rdb.Set(ctx, "k", "v", 0).Err())
	eq("GET", rdb.Get(ctx, "k").Val(), "v")
	old, err := rdb.SetArgs(ctx, "k", "v2", redis.SetArgs{Get: true, TTL: time.Minute}).Result()
	check("SET GET EX", err)
	eq("SET GET old", old, "v")
	if ttl := rdb.TTL(ctx, "k").Val(); ttl < 59*time.Second || ttl > time.Minute {
		t.Errorf("TTL after SET EX = %v", ttl)
	}
	check("SET KEEPTTL", rdb.SetArgs(ctx, "k", "v3", redis.SetArgs{KeepTTL: true}).Err())
	if ttl := rdb.PTTL(ctx, "k").Val(); ttl <= 0 {
		t.Errorf("KEEPTTL lost the TTL: %v", ttl)
	}
	if err := rdb.SetArgs(ctx, "k", "x", redis.SetArgs{Mode: "NX"}).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("SET NX on existing: %v", err)
	}
	eq("SET XX", rdb.SetArgs(ctx, "k", "x", redis.SetArgs{Mode: "XX"}).Val(), "OK")
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	check("SET EXAT", rdb.SetArgs(ctx, "at", "1", redis.SetArgs{ExpireAt: at}).Err())
	eq("EXPIRETIME", rdb.ExpireTime(ctx, "at").Val(), time.Duration(at.Unix())*time.Second)
	eq("SETNX", rdb.SetNX(ctx, "nx", "1", 0).Val(), true)
	eq("SETNX again", rdb.SetNX(ctx, "nx", "1", 0).Val(), false)
	check("SETEX", rdb.Do(ctx, "SETEX", "ex", 10, "1").Err()) // SETEX itself; go-redis's SetEx is deprecated
	check("PSETEX", rdb.Do(ctx, "PSETEX", "pex", 10000, "1").Err())
	if pttl := rdb.PTTL(ctx, "pex").Val(); pttl <= 0 || pttl > 10*time.Second {
		t.Errorf("PTTL after PSETEX = %v", pttl)
	}
	eq("GETSET", rdb.Do(ctx, "GETSET", "nx", "2").Val(), "1")
	eq("GETDEL", rdb.GetDel(ctx, "nx").Val(), "2")
	eq("EXISTS after GETDEL", rdb.Exists(ctx, "nx").Val(), 0)
	eq("GETEX", rdb.GetEx(ctx, "ex", time.Hour).Val(), "1")
	if ttl := rdb.TTL(ctx, "ex").Val(); ttl < 59*time.Minute {
		t.Errorf("TTL after GETEX = %v", ttl)
	}
	eq("GETEX PERSIST", rdb.GetEx(ctx, "ex", 0).Val(), "1")
	check("MSET", rdb.MSet(ctx, "a", "1", "b", "2").Err())
	eq("MGET", rdb.MGet(ctx, "a", "missing", "b").Val(), []any{"1", nil, "2"})
	eq("MSETNX", rdb.MSetNX(ctx, "a", "9", "c", "3").Val(), false)
	eq("MSETNX new", rdb.MSetNX(ctx, "c", "3", "d", "4").Val(), true)
	eq("INCR", rdb.Incr(ctx, "n").Val(), 1)
	eq("INCRBY", rdb.IncrBy(ctx, "n", 41).Val(), 42)
	eq("DECR", rdb.Decr(ctx, "n").Val(), 41)
	eq("DECRBY", rdb.DecrBy(ctx, "n", 40).Val(), 1)
	eq("INCRBYFLOAT", rdb.IncrByFloat(ctx, "f", 2.5).Val(), 2.5)
	eq("INCRBYFLOAT again", rdb.IncrByFloat(ctx, "f", 0.25).Val(), 2.75)
	if err := rdb.Incr(ctx, "k").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
		t.Errorf("INCR on text: %v", err)
	}
	eq("APPEND", rdb.Append(ctx, "s", "hello").Val(), 5)
	eq("APPEND more", rdb.Append(ctx, "s", " world").Val(), 11)
	eq("STRLEN", rdb.StrLen(ctx, "s").Val(), 11)
	eq("GETRANGE", rdb.GetRange(ctx, "s", 0, 4).Val(), "hello")
	eq("SETRANGE", rdb.SetRange(ctx, "s", 6, "there").Val(), 11)
	eq("GET after SETRANGE", rdb.Get(ctx, "s").Val(), "hello there")

	// Keys.
	eq("TYPE", rdb.Type(ctx, "s").Val(), "string")
	eq("TYPE missing", rdb.Type(ctx, "missing").Val(), "none")
	eq("EXPIRE", rdb.Expire(ctx, "s", time.Hour).Val(), true)
	eq("EXPIRE NX", rdb.ExpireNX(ctx, "s", time.Hour).Val(), false)
	eq("EXPIRE XX", rdb.ExpireXX(ctx, "s", 2*time.Hour).Val(), true)
	eq("EXPIRE GT smaller", rdb.ExpireGT(ctx, "s", time.Minute).Val(), false)
	eq("EXPIRE LT smaller", rdb.ExpireLT(ctx, "s", time.Minute).Val(), true)
	eq("PEXPIRE", rdb.PExpire(ctx, "s", 90*time.Second).Val(), true)
	eq("EXPIREAT", rdb.ExpireAt(ctx, "s", at).Val(), true)
	eq("PEXPIRETIME", rdb.PExpireTime(ctx, "s").Val(), time.Duration(at.UnixMilli())*time.Millisecond)
	eq("PEXPIREAT", rdb.PExpireAt(ctx, "s", at.Add(time.Second)).Val(), true)
	eq("PERSIST", rdb.Persist(ctx, "s").Val(), true)
	eq("TTL persistent", rdb.TTL(ctx, "s").Val(), time.Duration(-1))
	eq("TTL missing", rdb.TTL(ctx, "missing").Val(), time.Duration(-2))
	eq("RENAME", rdb.Rename(ctx, "s", "s2").Val(), "OK")
	if err := rdb.Rename(ctx, "s", "s3").Err(); err == nil || err.Error() != "ERR no such key" {
		t.Errorf("RENAME missing: %v", err)
	}
	eq("RENAMENX taken", rdb.RenameNX(ctx, "s2", "a").Val(), false)
	eq("RENAMENX", rdb.RenameNX(ctx, "s2", "s").Val(), true)
	keys := rdb.Keys(ctx, "*").Val()
	sort.Strings(keys)
	want := []string{"a", "at", "b", "c", "d", "ex", "f", "k", "n", "pex", "s"}
	eq("KEYS", keys, want)
	var scanned []string
	iter := rdb.Scan(ctx, 0, "", 3).Iterator()
	for iter.Next(ctx) {
		scanned = append(scanned, iter.Val())
	}
	check("SCAN", iter.Err())
	sort.Strings(scanned)
	eq("SCAN all", scanned, want)
	matched, _, err := rdb.ScanType(ctx, 0, "[ab]", 100, "string").Result()
	check("SCAN TYPE", err)
	sort.Strings(matched)
	eq("SCAN MATCH TYPE", matched, []string{"a", "b"})
	if k := rdb.RandomKey(ctx).Val(); k == "" {
		t.Error("RANDOMKEY returned nothing")
	}
	eq("EXISTS", rdb.Exists(ctx, "a", "a", "missing").Val(), 2)
	eq("DEL", rdb.Del(ctx, "a", "missing").Val(), 1)
	eq("UNLINK", rdb.Unlink(ctx, "b").Val(), 1)
	eq("DBSIZE", rdb.DBSize(ctx).Val(), len(want)-2)

	// Server.
	tm, err := rdb.Time(ctx).Result()
	check("TIME", err)
	if d := time.Since(tm); d < -time.Minute || d > time.Minute {
		t.Errorf("TIME = %v", tm)
	}
	info, err := rdb.Info(ctx, "keyspace").Result()
	check("INFO", err)
	if !contains(info, "db0:keys=9,") {
		t.Errorf("INFO keyspace:\n%s", info)
	}
	check("CONFIG SET", rdb.ConfigSet(ctx, "maxmemory", "64mb").Err())
	eq("CONFIG GET", rdb.ConfigGet(ctx, "maxmemory").Val(), map[string]string{"maxmemory": "67108864"})
	check("CONFIG SET back", rdb.ConfigSet(ctx, "maxmemory", "0").Err())
	cmds, err := rdb.Command(ctx).Result()
	check("COMMAND", err)
	if c := cmds["set"]; c == nil || c.Arity != -3 || c.FirstKeyPos != 1 {
		t.Errorf("COMMAND set = %+v", c)
	}
	count, err := rdb.Do(ctx, "COMMAND", "COUNT").Int()
	check("COMMAND COUNT", err)
	if int(count) != len(cmds) {
		t.Errorf("COMMAND COUNT %d, COMMAND listed %d", count, len(cmds))
	}
	check("FLUSHDB", rdb.FlushDB(ctx).Err())
	eq("DBSIZE after FLUSHDB", rdb.DBSize(ctx).Val(), 0)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestGoRedisPipelinesAndConcurrentClients runs pipelines and many
// concurrent clients spread over the loops, and checks every increment
// landed exactly once.
func TestGoRedisPipelinesAndConcurrentClients(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 4})
	ctx := context.Background()
	for _, proto := range []int{3, 2} {
		rdb := redis.NewClient(&redis.Options{Addr: srv.addr, Protocol: proto, PoolSize: 32})
		check := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		check(rdb.FlushAll(ctx).Err())
		cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := 0; i < 500; i++ {
				p.Set(ctx, "key:"+strconv.Itoa(i), i, 0)
				p.Incr(ctx, "pipe")
				p.Get(ctx, "key:"+strconv.Itoa(i))
			}
			return nil
		})
		check(err)
		for i := 0; i < 500; i++ {
			if got := cmds[3*i+1].(*redis.IntCmd).Val(); got != int64(i+1) {
				t.Fatalf("resp%d pipelined INCR %d = %d", proto, i, got)
			}
			if got := cmds[3*i+2].(*redis.StringCmd).Val(); got != strconv.Itoa(i) {
				t.Fatalf("resp%d pipelined GET %d = %q", proto, i, got)
			}
		}

		const clients, perClient = 40, 100
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				own := redis.NewClient(&redis.Options{Addr: srv.addr, Protocol: proto, PoolSize: 1})
				defer own.Close()
				for i := 0; i < perClient; i++ {
					if err := own.Incr(ctx, "shared").Err(); err != nil {
						errs <- err
						return
					}
					key := fmt.Sprintf("c%d:%d", c, i)
					if err := own.Set(ctx, key, key, 0).Err(); err != nil {
						errs <- err
						return
					}
					if got, err := own.Get(ctx, key).Result(); err != nil || got != key {
						errs <- fmt.Errorf("GET %s = %q, %v", key, got, err)
						return
					}
				}
			}(c)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("resp%d: %v", proto, err)
		}
		if got := rdb.Get(ctx, "shared").Val(); got != strconv.Itoa(clients*perClient) {
			t.Errorf("resp%d shared counter = %s, want %d", proto, got, clients*perClient)
		}
		rdb.Close()
	}
}
