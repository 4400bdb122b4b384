package kv_test

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/aof"
)

// hashSetKeyspace reads every key through the protocol: type, contents in a
// canonical order (hashtables list in any order), encoding and expiry.
func hashSetKeyspace(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	c := dialRaw(t, addr)
	m := map[string]string{}
	for _, k := range keys {
		typ := c.Do("TYPE", k)
		var contents string
		switch typ {
		case "+hash\r\n":
			contents = flatPairs(t, c.Do("HGETALL", k))
		case "+set\r\n":
			contents = canonicalReply(t, c.Do("SMEMBERS", k))
		}
		m[k] = typ + contents + c.Do("OBJECT", "ENCODING", k) + c.Do("PEXPIRETIME", k)
	}
	return m
}

// TestAOFHashSetReplay: concurrent hash and set writes of every kind
// (SPOP and HINCRBYFLOAT among them, logged as their effects), keys that
// expire between writes, and rewrites in between; a server that loads the
// file has the same hashes and sets, in the same encodings.
func TestAOFHashSetReplay(t *testing.T) {
	s := startAOF(t, aof.FsyncEverySec)
	keys := []string{"h0", "h1", "h2", "s0", "s1", "s2", "inter", "union", "diff", "moved", "bigh", "bigs", "exp", "exp2", "dst", "pop"}
	writeConcurrently(t, s.addr, 4, 150, func(conn, i int) [][]string {
		h := fmt.Sprintf("h%d", (conn+i)%3)
		st := fmt.Sprintf("s%d", (conn+i)%3)
		return [][]string{
			{"HSET", h, fmt.Sprintf("f%d", i%40), fmt.Sprint(i), "n", "1"},
			{"HINCRBY", h, "n", "3"},
			{"HINCRBYFLOAT", h, "fl", "0.1"},
			{"HINCRBYFLOAT", h, "fl", "1e-17"},
			{"HSETNX", h, fmt.Sprintf("nx%d", i%5), "v"},
			{"HDEL", h, fmt.Sprintf("f%d", (i+7)%40)},
			{"SADD", st, fmt.Sprint(i % 60), fmt.Sprintf("m%d", i%30)},
			{"SREM", st, fmt.Sprint((i + 11) % 60)},
			{"SPOP", st},
			{"SPOP", st, "2"},
			{"SMOVE", st, "moved", fmt.Sprint(i % 60)},
			{"SINTERSTORE", "inter", "s0", "s1"},
			{"SUNIONSTORE", "union", "s0", "s1", "s2"},
			{"SDIFFSTORE", "diff", "s1", "s2"},
			{"HSET", "bigh", fmt.Sprintf("b%d-%d", conn, i), strings.Repeat("v", i%70)},
			{"SADD", "bigs", fmt.Sprint(conn*1000 + i)},
		}
	})

	c := dialRaw(t, s.addr)
	s.rewriteAndWait(c)
	// Writes after an expiry: the replay must not add to the expired values.
	doAll(t, c, [][]string{
		{"HSET", "exp", "old", "1"}, {"PEXPIRE", "exp", "30"}, {"SADD", "exp2", "old2"}, {"PEXPIRE", "exp2", "30"},
		{"SADD", "pop", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, {"PEXPIRE", "pop", "100000"},
	})
	time.Sleep(80 * time.Millisecond)
	doAll(t, c, [][]string{
		{"HINCRBYFLOAT", "exp", "new", "2.5"}, {"SUNIONSTORE", "dst", "exp2", "s0"}, {"SPOP", "pop", "3"},
		{"SPOP", "pop"}, {"SPOP", "s1", "1000"},
	})

	before := checkReplay(t, s, keys, hashSetKeyspace)
	if !strings.Contains(before["exp"], "new") || strings.Contains(before["exp"], "old") {
		t.Errorf("exp before the restart: %q", before["exp"])
	}
	if !strings.Contains(before["bigh"], "hashtable") || !strings.Contains(before["pop"], "intset") {
		t.Errorf("bigh or pop not in the encoding the test means: %q / %q", clip(before["bigh"]), before["pop"])
	}
}

// TestAOFLogsSPopAsSRem: the log holds what SPOP removed, never SPOP itself,
// and a DEL when it took the whole set; HINCRBYFLOAT is an HSET of its result.
func TestAOFLogsSPopAsSRem(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	c := dialRaw(t, s.addr)
	for _, cmd := range [][]string{
		{"SADD", "s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, {"SPOP", "s"}, {"SPOP", "s", "3"},
		{"SPOP", "s", "0"}, {"SPOP", "nosuch"}, {"SPOP", "s", "100"}, {"HINCRBYFLOAT", "h", "f", "0.1"},
		{"HINCRBYFLOAT", "h", "f", "inf"},
	} {
		c.Do(cmd...)
	}
	var cmds []string
	rd := bufio.NewReader(strings.NewReader(s.stopAndReadLog(t)))
	for {
		v, err := parseRESP(rd)
		if err != nil {
			break
		}
		var words []string
		for _, e := range v.elems {
			words = append(words, e.line[strings.IndexByte(e.line, '|')+1:])
		}
		cmds = append(cmds, strings.Join(words, " "))
	}
	var srems []int
	for _, cmd := range cmds {
		switch {
		case strings.HasPrefix(cmd, "SPOP"):
			t.Errorf("the log holds %q", cmd)
		case strings.HasPrefix(cmd, "SREM s "):
			srems = append(srems, len(strings.Fields(cmd))-2)
		}
	}
	if len(srems) != 2 || srems[0] != 1 || srems[1] != 3 {
		t.Errorf("SREMs of 1 and 3 members expected, log: %q", cmds)
	}
	want := []string{"DEL s", "DEL h", "HSET h f 0.1"}
	for _, w := range want {
		if !containsString(cmds, w) {
			t.Errorf("log lacks %q: %q", w, cmds)
		}
	}
	if n := len(cmds); n == 0 || cmds[n-1] != "HSET h f 0.1" {
		t.Errorf("the refused HINCRBYFLOAT was logged: %q", cmds)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// zsetKeyspace reads every sorted set through the protocol: members with
// scores as text, the encoding and the expiry.
func zsetKeyspace(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	c := dialRaw(t, addr)
	m := map[string]string{}
	for _, k := range keys {
		m[k] = c.Do("TYPE", k) + c.Do("ZRANGE", k, "0", "-1", "WITHSCORES") + c.Do("PEXPIRETIME", k)
	}
	return m
}

// TestAOFZSetReplay: concurrent sorted-set writes of every kind, with
// scores that only replay exactly if written at full precision, keys that
// expire between writes, and rewrites in between; a server that loads the
// file has the same sets, scores byte for byte.
func TestAOFZSetReplay(t *testing.T) {
	s := startAOF(t, aof.FsyncEverySec)
	keys := []string{"z0", "z1", "z2", "u", "i", "d", "r", "exp", "exp2", "dst", "big"}
	writeConcurrently(t, s.addr, 4, 150, func(conn, i int) [][]string {
		z := fmt.Sprintf("z%d", (conn+i)%3)
		return [][]string{
			{"ZADD", z, fmt.Sprintf("%d.1", i), fmt.Sprintf("m%d", i%40), "1e-320", "tiny", "123456789012345678", "huge"},
			{"ZINCRBY", z, "0.1", "acc"},
			{"ZADD", z, "INCR", "1e-17", "acc"},
			{"ZREM", z, fmt.Sprintf("m%d", (i+7)%40)},
			{"ZPOPMIN", z},
			{"ZUNIONSTORE", "u", "3", "z0", "z1", "z2", "WEIGHTS", "0.3", "0.7", "1.1"},
			{"ZINTERSTORE", "i", "2", "z0", "z1", "AGGREGATE", "MAX"},
			{"ZDIFFSTORE", "d", "2", "z1", "z2"},
			{"ZRANGESTORE", "r", z, "(0", "+inf", "BYSCORE", "LIMIT", "1", "5"},
			{"ZMPOP", "2", "nosuch", z, "MAX", "COUNT", "2"},
			{"ZREMRANGEBYSCORE", z, "(100", "+inf"},
			{"ZADD", "big", fmt.Sprint(float64(conn*1000+i) / 7), fmt.Sprintf("b%d-%d", conn, i)},
		}
	})

	// A last rewrite, waited for, so the file starts with the rewritten sets
	// and the expiries below are in its tail.
	c := dialRaw(t, s.addr)
	s.rewriteAndWait(c)
	// Writes after an expiry: the replay must not add to the expired set.
	doAll(t, c, [][]string{
		{"ZADD", "exp", "1", "old"}, {"PEXPIRE", "exp", "30"}, {"ZADD", "exp2", "1", "old2"}, {"PEXPIRE", "exp2", "30"},
	})
	time.Sleep(80 * time.Millisecond)
	doAll(t, c, [][]string{
		{"ZADD", "exp", "2", "new"}, {"ZUNIONSTORE", "dst", "2", "exp2", "z0"},
	})
	c.Do("ZADD", "big", "0.30000000000000004", "after-rewrite")

	before := checkReplay(t, s, keys, zsetKeyspace)
	if !strings.Contains(before["exp"], "new") || strings.Contains(before["exp"], "old") {
		t.Errorf("exp before the restart: %q", before["exp"])
	}
	if !strings.Contains(before["big"], "0.30000000000000004") {
		t.Errorf("big lacks the member written after the rewrite")
	}
}
