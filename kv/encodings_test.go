package kv_test

import (
	"reflect"
	"strings"
	"testing"
)

// TestEncodingThresholdsMatchRedis sets every encoding threshold through
// CONFIG SET (by the old ziplist names too) on redis-server and on Shoal,
// and compares CONFIG GET and the OBJECT ENCODING of collections on each
// side of each threshold.
func TestEncodingThresholdsMatchRedis(t *testing.T) {
	redisAddr := startRedis(t)
	srv := startLoops(t, 2)
	steps := [][]string{
		{"CONFIG", "SET", "hash-max-ziplist-entries", "4", "hash-max-listpack-value", "8", "set-max-intset-entries", "3",
			"zset-max-listpack-entries", "2", "zset-max-ziplist-value", "5", "list-max-ziplist-size", "16"},
		{"CONFIG", "GET", "hash-max-listpack-entries"}, {"CONFIG", "GET", "hash-max-ziplist-value"},
		{"CONFIG", "GET", "set-max-intset-entries"}, {"CONFIG", "GET", "zset-max-ziplist-entries"},
		{"CONFIG", "GET", "zset-max-listpack-value"}, {"CONFIG", "GET", "list-max-listpack-size"},
		{"CONFIG", "GET", "list-compress-depth"},
		{"HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"}, {"OBJECT", "ENCODING", "h"},
		{"HSET", "h", "e", "5"}, {"OBJECT", "ENCODING", "h"},
		{"HSET", "h2", "f", "12345678"}, {"OBJECT", "ENCODING", "h2"},
		{"HSET", "h2", "g", "123456789"}, {"OBJECT", "ENCODING", "h2"},
		{"SADD", "s", "1", "2", "3"}, {"OBJECT", "ENCODING", "s"}, {"SADD", "s", "4"}, {"OBJECT", "ENCODING", "s"},
		{"ZADD", "z", "1", "a", "2", "b"}, {"OBJECT", "ENCODING", "z"}, {"ZADD", "z", "3", "c"}, {"OBJECT", "ENCODING", "z"},
		{"ZADD", "z2", "1", "abcde"}, {"OBJECT", "ENCODING", "z2"}, {"ZADD", "z3", "1", "abcdef"}, {"OBJECT", "ENCODING", "z3"},
		{"ZUNIONSTORE", "u", "1", "z2"}, {"OBJECT", "ENCODING", "u"},
		{"CONFIG", "SET", "zset-max-listpack-entries", "abc"},
		{"CONFIG", "SET", "set-max-intset-entries", "-1"},
		{"CONFIG", "SET", "hash-max-listpack-entries", "512", "hash-max-listpack-value", "64", "set-max-intset-entries", "512",
			"zset-max-listpack-entries", "128", "zset-max-listpack-value", "64", "list-max-listpack-size", "-2"},
	}
	run := func(addr string) []string {
		c := dialRaw(t, addr)
		c.Do("FLUSHALL")
		var got []string
		for _, s := range steps {
			got = append(got, c.Do(s...))
		}
		return got
	}
	want, have := run(redisAddr), run(srv.addr)
	if !reflect.DeepEqual(have, want) {
		for i := range want {
			if i < len(have) && have[i] != want[i] {
				t.Errorf("%q:\nredis: %q\nshoal: %q", steps[i], want[i], have[i])
			}
		}
	}

	// What Shoal refuses that Redis takes, each with the reason.
	c := dialRaw(t, srv.addr)
	for _, bad := range [][]string{
		{"hash-max-listpack-value", "256", "between 0 and 255"},
		{"zset-max-ziplist-value", "1000", "between 0 and 255"},
		{"list-max-listpack-size", "0", "0 is no size"},
		{"list-compress-depth", "1", "does not compress list nodes"},
	} {
		r := c.Do("CONFIG", "SET", bad[0], bad[1])
		if !strings.HasPrefix(r, "-ERR CONFIG SET failed") || !strings.Contains(r, bad[2]) {
			t.Errorf("CONFIG SET %s %s: %q", bad[0], bad[1], r)
		}
	}
}
