package kv_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/rdb"
)

// payload is a DUMP payload made by package rdb, byte for byte what
// redis-server 7.0 makes for these small values.
func payload(v rdb.Value) string {
	p, err := rdb.NewEncoder(rdb.Options{}).AppendDump(nil, &v)
	if err != nil {
		panic(err)
	}
	return string(p)
}

func init() {
	str := payload(rdb.Value{Kind: rdb.KindString, Str: []byte("hello")})
	list := payload(rdb.Value{Kind: rdb.KindList, Items: [][]byte{[]byte("a"), []byte("1"), []byte("b")}})
	hash := payload(rdb.Value{Kind: rdb.KindHash, Items: [][]byte{[]byte("f"), []byte("v"), []byte("n"), []byte("7")}})
	set := payload(rdb.Value{Kind: rdb.KindSet, Items: [][]byte{[]byte("3"), []byte("1"), []byte("-2")}})
	zset := payload(rdb.Value{Kind: rdb.KindZSet, Items: [][]byte{[]byte("m"), []byte("n")}, Scores: []float64{1.5, -3}})
	badCRC := str[:len(str)-1] + "\x00"
	newer := str[:len(str)-10] + "\x0b\x00" + str[len(str)-8:] // version 11: refused before the checksum
	diffCases["dump-restore"] = []step{
		s(exact, "RESTORE", "s", "0", str), c("GET s"), c("TYPE s"), c("OBJECT ENCODING s"), c("DUMP s"),
		s(exact, "RESTORE", "s", "0", str), // BUSYKEY
		s(exact, "RESTORE", "s", "0", str, "REPLACE"), s(exact, "RESTORE", "l", "0", list), c("LRANGE l 0 -1"), c("DUMP l"),
		c("OBJECT ENCODING l"), s(exact, "RESTORE", "h", "100000", hash), c("HGETALL h"), c("PTTL h", approxInt), c("DUMP h"),
		c("OBJECT ENCODING h"), s(exact, "RESTORE", "st", "0", set), c("SMEMBERS st"), c("OBJECT ENCODING st"), c("DUMP st"),
		s(exact, "RESTORE", "z", "0", zset), c("ZRANGE z 0 -1 WITHSCORES"), c("OBJECT ENCODING z"), c("DUMP z"),
		s(exact, "RESTORE", "abs", "4102444800000", str, "ABSTTL"), c("PEXPIRETIME abs"),
		s(exact, "RESTORE", "past", "1", str, "ABSTTL"), c("EXISTS past"), // already expired: OK, nothing made
		s(exact, "RESTORE", "s", "1", list, "ABSTTL", "REPLACE"), c("EXISTS s"), // and REPLACE deleted the old key
		s(exact, "RESTORE", "i", "0", str, "IDLETIME", "10"), s(exact, "RESTORE", "f", "0", str, "FREQ", "5"),
		c("DUMP missing"), c("DUMP"), c("RESTORE k 0"),
		// Errors, in Redis's order of checks.
		s(exact, "RESTORE", "l", "0", str), // BUSYKEY before anything else
		s(exact, "RESTORE", "l", "x", "junk"), s(exact, "RESTORE", "k", "x", str), s(exact, "RESTORE", "k", "-1", str),
		s(exact, "RESTORE", "k", "0", badCRC), s(exact, "RESTORE", "k", "0", newer), s(exact, "RESTORE", "k", "0", "short"),
		s(exact, "RESTORE", "k", "0", ""), s(exact, "RESTORE", "k", "0", str, "FOO"),
		s(exact, "RESTORE", "k", "0", str, "IDLETIME"), s(exact, "RESTORE", "k", "0", str, "IDLETIME", "-1"),
		s(exact, "RESTORE", "k", "0", str, "IDLETIME", "x"), s(exact, "RESTORE", "k", "0", str, "FREQ", "256"),
		s(exact, "RESTORE", "k", "0", str, "FREQ", "-1"), s(exact, "RESTORE", "k", "0", str, "IDLETIME", "1", "FREQ", "1"),
		s(exact, "RESTORE", "k", "0", str, "FREQ", "1", "IDLETIME", "1"), s(exact, "RESTORE", "l", "0", str, "FOO"),
		s(exact, "RESTORE", "k", "0", corrupt(list)), s(exact, "RESTORE", "k", "0", corrupt(hash)),
		s(exact, "RESTORE", "k", "0", withFooter("\x00")), s(exact, "RESTORE", "k", "0", withFooter("\x0f\x00")),
		s(exact, "RESTORE", "k", "0", withFooter("\x02\x02\x01a\x01a")), // a set with a duplicate member
		c("EXISTS k"),
	}
}

// corrupt damages a payload's value but gives it a right footer.
func corrupt(p string) string {
	body := []byte(p[:len(p)-10])
	body[len(body)-1] ^= 0x55
	return withFooter(string(body))
}

// withFooter adds the RDB version and the checksum to a type byte and value.
func withFooter(body string) string {
	p := append([]byte(body), 10, 0)
	sum := jonesCRC(p)
	for i := range 8 {
		p = append(p, byte(sum>>(8*i)))
	}
	return string(p)
}

// jonesCRC is Redis's CRC-64, computed bit by bit (independently of
// package rdb's table-driven one).
func jonesCRC(p []byte) uint64 {
	var crc uint64
	for _, b := range p {
		crc ^= uint64(b)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x95ac9329ac4bc9b5
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// dumpValue is one value in one encoding, made with commands.
type dumpValue struct {
	key  string
	make [][]any // commands that build it
	ttl  bool
}

func dumpValues() []dumpValue {
	long := strings.Repeat("abcdefgh", 200)
	var bigList, bigHash, bigSet, bigZSet, ints []any
	bigList = append(bigList, "RPUSH", "l:big")
	bigHash = append(bigHash, "HSET", "h:big")
	bigSet = append(bigSet, "SADD", "set:big")
	bigZSet = append(bigZSet, "ZADD", "z:big")
	ints = append(ints, "SADD", "set:manyints")
	for i := range 3000 {
		bigList = append(bigList, "e"+strconv.Itoa(i))
		if i < 600 {
			bigHash = append(bigHash, "f"+strconv.Itoa(i), i)
			bigSet = append(bigSet, "m"+strconv.Itoa(i))
			ints = append(ints, i*7-100)
		}
		if i < 200 {
			bigZSet = append(bigZSet, float64(i)/3, "m"+strconv.Itoa(i))
		}
	}
	return []dumpValue{
		{key: "s:str", make: [][]any{{"SET", "s:str", "hello"}}},
		{key: "s:int", make: [][]any{{"SET", "s:int", "-123456"}}},
		{key: "s:int64", make: [][]any{{"SET", "s:int64", "9223372036854775807"}}},
		{key: "s:long", make: [][]any{{"SET", "s:long", long}}, ttl: true},
		{key: "s:bin", make: [][]any{{"SET", "s:bin", "\x00\xff\r\n binary value that is longer than forty-four bytes"}}},
		{key: "l:small", make: [][]any{{"RPUSH", "l:small", "a", "1", "", "-7"}}},
		{key: "l:big", make: [][]any{bigList}, ttl: true},
		{key: "l:bigelem", make: [][]any{{"RPUSH", "l:bigelem", "x", strings.Repeat("y", 20000), "z"}}},
		{key: "h:small", make: [][]any{{"HSET", "h:small", "f", "v", "n", "12"}}},
		{key: "h:big", make: [][]any{bigHash}},
		{key: "h:longval", make: [][]any{{"HSET", "h:longval", "f", long}}},
		{key: "set:ints", make: [][]any{{"SADD", "set:ints", "1", "-5", "100000", "9223372036854775807"}}},
		{key: "set:manyints", make: [][]any{ints}},
		{key: "set:strs", make: [][]any{{"SADD", "set:strs", "a", "b", "1"}}},
		{key: "set:big", make: [][]any{bigSet}, ttl: true},
		{key: "z:small", make: [][]any{{"ZADD", "z:small", "1.5", "a", "-inf", "b", "+inf", "c", "0", "d"}}},
		{key: "z:big", make: [][]any{bigZSet}},
		{key: "z:longmember", make: [][]any{{"ZADD", "z:longmember", "1", long}}},
	}
}

// describe reads a key's type, value, OBJECT ENCODING and whether it has
// a TTL, through a client.
func describe(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	ctx := context.Background()
	typ := c.Type(ctx, key).Val()
	var val string
	switch typ {
	case "string":
		val = c.Get(ctx, key).Val()
	case "list":
		val = strings.Join(c.LRange(ctx, key, 0, -1).Val(), ",")
	case "set":
		m := c.SMembers(ctx, key).Val()
		slices.Sort(m)
		val = strings.Join(m, ",")
	case "hash":
		var kv []string
		for f, v := range c.HGetAll(ctx, key).Val() {
			kv = append(kv, f+"="+v)
		}
		slices.Sort(kv)
		val = strings.Join(kv, ",")
	case "zset":
		for _, z := range c.ZRangeWithScores(ctx, key, 0, -1).Val() {
			val += fmt.Sprintf("%v=%v,", z.Member, z.Score)
		}
	}
	ttl := c.PTTL(ctx, key).Val()
	return fmt.Sprintf("%s %s ttl=%v %.300s", typ, c.ObjectEncoding(ctx, key).Val(), ttl > 0, val)
}

// TestDumpRestoreBetweenRedisAndShoal: every type in every encoding, made
// with commands in one server, DUMPed there and RESTOREd in the other,
// both ways, ends up the same value in the same encoding with its TTL.
func TestDumpRestoreBetweenRedisAndShoal(t *testing.T) {
	ctx := context.Background()
	ref, ours := redisAndShoal(t)
	for _, dir := range []struct {
		name     string
		from, to *redis.Client
	}{{"redis to shoal", ref, ours}, {"shoal to redis", ours, ref}} {
		t.Run(dir.name, func(t *testing.T) {
			dir.from.FlushAll(ctx)
			dir.to.FlushAll(ctx)
			for _, v := range dumpValues() {
				for _, cmd := range v.make {
					if err := dir.from.Do(ctx, cmd...).Err(); err != nil {
						t.Fatalf("%s: %v", v.key, err)
					}
				}
				ttl := time.Duration(0)
				if v.ttl {
					ttl = time.Hour
					dir.from.Expire(ctx, v.key, ttl)
				}
				p, err := dir.from.Dump(ctx, v.key).Result()
				if err != nil {
					t.Fatalf("DUMP %s: %v", v.key, err)
				}
				if err := dir.to.Restore(ctx, v.key, ttl, p).Err(); err != nil {
					t.Fatalf("RESTORE %s: %v", v.key, err)
				}
				if want, got := describe(t, dir.from, v.key), describe(t, dir.to, v.key); want != got {
					t.Errorf("%s:\n source %s\n target %s", v.key, want, got)
				}
			}
		})
	}
	// Where no hash table order is involved, the payloads are the same
	// bytes, compressed strings and list nodes included (rdb's LZF is
	// liblzf's algorithm).
	for _, key := range []string{"s:str", "s:int", "s:long", "s:bin", "l:small", "l:big", "l:bigelem", "h:small", "z:small"} {
		a, b := ref.Dump(ctx, key).Val(), ours.Dump(ctx, key).Val()
		if a != b {
			t.Errorf("DUMP %s differs:\nredis %q\nshoal %q", key, a, b)
		}
	}
}

// TestRestoreWithGoRedis uses go-redis's typed DUMP, RESTORE and
// RESTORE ... REPLACE.
func TestRestoreWithGoRedis(t *testing.T) {
	ctx := context.Background()
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	c := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer c.Close()
	c.RPush(ctx, "src", "a", "b", "c")
	p, err := c.Dump(ctx, "src").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Restore(ctx, "dst", time.Minute, p).Err(); err != nil {
		t.Fatal(err)
	}
	if got := c.LRange(ctx, "dst", 0, -1).Val(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("restored %q", got)
	}
	if ttl := c.TTL(ctx, "dst").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("TTL %v", ttl)
	}
	err = c.Restore(ctx, "dst", 0, p).Err()
	if err == nil || err.Error() != "BUSYKEY Target key name already exists." {
		t.Fatalf("RESTORE over an existing key: %v", err)
	}
	c.Set(ctx, "other", "x", 0)
	if err := c.RestoreReplace(ctx, "other", 0, p).Err(); err != nil {
		t.Fatal(err)
	}
	if typ := c.Type(ctx, "other").Val(); typ != "list" {
		t.Fatalf("REPLACE left a %s", typ)
	}
	if _, err := c.Dump(ctx, "missing").Result(); err != redis.Nil {
		t.Fatalf("DUMP of a missing key: %v", err)
	}
}

// TestRestoreIsLoggedInTheAOF: RESTOREs (with a relative TTL, with
// REPLACE, and one whose TTL has passed with REPLACE, a DEL) replay to
// the same keyspace.
func TestRestoreIsLoggedInTheAOF(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	c := dialRaw(t, s.addr)
	str := payload(rdb.Value{Kind: rdb.KindString, Str: []byte("v1")})
	hash := payload(rdb.Value{Kind: rdb.KindHash, Items: [][]byte{[]byte("f"), []byte("v")}})
	for _, cmd := range [][]string{
		{"RESTORE", "a", "0", str},
		{"RESTORE", "b", "100000", str},
		{"RESTORE", "a", "0", hash, "REPLACE"},
		{"SET", "gone", "x"},
		{"RESTORE", "gone", "1", str, "ABSTTL", "REPLACE"},
		{"RESTORE", "c", "0", hash, "IDLETIME", "5"},
	} {
		if r := c.Do(cmd...); r != "+OK\r\n" {
			t.Fatalf("%q: %q", cmd[:3], r)
		}
	}
	want := map[string]string{}
	for _, k := range []string{"a", "b", "c", "gone"} {
		want[k] = c.Do("DUMP", k) + c.Do("PEXPIRETIME", k)
	}
	c2 := dialRaw(t, s.restart(t).addr)
	for k, w := range want {
		if got := c2.Do("DUMP", k) + c2.Do("PEXPIRETIME", k); got != w {
			t.Errorf("%s after replay: %q, before %q", k, got, w)
		}
	}
	if !bytes.Contains([]byte(want["b"]), []byte(":")) || want["gone"] != "$-1\r\n:-2\r\n" {
		t.Errorf("before replay: %q", want)
	}
}
