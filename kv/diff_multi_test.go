package kv_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// Differential tests of transactions and pub/sub: scripts over two
// connections to each server (a watcher and a writer, a subscriber and a
// publisher), every reply compared byte for byte, in RESP2 and RESP3.

// mstep is one step of a two-connection script: conn sends args (none: it
// only reads) and reads replies replies (default 1).
type mstep struct {
	conn    int
	args    []string
	replies int
	mode    compareMode
	pause   time.Duration
}

// on is a step of connection conn; the command splits on spaces.
func on(conn int, cmd string) mstep {
	return mstep{conn: conn, args: strings.Split(cmd, " "), replies: 1}
}

// onN is a step whose command answers n replies (SUBSCRIBE a b: two).
func onN(conn, n int, cmd string) mstep {
	st := on(conn, cmd)
	st.replies = n
	return st
}

// recv reads n pushed messages on conn.
func recv(conn, n int) mstep { return mstep{conn: conn, replies: n} }

// sleep waits, for a TTL to pass.
func sleep(d time.Duration) mstep { return mstep{pause: d} }

func (st mstep) as(mode compareMode) mstep { st.mode = mode; return st }

var multiDiffCases = map[string][]mstep{
	"multi-exec-basics": {
		on(0, "MULTI"), on(0, "SET a 1"), on(0, "INCR a"), on(0, "GET a"), on(0, "EXEC"),
		on(0, "MULTI"), on(0, "MULTI"), on(0, "SET b 2"), on(0, "EXEC"), on(0, "GET b"),
		on(0, "EXEC"), on(0, "DISCARD"), on(0, "MULTI"), on(0, "SET c 3"), on(0, "DISCARD"), on(0, "GET c"),
		on(0, "MULTI"), on(0, "EXEC"), on(0, "MULTI"), on(0, "PING"), on(0, "ECHO x"), on(0, "EXEC"),
		on(0, "multi"), on(0, "set d 4"), on(0, "exec"), on(0, "MULTI x"), on(0, "EXEC x"), on(0, "DISCARD x"),
		on(0, "UNWATCH x"), on(0, "WATCH"),
	},
	"multi-errors": {
		on(0, "MULTI"), on(0, "FOO bar"), on(0, "SET a 1"), on(0, "EXEC"), on(0, "GET a"),
		on(0, "MULTI"), on(0, "GET"), on(0, "EXEC"),
		on(0, "MULTI"), on(0, "CLIENT FOO"), on(0, "EXEC"),
		on(0, "MULTI"), on(0, "CLIENT"), on(0, "SET a 1"), on(0, "EXEC"),
		on(0, "MULTI"), on(0, "SET s abc"), on(0, "INCR s"), on(0, "SET t 1"), on(0, "INCRBY t x"), on(0, "GET t"), on(0, "EXEC"),
		on(0, "MULTI"), on(0, "WATCH a"), on(0, "SET a 2"), on(0, "EXEC"), on(0, "GET a"),
		on(0, "MULTI"), on(0, "UNWATCH"), on(0, "EXEC"),
		on(0, "MULTI"), on(0, "SET x 1"), on(0, "DISCARD"), on(0, "EXEC"), on(0, "GET x"),
		on(0, "SET k v"), on(0, "CONFIG SET maxmemory 1"), on(0, "MULTI"), on(0, "GET k"), on(0, "EXEC"),
		on(0, "CONFIG SET maxmemory 0"), on(0, "MULTI"), on(0, "GET k"), on(0, "EXEC"),
	},
	"watch-other-connection": {
		on(0, "SET a 1"),
		on(0, "WATCH a"), on(1, "SET a 2"), on(0, "MULTI"), on(0, "GET a"), on(0, "EXEC"), on(0, "GET a"),
		on(0, "WATCH a"), on(0, "MULTI"), on(0, "SET a 3"), on(0, "EXEC"), on(0, "GET a"),
		on(0, "WATCH a"), on(0, "SET a 4"), on(0, "MULTI"), on(0, "GET a"), on(0, "EXEC"),
		on(0, "WATCH a"), on(0, "MULTI"), on(0, "GET a"), on(1, "INCR a"), on(0, "EXEC"),
		on(0, "WATCH missing"), on(1, "DEL missing"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(1, "SET a x NX"), on(1, "EXPIRE nothere 10"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(0, "UNWATCH"), on(1, "SET a 5"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(0, "MULTI"), on(0, "DISCARD"), on(1, "SET a 6"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a b c"), on(1, "MSET c 1 d 2"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(1, "EXPIRE a 100"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(1, "RENAME a z"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(0, "WATCH a"), on(1, "SET a 7"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(1, "MULTI"), on(1, "SET a 8"), on(1, "EXEC"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(1, "GET a"), on(1, "SET other 1"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(1, "FLUSHALL"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH gone"), on(1, "FLUSHALL"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "SET t v PX 100"), on(0, "WATCH t"), sleep(250 * time.Millisecond), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "SET u v PX 100000"), on(0, "WATCH u"), on(0, "MULTI"), on(0, "PING"), on(0, "EXEC"),
		on(0, "WATCH a"), on(1, "INCR a"), on(0, "MULTI"), on(0, "FOO"), on(0, "EXEC"),
	},
	"pubsub-messages": {
		onN(0, 2, "SUBSCRIBE a b"), on(1, "PUBLISH a hello"), recv(0, 1), on(1, "PUBLISH b world"), recv(0, 1),
		on(1, "PUBLISH c nobody"), onN(0, 1, "PSUBSCRIBE h*"), on(1, "PUBLISH hx m1"), recv(0, 1),
		onN(0, 1, "SUBSCRIBE hx"), on(1, "PUBLISH hx m2"), recv(0, 2).as(sortedLines),
		on(1, "PUBSUB NUMSUB a b hx c"), on(1, "PUBSUB NUMPAT"), on(1, "PUBSUB CHANNELS").as(sortedBulk),
		on(1, "PUBSUB CHANNELS h*"), on(1, "PUBSUB CHANNELS nomatch*"), on(1, "PUBSUB NUMSUB"),
		on(0, "UNSUBSCRIBE a"), on(0, "UNSUBSCRIBE a"), on(1, "PUBLISH a gone"), on(0, "UNSUBSCRIBE hx"),
		on(0, "PUNSUBSCRIBE"), on(0, "PUNSUBSCRIBE"), on(0, "UNSUBSCRIBE"), on(0, "UNSUBSCRIBE"),
		on(1, "PUBSUB NUMPAT"), on(1, "PUBSUB CHANNELS"), onN(0, 2, "PSUBSCRIBE x* x*"), on(1, "PUBLISH xy 1"), recv(0, 1),
		on(0, "PUNSUBSCRIBE x* y*"), on(1, "PUBLISH xy 2"), on(0, "PING"),
		onN(0, 1, "SUBSCRIBE self"), onN(0, 2, "PUBLISH self me"), on(0, "UNSUBSCRIBE self"),
	},
	"pubsub-context": {
		onN(0, 1, "SUBSCRIBE a"), on(0, "PING"), on(0, "PING x"), on(0, "PING x y"), on(0, "GET a"),
		on(0, "CLIENT ID").as(maskInts), on(0, "MULTI"), on(0, "DISCARD"), on(0, "SUBSCRIBE"), on(0, "PUBLISH other x"), on(0, "UNSUBSCRIBE b"),
		onN(0, 1, "SSUBSCRIBE s1"), on(1, "SPUBLISH s1 hi"), recv(0, 1), on(1, "PUBLISH s1 hi"),
		on(1, "PUBSUB SHARDCHANNELS"), on(1, "PUBSUB SHARDNUMSUB s1 s2"), on(0, "SUNSUBSCRIBE s1"),
		on(0, "SUNSUBSCRIBE"), on(0, "UNSUBSCRIBE"), on(0, "GET a"), on(0, "PING"),
		onN(0, 1, "SUBSCRIBE a"), on(0, "RESET"), on(0, "GET a"), on(1, "PUBSUB NUMSUB a"), on(1, "PUBLISH a x"),
		on(0, "MULTI"), on(0, "SUBSCRIBE z"), on(0, "EXEC"), on(1, "PUBLISH z m"), recv(0, 1), on(0, "UNSUBSCRIBE z"),
		on(0, "MULTI"), on(0, "SET q 1"), on(0, "RESET"), on(0, "EXEC"), on(0, "GET q"),
	},
	"pubsub-errors": {
		on(0, "SUBSCRIBE"), on(0, "PSUBSCRIBE"), on(0, "SSUBSCRIBE"), on(0, "PUBLISH a"), on(0, "PUBLISH a b c"),
		on(0, "SPUBLISH a"), on(0, "PUBSUB"), on(0, "PUBSUB FOO"), on(0, "PUBSUB CHANNELS a b"), on(0, "PUBSUB NUMPAT x"),
		on(0, "PUBSUB SHARDCHANNELS a b"), on(0, "PUBSUB HELP"), on(0, "PUBSUB HELP x"), on(0, "pubsub numsub A"),
		on(0, "UNSUBSCRIBE"), on(0, "PUNSUBSCRIBE a"), on(0, "SUNSUBSCRIBE"),
	},
}

// sortedLines compares two replies as multisets of lines (two messages in
// either order).
const sortedLines compareMode = 100

func TestDifferentialMultiPubSub(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	for _, proto := range []int{2, 3} {
		for name, steps := range multiDiffCases {
			t.Run("resp"+strconv.Itoa(proto)+"/"+name, func(t *testing.T) {
				runMultiDiff(t, redisAddr, shoal.addr, proto, steps)
			})
		}
	}
}

func runMultiDiff(t *testing.T, redisAddr, shoalAddr string, proto int, steps []mstep) {
	t.Helper()
	var ref, got [2]*rawConn
	for i := range ref {
		ref[i], got[i] = dialRaw(t, redisAddr), dialRaw(t, shoalAddr)
		for _, conn := range []*rawConn{ref[i], got[i]} {
			if i == 0 {
				if r := conn.Do("FLUSHALL"); r != "+OK\r\n" {
					t.Fatalf("FLUSHALL: %q", r)
				}
			}
			if proto == 3 {
				conn.Do("HELLO", "3")
			}
		}
	}
	for i, st := range steps {
		if st.pause > 0 {
			time.Sleep(st.pause)
			continue
		}
		want := exchange(t, ref[st.conn], st)
		have := exchange(t, got[st.conn], st)
		if !equalMultiReplies(st.mode, want, have) {
			t.Errorf("step %d conn %d %q:\nredis: %q\nshoal: %q", i, st.conn, st.args, want, have)
		}
	}
}

// exchange sends st's command, if any, and returns its replies joined.
func exchange(t *testing.T, c *rawConn, st mstep) string {
	t.Helper()
	if st.args != nil {
		c.Send(encodeCommand(st.args))
	}
	var all string
	for i := 0; i < st.replies; i++ {
		r, err := c.Read()
		if err != nil {
			t.Fatalf("%q: reading reply %d: %v", st.args, i+1, err)
		}
		all += r
	}
	return all
}

func equalMultiReplies(mode compareMode, want, have string) bool {
	if mode == sortedLines {
		a, b := strings.Split(want, "\r\n"), strings.Split(have, "\r\n")
		sortStrings(a)
		sortStrings(b)
		return strings.Join(a, "|") == strings.Join(b, "|")
	}
	return equalReplies(mode, want, have)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
