package kv_test

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/aof"
)

// logCommands parses an append-only file into its commands, one string
// each (arguments joined by spaces).
func logCommands(t *testing.T, log string) []string {
	t.Helper()
	var cmds []string
	rd := bufio.NewReader(strings.NewReader(log))
	for {
		v, err := parseRESP(rd)
		if err != nil {
			return cmds
		}
		var words []string
		for _, e := range v.elems {
			words = append(words, e.line[strings.IndexByte(e.line, '|')+1:])
		}
		cmds = append(cmds, strings.Join(words, " "))
	}
}

// TestAOFLogsSortStoreAsEffect: SORT ... STORE is logged as DEL and
// RPUSHes of what the destination holds (never the SORT, which a replay
// would run against the BY keys it keeps after they expired), an empty
// result as the DEL of an existing destination, and nothing when nothing
// changed; a restarted server holds the same lists.
func TestAOFLogsSortStoreAsEffect(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	c := dialRaw(t, s.addr)
	big := []string{"RPUSH", "big"}
	for i := range 1300 {
		big = append(big, fmt.Sprint(i))
	}
	doAll(t, c, [][]string{
		{"RPUSH", "l", "3", "1", "2"}, {"MSET", "w_1", "3", "w_2", "2", "w_3", "1", "o_1", "one", "o_3", "three"},
		{"PEXPIRE", "w_1", "20"}, big,
	})
	time.Sleep(60 * time.Millisecond) // w_1 expires: it weighs 0 now, 3 in a replay
	for _, cmd := range [][]string{
		{"SORT", "l", "BY", "w_*", "GET", "o_*", "GET", "#", "STORE", "d"},
		{"SORT", "big", "DESC", "STORE", "bigd"},
		{"SORT", "l", "LIMIT", "5", "5", "STORE", "gone"}, // nothing to delete: not logged
		{"SET", "e", "x"}, {"SORT", "missing", "STORE", "e"},
		{"SORT", "l", "STORE", "dd"}, {"SORT", "l"},
	} {
		if r := c.Do(cmd...); r[0] == '-' {
			t.Fatalf("%q: %q", cmd, r)
		}
	}
	if got := c.Do("LRANGE", "d", "0", "-1"); got != "*6\r\n$3\r\none\r\n$1\r\n1\r\n$5\r\nthree\r\n$1\r\n3\r\n$0\r\n\r\n$1\r\n2\r\n" {
		t.Fatalf("d = %q", got)
	}
	read := func(t *testing.T, addr string, keys []string) map[string]string {
		rc := dialRaw(t, addr)
		m := map[string]string{}
		for _, k := range keys {
			m[k] = rc.Do("TYPE", k) + rc.Do("LRANGE", k, "0", "-1")
		}
		return m
	}
	keys := []string{"d", "bigd", "gone", "e", "dd"}
	before := read(t, s.addr, keys)
	s = s.restart(t) // the replay
	after := read(t, s.addr, keys)
	for _, k := range keys {
		if after[k] != before[k] {
			t.Errorf("%s after replay:\n%q\nbefore:\n%q", k, clip(after[k]), clip(before[k]))
		}
	}
	cmds := logCommands(t, s.stopAndReadLog(t))
	rpushBig := 0
	for _, cmd := range cmds {
		switch {
		case strings.HasPrefix(cmd, "SORT"):
			t.Errorf("the log holds %q", cmd)
		case strings.HasPrefix(cmd, "RPUSH bigd "):
			rpushBig += len(strings.Fields(cmd)) - 2
		case strings.Contains(cmd, "gone"):
			t.Errorf("an empty SORT STORE of a missing key was logged: %q", cmd)
		}
	}
	if rpushBig != 1300 {
		t.Errorf("the log pushes %d elements to bigd, not 1300", rpushBig)
	}
	for _, w := range []string{"DEL d", "RPUSH d one 1 three 3  2", "DEL e", "DEL dd", "RPUSH dd 1 2 3"} {
		if !slices.Contains(cmds, w) {
			t.Errorf("log lacks %q: %q", w, cmds)
		}
	}
}

// TestSortStoreTouchesItsDestination: SORT ... STORE ends a WATCH of its
// destination and wakes a client blocked on it; a SORT without STORE, or
// of a watched source, leaves the transaction alone.
func TestSortStoreTouchesItsDestination(t *testing.T) {
	srv := startLoops(t, 2)
	c, other := dialRaw(t, srv.addr), dialRaw(t, srv.addr)
	c.Do("RPUSH", "src", "2", "1")
	c.Do("WATCH", "src", "dst")
	other.Do("SORT", "src")
	other.Do("SORT_RO", "src")
	c.Do("MULTI")
	c.Do("PING")
	if got := c.Do("EXEC"); got != "*1\r\n+PONG\r\n" {
		t.Fatalf("EXEC after SORT without STORE = %q", got)
	}
	c.Do("WATCH", "src", "dst")
	other.Do("SORT", "src", "STORE", "dst")
	c.Do("MULTI")
	c.Do("PING")
	if got := c.Do("EXEC"); got != "*-1\r\n" {
		t.Fatalf("EXEC after SORT STORE of the watched key = %q", got)
	}
	c.Do("DEL", "dst")
	done := make(chan string, 1)
	go func() { done <- other.Do("BLPOP", "dst", "0") }()
	for !strings.Contains(c.Do("CLIENT", "LIST"), "cmd=blpop") {
		time.Sleep(time.Millisecond)
	}
	if got := c.Do("SORT", "src", "STORE", "dst"); got != ":2\r\n" {
		t.Fatalf("SORT STORE = %q", got)
	}
	select {
	case got := <-done:
		if got != "*2\r\n$3\r\ndst\r\n$1\r\n1\r\n" {
			t.Fatalf("BLPOP = %q", got)
		}
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("BLPOP was not woken by SORT STORE")
	}
}

// TestGoRedisSort drives SORT, SORT_RO and SORT ... STORE through
// go-redis's Sort, SortRO, SortStore and SortInterfaces in both protocols.
func TestGoRedisSort(t *testing.T) {
	ctx := context.Background()
	eachProtocolConn(t, func(rdb *redis.Client, proto int) {
		rdb.RPush(ctx, "l", 5, 3, 9, 1)
		rdb.MSet(ctx, "w_5", 1, "w_3", 4, "w_9", 2, "w_1", 3, "o_5", "five", "o_9", "nine")
		rdb.HSet(ctx, "h_1", "name", "one")
		if got := rdb.Sort(ctx, "l", &redis.Sort{}).Val(); !slices.Equal(got, []string{"1", "3", "5", "9"}) {
			t.Fatalf("RESP%d Sort = %q", proto, got)
		}
		if got := rdb.Sort(ctx, "l", &redis.Sort{Order: "DESC", Offset: 1, Count: 2}).Val(); !slices.Equal(got, []string{"5", "3"}) {
			t.Fatalf("RESP%d Sort DESC LIMIT 1 2 = %q", proto, got)
		}
		got, err := rdb.SortRO(ctx, "l", &redis.Sort{By: "w_*", Get: []string{"#", "o_*"}}).Result()
		if err != nil || !slices.Equal(got, []string{"5", "five", "9", "nine", "1", "", "3", ""}) {
			t.Fatalf("RESP%d SortRO BY w_* GET # GET o_* = %q, %v", proto, got, err)
		}
		vals, err := rdb.SortInterfaces(ctx, "l", &redis.Sort{By: "w_*", Get: []string{"h_*->name"}}).Result()
		if err != nil || len(vals) != 4 || vals[2] != "one" || vals[0] != nil {
			t.Fatalf("RESP%d SortInterfaces GET h_*->name = %#v, %v", proto, vals, err)
		}
		if n := rdb.SortStore(ctx, "l", "dst", &redis.Sort{By: "nosort", Order: "DESC"}).Val(); n != 4 {
			t.Fatalf("RESP%d SortStore = %d", proto, n)
		}
		if got := rdb.LRange(ctx, "dst", 0, -1).Val(); !slices.Equal(got, []string{"1", "9", "3", "5"}) {
			t.Fatalf("RESP%d stored = %q", proto, got)
		}
		rdb.RPush(ctx, "words", "b", "a")
		if err := rdb.Sort(ctx, "words", &redis.Sort{}).Err(); err == nil || err.Error() != "ERR One or more scores can't be converted into double" {
			t.Fatalf("RESP%d Sort of words = %v", proto, err)
		}
		if got := rdb.Sort(ctx, "words", &redis.Sort{Alpha: true}).Val(); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("RESP%d Sort ALPHA = %q", proto, got)
		}
		rdb.ZAdd(ctx, "z", redis.Z{Score: 2, Member: "x"}, redis.Z{Score: 1, Member: "y"}, redis.Z{Score: 3, Member: "w"})
		if got := rdb.Sort(ctx, "z", &redis.Sort{By: "nosort", Offset: 1, Count: 5}).Val(); !slices.Equal(got, []string{"x", "w"}) {
			t.Fatalf("RESP%d Sort zset BY nosort LIMIT 1 5 = %q", proto, got)
		}
		if n := rdb.SortStore(ctx, "nosuch", "dst", &redis.Sort{}).Val(); n != 0 || rdb.Exists(ctx, "dst").Val() != 0 {
			t.Fatalf("RESP%d SortStore of a missing key = %d, dst left", proto, n)
		}
	})
}

// TestAOFLogsPFCountThatCachesItsCount: a PFCOUNT that fills an HLL's
// cached cardinality is logged, as Redis propagates it, so the replayed
// value has the same bytes (the cache valid); one that finds the cache
// valid, or counts several keys, is not.
func TestAOFLogsPFCountThatCachesItsCount(t *testing.T) {
	s := startAOF(t, aof.FsyncEverySec)
	c := dialRaw(t, s.addr)
	doAll(t, c, [][]string{{"PFADD", "h", "a", "b", "c"}, {"PFCOUNT", "h"}, {"PFCOUNT", "h"}, {"PFADD", "g", "x"}, {"PFCOUNT", "h", "g"},
		{"PFADD", "m", "x", "y"}, {"MULTI"}, {"PFCOUNT", "m"}, {"EXEC"},
		{"PFADD", "e", "z"}, {"EVAL", "return redis.call('pfcount', KEYS[1])", "1", "e"}})
	inner := map[string]string{"m": c.Do("GET", "m"), "e": c.Do("GET", "e")}
	before := c.Do("GET", "h")
	if before[strings.Index(before, "HYLL")+15]&0x80 != 0 {
		t.Fatalf("PFCOUNT left h's cache invalid: %q", before)
	}
	s = s.restart(t)
	c = dialRaw(t, s.addr)
	if after := c.Do("GET", "h"); after != before {
		t.Fatalf("h after the replay %q, before %q", after, before)
	}
	for k, v := range inner { // in a transaction, in a script
		if after := c.Do("GET", k); after != v {
			t.Fatalf("%s after the replay %q, before %q", k, after, v)
		}
	}
	if got := c.Do("GET", "g"); got[strings.Index(got, "HYLL")+15]&0x80 == 0 {
		t.Fatalf("g's cache is valid after the replay: a PFCOUNT of several keys was logged as caching it: %q", got)
	}
	n := 0
	for _, cmd := range logCommands(t, s.stopAndReadLog(t)) {
		if strings.HasPrefix(strings.ToUpper(cmd), "PFCOUNT") {
			n++
			if cmd != "PFCOUNT h" && cmd != "PFCOUNT m" && cmd != "pfcount e" {
				t.Errorf("logged %q", cmd)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d PFCOUNTs logged, want the three that filled a cache", n)
	}
}
