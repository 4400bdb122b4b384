package kv_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/aof"
)

// TestHLLMovesBetweenRedisAndShoal: a HyperLogLog built by redis-server
// and moved into Shoal with DUMP/RESTORE (and one built by Shoal, moved the
// other way) holds the same bytes, counts the same, and goes on growing
// into the same bytes on both sides; sparse and dense alike.
func TestHLLMovesBetweenRedisAndShoal(t *testing.T) {
	ctx := context.Background()
	ref, ours := redisAndShoal(t)
	elements := func(prefix string, n int) []any {
		var e []any
		for i := range n {
			e = append(e, prefix+strconv.Itoa(i))
		}
		return e
	}
	for _, tc := range []struct {
		key      string
		n        int
		from, to *redis.Client
	}{
		{"sparse-from-redis", 150, ref, ours},
		{"dense-from-redis", 20000, ref, ours},
		{"sparse-from-shoal", 150, ours, ref},
		{"dense-from-shoal", 20000, ours, ref},
	} {
		if err := tc.from.PFAdd(ctx, tc.key, elements(tc.key, tc.n)...).Err(); err != nil {
			t.Fatalf("%s: PFADD: %v", tc.key, err)
		}
		count := tc.from.PFCount(ctx, tc.key).Val()
		dump, err := tc.from.Dump(ctx, tc.key).Result()
		if err != nil {
			t.Fatalf("%s: DUMP: %v", tc.key, err)
		}
		if err := tc.to.Restore(ctx, tc.key, 0, dump).Err(); err != nil {
			t.Fatalf("%s: RESTORE: %v", tc.key, err)
		}
		if got := tc.to.PFCount(ctx, tc.key).Val(); got != count || count < int64(tc.n)*9/10 {
			t.Fatalf("%s: PFCOUNT %d after the move, %d before (%d added)", tc.key, got, count, tc.n)
		}
		more := elements("more", 300)
		ref.PFAdd(ctx, tc.key, more...)
		ours.PFAdd(ctx, tc.key, more...)
		ref.PFCount(ctx, tc.key) // both cache the new count in the header
		ours.PFCount(ctx, tc.key)
		a, b := ref.Get(ctx, tc.key).Val(), ours.Get(ctx, tc.key).Val()
		if a != b {
			t.Fatalf("%s: the values differ after more adds (%d and %d bytes)", tc.key, len(a), len(b))
		}
		if enc := ours.Do(ctx, "PFDEBUG", "ENCODING", tc.key).Val(); (enc == "dense") != (tc.n > 1000) {
			t.Fatalf("%s: encoding %v", tc.key, enc)
		}
	}
}

// TestGoRedisHyperLogLog drives PFADD, PFCOUNT and PFMERGE through
// go-redis in both protocols.
func TestGoRedisHyperLogLog(t *testing.T) {
	ctx := context.Background()
	eachProtocolConn(t, func(rdb *redis.Client, proto int) {
		for day := range 3 {
			var users []any
			for u := range 1000 {
				users = append(users, fmt.Sprintf("user%d", u+day*500))
			}
			if n := rdb.PFAdd(ctx, fmt.Sprintf("visits:%d", day), users...).Val(); n != 1 {
				t.Fatalf("RESP%d PFADD = %d", proto, n)
			}
		}
		if n := rdb.PFAdd(ctx, "visits:0", "user1").Val(); n != 0 {
			t.Fatalf("RESP%d PFADD of a seen user = %d", proto, n)
		}
		one := rdb.PFCount(ctx, "visits:0").Val()
		union := rdb.PFCount(ctx, "visits:0", "visits:1", "visits:2").Val()
		if one < 950 || one > 1050 || union < 1900 || union > 2100 {
			t.Fatalf("RESP%d PFCOUNT one day %d, three days %d", proto, one, union)
		}
		if err := rdb.PFMerge(ctx, "visits:all", "visits:0", "visits:1", "visits:2").Err(); err != nil {
			t.Fatalf("RESP%d PFMERGE: %v", proto, err)
		}
		if n := rdb.PFCount(ctx, "visits:all").Val(); n != union {
			t.Fatalf("RESP%d PFCOUNT of the merge %d, of the union %d", proto, n, union)
		}
		rdb.Set(ctx, "plain", "not an hll", 0)
		if err := rdb.PFCount(ctx, "plain").Err(); err == nil || err.Error() != "WRONGTYPE Key is not a valid HyperLogLog string value." {
			t.Fatalf("RESP%d PFCOUNT of a plain string: %v", proto, err)
		}
	})
}

// hllKeyspace reads keys as HyperLogLogs: the count first, so that the
// bytes read next hold it cached (a replay does not restore a cache that
// PFCOUNT filled, as PFCOUNT is not logged), then the bytes, encoding and
// expiry.
func hllKeyspace(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	c := dialRaw(t, addr)
	m := map[string]string{}
	for _, k := range keys {
		m[k] = c.Do("PFCOUNT", k) + c.Do("GET", k) + c.Do("PFDEBUG", "ENCODING", k) + c.Do("PEXPIRETIME", k)
	}
	return m
}

// TestAOFHyperLogLogReplay: concurrent PFADDs and PFMERGEs, rewrites, and
// adds to keys that expired in between; a server that loads the file has
// the same bytes at every key.
func TestAOFHyperLogLogReplay(t *testing.T) {
	s := startAOF(t, aof.FsyncEverySec)
	keys := []string{"h0", "h1", "h2", "merged", "dense", "exp"}
	writeConcurrently(t, s.addr, 4, 100, func(conn, i int) [][]string {
		h := fmt.Sprintf("h%d", (conn+i)%3)
		cmds := [][]string{
			{"PFADD", h, fmt.Sprintf("e%d", i), fmt.Sprintf("c%d-%d", conn, i)},
			{"PFMERGE", "merged", "h0", "h1", "h2"},
		}
		add := []string{"PFADD", "dense"}
		for j := range 30 {
			add = append(add, fmt.Sprintf("d%d-%d-%d", conn, i, j))
		}
		return append(cmds, add)
	})
	c := dialRaw(t, s.addr)
	s.rewriteAndWait(c)
	doAll(t, c, [][]string{{"PFADD", "exp", "old1", "old2"}, {"PEXPIRE", "exp", "30"}})
	time.Sleep(80 * time.Millisecond)
	doAll(t, c, [][]string{{"PFADD", "exp", "new"}})
	before := checkReplay(t, s, keys, hllKeyspace)
	if !strings.HasSuffix(before["dense"], "+dense\r\n:-1\r\n") {
		t.Errorf("dense is not dense: %q", clip(before["dense"]))
	}
	if !strings.HasPrefix(before["exp"], ":1\r\n") {
		t.Errorf("exp after the expiry and one add: %q", clip(before["exp"]))
	}
}
