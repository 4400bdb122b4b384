package rdb

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
)

// Interoperability with the real redis-server 7.0, redis-check-rdb and
// DUMP/RESTORE: files and payloads go both ways and every key is compared
// through a client.

func dialRedis(t *testing.T, addr string, db int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db, Protocol: 2})
	t.Cleanup(func() { c.Close() })
	return c
}

// fetch reads key's value, OBJECT ENCODING and expiry from a server.
func fetch(t *testing.T, c *redis.Client, key string) (Value, string, int64) {
	t.Helper()
	ctx := context.Background()
	typ, err := c.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var v Value
	switch typ {
	case "string":
		s, _ := c.Get(ctx, key).Result()
		v = Value{Kind: KindString, Str: []byte(s)}
	case "list":
		items, _ := c.LRange(ctx, key, 0, -1).Result()
		v = Value{Kind: KindList, Items: strs(items...)}
	case "set":
		items, _ := c.SMembers(ctx, key).Result()
		v = Value{Kind: KindSet, Items: strs(items...)}
	case "hash":
		m, _ := c.HGetAll(ctx, key).Result()
		v = Value{Kind: KindHash}
		for f, val := range m {
			v.Items = append(v.Items, []byte(f), []byte(val))
		}
	case "zset":
		zs, _ := c.ZRangeWithScores(ctx, key, 0, -1).Result()
		v = Value{Kind: KindZSet}
		for _, z := range zs {
			v.Items = append(v.Items, []byte(z.Member.(string)))
			v.Scores = append(v.Scores, z.Score)
		}
	default:
		t.Fatalf("%s: type %q", key, typ)
	}
	enc, err := c.ObjectEncoding(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	at, err := c.Do(ctx, "PEXPIRETIME", key).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return v, enc, max(at, 0)
}

// create makes key hold v in a server, with commands (RPUSH, HSET, ...).
func create(t *testing.T, c *redis.Client, key string, v Value, expireAt int64) {
	t.Helper()
	ctx := context.Background()
	args := []any{}
	switch v.Kind {
	case KindString:
		args = append(args, "SET", key, v.Str)
	case KindList:
		args = append(args, "RPUSH", key)
	case KindSet:
		args = append(args, "SADD", key)
	case KindHash:
		args = append(args, "HSET", key)
	case KindZSet:
		args = append(args, "ZADD", key)
		for i, m := range v.Items {
			args = append(args, strconv.FormatFloat(v.Scores[i], 'g', -1, 64), m)
		}
	}
	if v.Kind != KindZSet {
		for _, it := range v.Items {
			args = append(args, it)
		}
	}
	if err := c.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if expireAt != 0 {
		c.PExpireAt(ctx, key, timeFromMs(expireAt))
	}
}

// TestRedisServerLoadsWrittenFile: a file written by this package passes
// redis-check-rdb, and redis-server started on it serves every key with
// the same value, type, expiry and OBJECT ENCODING.
func TestRedisServerLoadsWrittenFile(t *testing.T) {
	redistest.Binary(t, "redis-server")
	keys := append(sampleKeys(), testKey{key: "s:idle", val: Value{Kind: KindString, Str: []byte("x")},
		meta: KeyMeta{Idle: 5000, HasIdle: true}, enc: "embstr"})
	dir := t.TempDir()
	// A low plain threshold puts the 20000-byte list element in a PLAIN node.
	file := writeSample(t, keys, Options{ListPlainThreshold: 10000})
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	redistest.CheckRDB(t, filepath.Join(dir, "dump.rdb"))
	addr := redistest.StartServer(t, "--dir", dir, "--dbfilename", "dump.rdb")
	counts := map[int]int64{}
	for _, k := range keys {
		counts[k.db]++
		c := dialRedis(t, addr, k.db)
		if k.meta.HasIdle { // before fetch, whose reads touch the key
			idle, _ := c.ObjectIdleTime(context.Background(), k.key).Result()
			if idle.Seconds() < float64(k.meta.Idle) {
				t.Errorf("%s: OBJECT IDLETIME %v, want at least %ds", k.key, idle, k.meta.Idle)
			}
		}
		v, enc, at := fetch(t, c, k.key)
		if canonical(v) != canonical(k.val) {
			t.Errorf("%s: redis serves %.200s, the file held %.200s", k.key, canonical(v), canonical(k.val))
		}
		if enc != k.enc {
			t.Errorf("%s: OBJECT ENCODING %s, want %s", k.key, enc, k.enc)
		}
		if at != k.meta.ExpireAt {
			t.Errorf("%s: PEXPIRETIME %d, want %d", k.key, at, k.meta.ExpireAt)
		}
	}
	for db, n := range counts {
		if size := dialRedis(t, addr, db).DBSize(context.Background()).Val(); size != n {
			t.Errorf("db %d: DBSIZE %d, want %d", db, size, n)
		}
	}
}

// TestReadRedisServerDump: redis-server filled with every type in every
// encoding saves a dump that this package reads back exactly, with the
// RDB type this package's writer would have chosen, and the LRU or LFU
// information of the policy in force.
func TestReadRedisServerDump(t *testing.T) {
	redistest.Binary(t, "redis-server")
	dir := t.TempDir()
	addr := redistest.StartServer(t, "--dir", dir, "--dbfilename", "dump.rdb", "--enable-debug-command", "yes",
		"--list-compress-depth", "1")
	ctx := context.Background()
	keys := sampleKeys()
	for _, k := range keys {
		create(t, dialRedis(t, addr, k.db), k.key, k.val, k.meta.ExpireAt)
	}
	// Lists with PLAIN nodes and with LZF-compressed inner nodes
	// (list-compress-depth 1 compresses all but the end nodes).
	c0 := dialRedis(t, addr, 0)
	if err := c0.Do(ctx, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	plain := testKey{key: "l:plain", val: Value{Kind: KindList, Items: [][]byte{[]byte("small"), bytes.Repeat([]byte("P"), 3000), []byte("7")}}, typ: TypeListQuicklist2}
	create(t, c0, plain.key, plain.val, 0)
	keys = append(keys, plain)
	lib := "#!lua name=mylib\nredis.register_function('f', function() return 1 end)"
	if err := c0.FunctionLoad(ctx, lib).Err(); err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu"} {
		if err := c0.ConfigSet(ctx, "maxmemory-policy", policy).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c0.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		if err != nil {
			t.Fatal(err)
		}
		got, aux := readAll(t, file)
		if aux["redis-ver"] != "7.0.15" {
			t.Errorf("aux redis-ver %q", aux["redis-ver"])
		}
		if aux["function"] != lib {
			t.Errorf("function library read as %q", aux["function"])
		}
		if len(got) != len(keys) {
			t.Errorf("%s: read %d keys, redis has %d", policy, len(got), len(keys))
		}
		for _, k := range keys {
			g, ok := got[fmt.Sprintf("%d/%s", k.db, k.key)]
			switch {
			case !ok:
				t.Errorf("%s: missing from redis's dump", k.key)
				continue
			case canonical(g.val) != canonical(k.val):
				t.Errorf("%s: read %.200s, redis holds %.200s", k.key, canonical(g.val), canonical(k.val))
			case g.typ != k.typ:
				t.Errorf("%s: redis wrote %s, this package writes %s", k.key, typeName(g.typ), typeName(k.typ))
			case g.meta.ExpireAt != k.meta.ExpireAt:
				t.Errorf("%s: expiry %d, want %d", k.key, g.meta.ExpireAt, k.meta.ExpireAt)
			case policy == "allkeys-lru" && (!g.meta.HasIdle || g.meta.HasFreq):
				t.Errorf("%s: under LRU, meta %+v", k.key, g.meta)
			case policy == "allkeys-lfu" && (g.meta.HasIdle || !g.meta.HasFreq):
				t.Errorf("%s: under LFU, meta %+v", k.key, g.meta)
			}
		}
	}
}

// sameBytes are the sample keys whose DUMP payloads have no compressed
// part and no hash table.
var sameBytes = []string{"s:raw", "s:empty", "s:int8", "s:int16", "s:int32", "s:int64", "s:notint", "s:binary",
	"s:ttl", "l:small", "h:small", "z:small", "s:db3", "h:db3"}

// TestDumpPayloadsInterop: redis-server's DUMP payloads decode to the
// values it holds, and payloads this package encodes RESTORE into
// redis-server as the same values in the same encodings.
func TestDumpPayloadsInterop(t *testing.T) {
	redistest.Binary(t, "redis-server")
	addr := redistest.StartServer(t)
	c := dialRedis(t, addr, 0)
	ctx := context.Background()
	enc := NewEncoder(Options{})
	for _, k := range sampleKeys() {
		create(t, c, "src:"+k.key, k.val, 0)
		payload, err := c.Dump(ctx, "src:"+k.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		var v Value
		typ, err := DecodeDump([]byte(payload), &v)
		if err != nil {
			t.Fatalf("%s: decoding redis's DUMP: %v", k.key, err)
		}
		if canonical(v) != canonical(k.val) || typ != k.typ {
			t.Errorf("%s: redis's DUMP decodes to %s %.200s", k.key, typeName(typ), canonical(v))
		}
		mine, err := enc.AppendDump(nil, &k.val)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Restore(ctx, "dst:"+k.key, 0, string(mine)).Err(); err != nil {
			t.Fatalf("%s: RESTORE of this package's payload: %v", k.key, err)
		}
		got, gotEnc, _ := fetch(t, c, "dst:"+k.key)
		if canonical(got) != canonical(k.val) || gotEnc != k.enc {
			t.Errorf("%s: restored as %s %.200s", k.key, gotEnc, canonical(got))
		}
		// Strings, listpacks and intsets are laid out as Redis lays them
		// out, so where no LZF compression is involved (this package's
		// compressor is not liblzf) and no hash table order, the payloads
		// are the same bytes.
		if slices.Contains(sameBytes, k.key) && !bytes.Equal(mine, []byte(payload)) {
			t.Errorf("%s: payload differs from redis's:\n mine %q\nredis %q", k.key, mine, payload)
		}
	}
}

func timeFromMs(ms int64) time.Time { return time.UnixMilli(ms) }

// TestRedisServerLoadsWrittenFunctions: a function library written with
// WriteFunction is loaded by redis-server and can be called.
func TestRedisServerLoadsWrittenFunctions(t *testing.T) {
	redistest.Binary(t, "redis-server")
	dir := t.TempDir()
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	lib := "#!lua name=written\nredis.register_function('answer', function() return 42 end)"
	if err := w.WriteFunction([]byte(lib)); err != nil {
		t.Fatal(err)
	}
	if err := w.SelectDB(0, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteKey([]byte("k"), &Value{Kind: KindString, Str: []byte("v")}, KeyMeta{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	redistest.CheckRDB(t, filepath.Join(dir, "dump.rdb"))
	c := dialRedis(t, redistest.StartServer(t, "--dir", dir, "--dbfilename", "dump.rdb"), 0)
	if n, err := c.FCall(context.Background(), "answer", nil).Int(); err != nil || n != 42 {
		t.Fatalf("FCALL answer: %d, %v", n, err)
	}
}
