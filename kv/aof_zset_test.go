package kv_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/aof"
)

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
