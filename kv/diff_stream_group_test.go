package kv_test

import (
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// Consumer groups against redis-server 7.0, RESP2 and RESP3: XGROUP, XACK,
// XPENDING, XREADGROUP. Replies that hold times (XPENDING's idle
// milliseconds) are compared with those masked, in TestStreamGroupsTimed.

func init() {
	diffCases["stream-xgroup"] = []step{
		c("XGROUP CREATE s g $"), c("XGROUP CREATE s g $ MKSTREAM"), c("TYPE s"), c("XLEN s"), c("XGROUP CREATE s g $ MKSTREAM"),
		c("XGROUP CREATE s g2 0 ENTRIESREAD 5"), c("XGROUP CREATE s g3 0 ENTRIESREAD -2"), c("XGROUP CREATE s g3 0 ENTRIESREAD -1"),
		c("XGROUP CREATE s g4 0 ENTRIESREAD x"), c("XGROUP CREATE s g4 0 FOO"), c("XGROUP CREATE s g4 bad"), c("XGROUP CREATE s g4 -"),
		c("XGROUP CREATE s g4 +"), c("XGROUP CREATE s g4 5"), c("XGROUP SETID s g4 0"), c("XGROUP SETID s g -"), c("XGROUP SETID s g +"),
		c("XGROUP SETID s g + ENTRIESREAD 3"), c("XGROUP SETID s g 0 MKSTREAM"), c("XGROUP SETID s g 0 ENTRIESREAD"),
		c("XGROUP SETID s g 0 ENTRIESREAD -5"), c("XGROUP SETID s g bad"), c("XGROUP SETID s nog 0"), c("XGROUP SETID nokey g 0"),
		c("XGROUP CREATECONSUMER s g c1"), c("XGROUP CREATECONSUMER s g c1"), c("XGROUP CREATECONSUMER s nog c1"),
		c("XGROUP CREATECONSUMER nokey g c1"), c("XGROUP DELCONSUMER s g c1"), c("XGROUP DELCONSUMER s g c1"),
		c("XGROUP DELCONSUMER s nog c1"), c("XGROUP DESTROY s g2"), c("XGROUP DESTROY s g2"), c("XGROUP DESTROY nokey g2"),
		c("XGROUP HELP"), c("XGROUP HELP x"), c("XGROUP FOO"), c("XGROUP FOO s g"), c("XGROUP CREATE s"), c("XGROUP DESTROY s g x"),
		c("XGROUP CREATE s g $ MKSTREAM ENTRIESREAD 1 MKSTREAM"), c("XGROUP CREATE nokey2 g 0 MKSTREAM ENTRIESREAD 1 MKSTREAM"),
		c("EXISTS nokey2"), c("XGROUP CREATE nokey3 g bad MKSTREAM"), c("EXISTS nokey3"), c("SET str x"), c("XGROUP CREATE str g $"),
		c("XGROUP CREATE str g $ MKSTREAM"), c("XGROUP"), s(exact, "XGROUP", "CREATE", "s", "bin\r\nname", "0"),
		s(exact, "XGROUP", "SETID", "s", "no\r\npe", "0"), s(exact, "XGROUP", "CREATECONSUMER", "s", "bin\r\nname", "c\x00x"),
	}
	diffCases["stream-xreadgroup"] = []step{
		c("XADD s 1-1 a 1"), c("XADD s 2-1 b 2"), c("XADD s 3-1 c 3"), c("XGROUP CREATE s r 0"),
		c("XREADGROUP GROUP r alice STREAMS s >"), c("XREADGROUP GROUP r alice STREAMS s 0"), c("XREADGROUP GROUP r alice STREAMS s 1"),
		c("XREADGROUP GROUP r alice COUNT 1 STREAMS s 0"), c("XREADGROUP GROUP r bob STREAMS s 0"),
		c("XREADGROUP GROUP r bob COUNT 1 STREAMS s >"), c("XPENDING s r"), c("XREADGROUP GROUP r alice STREAMS s $"),
		c("XREADGROUP GROUP nog alice STREAMS s >"), c("XREADGROUP GROUP r alice STREAMS s nokey > >"),
		c("SET str x"), c("XREADGROUP GROUP r alice STREAMS s str > >"), c("XREADGROUP GROUP r alice STREAMS s bad"),
		c("XREADGROUP GROUP r alice STREAMS s -"), c("XREADGROUP GROUP r alice STREAMS s"), c("XREADGROUP GROUP r alice COUNT 1 STREAMS s"),
		c("XREADGROUP GROUP r alice STREAMS s 18446744073709551615-18446744073709551615"), c("XDEL s 2-1"),
		c("XREADGROUP GROUP r alice STREAMS s 0"), c("XREADGROUP GROUP r alice NOACK STREAMS s >"), c("XADD s 4-1 d 4"),
		c("XREADGROUP GROUP r carol NOACK STREAMS s >"), c("XPENDING s r"), c("XREADGROUP GROUP r alice BLOCK 10 STREAMS s >"),
		c("XREADGROUP GROUP r alice STREAMS s >"), c("XREAD GROUP r alice STREAMS s >"), c("XREADGROUP STREAMS s >"),
		c("XREADGROUP GROUP r STREAMS s >"), c("XREADGROUP GROUP r alice COUNT x STREAMS s >"),
		c("XREADGROUP GROUP r alice BLOCK -1 STREAMS s >"), c("XGROUP SETID s r 0"), c("XREADGROUP GROUP r dave COUNT 2 STREAMS s >"),
		c("XPENDING s r"), c("XGROUP DELCONSUMER s r dave"), c("XPENDING s r"), c("XGROUP CREATE t r $ MKSTREAM"),
		c("XREADGROUP GROUP r alice STREAMS s t > >"), c("XADD t 1-1 x y"), c("XREADGROUP GROUP r alice STREAMS t s > 0"),
		c("MULTI"), c("XREADGROUP GROUP r alice BLOCK 0 STREAMS s >"), c("EXEC"), c("XADD s 5-1 e 5"),
		c("MULTI"), c("XREADGROUP GROUP r erin BLOCK 0 STREAMS s >"), c("EXEC"), c("XPENDING s r"),
		c("XREADGROUP GROUP r alice COUNT 0 STREAMS s 0"), c("XREADGROUP GROUP r alice COUNT -3 STREAMS s 0"),
	}
	diffCases["stream-xack-xpending"] = []step{
		c("XADD s 1-1 a 1"), c("XADD s 2-1 b 2"), c("XADD s 3-1 c 3"), c("XGROUP CREATE s r 0"),
		c("XREADGROUP GROUP r alice COUNT 2 STREAMS s >"), c("XREADGROUP GROUP r bob STREAMS s >"), c("XPENDING s r"),
		c("XPENDING s nog"), c("XPENDING nokey r"), c("XPENDING s r - + 0"), c("XPENDING s r - + -1"), c("XPENDING s r IDLE x - + 10"),
		c("XPENDING s r IDLE 10 - +"), c("XPENDING s r - + x"), c("XPENDING s r x + 5"), c("XPENDING s r - x 5"),
		c("XPENDING s r - + 5 nobody"), c("XPENDING s r IDLE 999999 - + 10"), c("XPENDING s r - +"), c("XPENDING s r - + 1 a b c"),
		c("XPENDING s r (18446744073709551615-18446744073709551615 + 5"), c("XPENDING s r - (0-0 5"), c("XPENDING s r 5 1 5"),
		c("XPENDING s"), c("XACK s r 1-1 9-9"), c("XACK s r 1-1"), c("XACK s r bad"), c("XACK s r 2-1 bad"), c("XPENDING s r"),
		c("XACK s nog bad"), c("XACK str r 1-1"), c("SET str x"), c("XACK str r 1-1"), c("XPENDING str r"), c("XACK nokey r 1-1"),
		c("XACK s r 2-1 3-1 2-1"), c("XPENDING s r"), c("XACK s r"), c("XACK s r -"), c("XACK s r 0"),
	}
	diffCases["stream-xclaim"] = []step{
		c("XADD s 1-1 a 1"), c("XADD s 2-1 b 2"), c("XADD s 3-1 c 3"), c("XADD s 4-1 d 4"), c("XGROUP CREATE s g 0"),
		c("XREADGROUP GROUP g alice COUNT 3 STREAMS s >"), c("XCLAIM s g bob 0 1-1"), c("XCLAIM s g bob 0 1-1 JUSTID"),
		c("XCLAIM s g bob 0 1-1 2-1 9-9 JUSTID RETRYCOUNT 7"), c("XCLAIM s g bob 100000 3-1"), c("XCLAIM s g carol 0 4-1"),
		c("XCLAIM s g carol 0 4-1 FORCE"), c("XCLAIM s g carol 0 4-1 FORCE JUSTID"), c("XCLAIM s g carol 0 1-1 LASTID 10-0 JUSTID"),
		c("XINFO GROUPS s"), c("XCLAIM s g carol 0 1-1 LASTID bad"), c("XCLAIM s g carol x 1-1"), c("XCLAIM s g carol 0 1-1 IDLE x"),
		c("XCLAIM s g carol 0 1-1 TIME x"), c("XCLAIM s g carol 0 1-1 RETRYCOUNT x"), c("XCLAIM s g carol 0 1-1 FOO"),
		c("XCLAIM s g carol 0 1-1 IDLE"), c("XCLAIM s g carol 0 FORCE"), c("XCLAIM s nog carol 0 1-1"), c("XCLAIM nokey g carol 0 1-1"),
		c("XCLAIM s g carol 0 bad"), c("XCLAIM s g carol -5 1-1 JUSTID"), c("XCLAIM s g carol 0 1-1 IDLE 999999999 JUSTID"),
		c("XPENDING s g IDLE 999999000 - + 10", maskInts), c("XCLAIM s g carol 0 1-1 TIME 99999999999999 JUSTID"), c("XPENDING s g"),
		c("XDEL s 2-1"), c("XCLAIM s g dave 0 2-1 3-1 JUSTID"), c("XPENDING s g"), c("XADD s 5-1 e 5"), c("XADD s 6-1 f 6"),
		c("XREADGROUP GROUP g erin STREAMS s >"), c("XDEL s 5-1"), c("XAUTOCLAIM s g frank 0 0"), c("XAUTOCLAIM s g frank 0 0 COUNT 1"),
		c("XAUTOCLAIM s g frank 0 0 COUNT 1 JUSTID"), c("XAUTOCLAIM s g frank 0 (3-1 COUNT 2"), c("XAUTOCLAIM s g frank 0 - COUNT 0"),
		c("XAUTOCLAIM s g frank 0 - COUNT x"), c("XAUTOCLAIM s g frank 0 - COUNT 576460752303423487"),
		c("XAUTOCLAIM s g frank 0 - COUNT 576460752303423488"), c("XAUTOCLAIM s g frank 0 - COUNT 10000000000000"),
		c("XAUTOCLAIM s g frank 0 - FOO"), c("XAUTOCLAIM s g frank x -"), c("XAUTOCLAIM s g frank 0 bad"),
		c("XAUTOCLAIM s g frank 0 (18446744073709551615-18446744073709551615"), c("XAUTOCLAIM s nog frank 0 -"),
		c("XAUTOCLAIM nokey g frank 0 - COUNT x"), c("XAUTOCLAIM s g frank 999999 -"), c("XAUTOCLAIM s g gina 0 + JUSTID"),
		c("XPENDING s g"), c("XDEL s 1-1 3-1 4-1 6-1"), c("XAUTOCLAIM s g hank 0 - COUNT 2"), c("XAUTOCLAIM s g hank 0 - COUNT 2"),
		c("XPENDING s g"), c("XREADGROUP GROUP g bob STREAMS s 0"), c("SET str x"), c("XCLAIM str g c 0 1-1"),
		c("XAUTOCLAIM str g c 0 -"), c("XINFO CONSUMERS s g", maskDigits),
	}
	diffCases["stream-xinfo"] = []step{
		c("XINFO STREAM s"), c("XINFO GROUPS s"), c("XINFO CONSUMERS s g"), c("XGROUP CREATE s g $ MKSTREAM"), c("XINFO STREAM s"),
		c("XINFO STREAM s FULL"), c("XINFO GROUPS s"), c("XADD s 1-1 a 1"), c("XADD s 2-1 b 2"), c("XADD s 3-1 c 3"),
		c("XINFO STREAM s"), c("XINFO GROUPS s"), c("XGROUP CREATE s g2 0"), c("XINFO GROUPS s"),
		c("XREADGROUP GROUP g2 alice COUNT 1 STREAMS s >"), c("XINFO GROUPS s"), c("XDEL s 2-1"), c("XINFO GROUPS s"),
		c("XREADGROUP GROUP g2 alice COUNT 1 STREAMS s >"), c("XINFO GROUPS s"), c("XREADGROUP GROUP g2 bob NOACK STREAMS s >"),
		c("XINFO GROUPS s"), c("XINFO STREAM s"), c("XINFO STREAM s FULL COUNT x"), c("XINFO STREAM s FULL COUNT"),
		c("XINFO STREAM s FOO"), c("XINFO STREAM s FULL FOO 1"), c("XINFO STREAM s FULL COUNT 1 x"), c("XINFO STREAM nokey"),
		c("XINFO STREAM nokey FOO"), c("XINFO CONSUMERS s nog"), c("XINFO CONSUMERS nokey g"), c("XINFO HELP"), c("XINFO HELP x"),
		c("XINFO FOO s"), c("XINFO"), c("SET str x"), c("XINFO STREAM str"), c("XINFO GROUPS str"), c("XINFO CONSUMERS str g"),
		c("XGROUP SETID s g 0"), c("XINFO GROUPS s"), c("XGROUP SETID s g 1-1 ENTRIESREAD 1"), c("XINFO GROUPS s"),
		c("XGROUP SETID s g 9-9"), c("XINFO GROUPS s"), c("XTRIM s MAXLEN 0"), c("XINFO GROUPS s"), c("XINFO STREAM s"),
		c("XINFO STREAM s FULL", maskDigits), c("XSETID s 5-5 ENTRIESADDED 10 MAXDELETEDID 4-4"), c("XINFO GROUPS s"), c("XINFO STREAM s"),
	}
	diffCases["stream-xinfo-radix"] = radixSteps()
	notifyCases["stream-groups"] = []step{
		c("XGROUP CREATE s g $ MKSTREAM"), c("XGROUP CREATE s g $"), c("XADD s 1-1 f v"), c("XGROUP CREATECONSUMER s g c"),
		c("XGROUP CREATECONSUMER s g c"), c("XREADGROUP GROUP g d STREAMS s >"), c("XGROUP SETID s g 0"), c("XACK s g 1-1"),
		c("XGROUP DELCONSUMER s g d"), c("XGROUP DELCONSUMER s g d"), c("XGROUP DESTROY s g"), c("XGROUP DESTROY s g"),
	}
}

// radixSteps grows a stream over many nodes whose master IDs part at
// different bytes, and deletes and trims some, checking XINFO STREAM's
// radix-tree-keys and radix-tree-nodes after each step.
func radixSteps() []step {
	steps := []step{c("CONFIG SET stream-node-max-entries 2")}
	ids := []string{"1-1", "1-2", "1-3", "2-1", "256-0", "256-1", "257-0", "65536-0", "65537-5", "4294967296-0",
		"4294967296-1", "4294967297-0", "18446744073709551614-0", "18446744073709551614-1", "18446744073709551615-0"}
	for _, id := range ids {
		steps = append(steps, s(exact, "XADD", "s", id, "f", "v"), c("XINFO STREAM s"))
	}
	steps = append(steps, c("XDEL s 1-1 1-2"), c("XINFO STREAM s"), c("XDEL s 256-0 256-1"), c("XINFO STREAM s"),
		c("XTRIM s MAXLEN 5"), c("XINFO STREAM s"), c("XTRIM s MAXLEN 1"), c("XINFO STREAM s"), c("XTRIM s MAXLEN 0"),
		c("XINFO STREAM s"), c("CONFIG SET stream-node-max-entries 100"))
	return steps
}

// pendingIdle matches the idle milliseconds of an extended XPENDING
// entry: the integer after its ID and consumer.
var pendingIdle = regexp.MustCompile(`(\*4\r\n\$\d+\r\n[^\r]*\r\n\$\d+\r\n[^\r]*\r\n):\d+\r\n`)

var (
	unixMillis = regexp.MustCompile(`:\d{12,}\r\n`)
	idleField  = regexp.MustCompile(`(\$4\r\nidle\r\n):\d+\r\n`)
)

// maskTimes masks XPENDING's idle times, XINFO CONSUMERS' idle and the
// unix milliseconds of XINFO STREAM FULL (delivery and seen times).
func maskTimes(reply string) string {
	reply = pendingIdle.ReplaceAllString(reply, "${1}:IDLE\r\n")
	reply = idleField.ReplaceAllString(reply, "${1}:IDLE\r\n")
	return unixMillis.ReplaceAllString(reply, ":T\r\n")
}

// TestStreamGroupsTimed compares the replies that hold idle times with
// those times masked: the delivery counts, owners and order are exact.
func TestStreamGroupsTimed(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	steps := [][]string{
		{"XADD", "s", "1-1", "a", "1"}, {"XADD", "s", "2-1", "b", "2"}, {"XADD", "s", "3-1", "c", "3"},
		{"XGROUP", "CREATE", "s", "r", "0"}, {"XREADGROUP", "GROUP", "r", "alice", "COUNT", "2", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "r", "bob", "STREAMS", "s", ">"}, {"XPENDING", "s", "r", "-", "+", "10"},
		{"XPENDING", "s", "r", "-", "+", "10", "bob"}, {"XPENDING", "s", "r", "(1-1", "+", "1", "alice"},
		{"XPENDING", "s", "r", "IDLE", "0", "-", "+", "10"}, {"XPENDING", "s", "r", "IDLE", "-5", "-", "+", "10"},
		{"XREADGROUP", "GROUP", "r", "alice", "STREAMS", "s", "0"}, {"XREADGROUP", "GROUP", "r", "alice", "STREAMS", "s", "0"},
		{"XPENDING", "s", "r", "-", "+", "10"}, {"XGROUP", "SETID", "s", "r", "0"},
		{"XREADGROUP", "GROUP", "r", "carol", "COUNT", "2", "STREAMS", "s", ">"}, {"XPENDING", "s", "r", "-", "+", "10"},
		{"XPENDING", "s", "r", "-", "(3-1", "10", "alice"}, {"XDEL", "s", "1-1"},
		{"XREADGROUP", "GROUP", "r", "carol", "STREAMS", "s", "0"}, {"XPENDING", "s", "r", "-", "+", "10"},
		{"XINFO", "CONSUMERS", "s", "r"}, {"XINFO", "STREAM", "s", "FULL"}, {"XINFO", "STREAM", "s", "FULL", "COUNT", "1"},
		{"XINFO", "STREAM", "s", "FULL", "COUNT", "0"}, {"XINFO", "STREAM", "s", "FULL", "COUNT", "-1"},
		{"XCLAIM", "s", "r", "zed", "0", "3-1", "IDLE", "500000"}, {"XPENDING", "s", "r", "IDLE", "400000", "-", "+", "10"},
		{"XAUTOCLAIM", "s", "r", "yan", "400000", "-"}, {"XINFO", "STREAM", "s", "FULL"},
		// FORCE makes a pending entry delivered once, as streamCreateNACK.
		{"XADD", "s", "9-1", "x", "y"}, {"XADD", "s", "9-2", "x", "y"}, {"XCLAIM", "s", "r", "zz", "0", "9-1", "FORCE", "JUSTID"},
		{"XCLAIM", "s", "r", "zz", "0", "9-2", "FORCE"}, {"XPENDING", "s", "r", "-", "+", "10", "zz"},
	}
	for _, proto := range []int{2, 3} {
		ref, got := dialFresh(t, redisAddr, proto), dialFresh(t, shoal.addr, proto)
		for i, st := range steps {
			want, have := ref.Do(st...), got.Do(st...)
			if maskTimes(want) != maskTimes(have) {
				t.Errorf("resp%d step %d %q:\nredis: %q\nshoal: %q", proto, i, st, want, have)
			}
		}
	}
}

// TestXReadGroupBlockWakeups parks an XREADGROUP BLOCK 0 on each server
// and wakes it as Redis 7.0 does: an XADD serves it (and makes the entry
// pending), XGROUP DESTROY answers -NOGROUP, DEL, a SET over the key and
// FLUSHALL answer -UNBLOCKED, and XGROUP SETID alone does not wake it (the
// next XADD serves both entries). Each reply, and the PEL after, must be
// redis-server's.
func TestXReadGroupBlockWakeups(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	wakes := [][][]string{
		{{"XADD", "s", "2-1", "a", "b"}},
		{{"XGROUP", "DESTROY", "s", "g"}},
		{{"DEL", "s"}},
		{{"SET", "s", "x"}},
		{{"FLUSHALL"}},
		{{"XGROUP", "SETID", "s", "g", "0"}, {"XADD", "s", "2-1", "a", "b"}},
		{{"XGROUP", "CREATECONSUMER", "s", "g", "other"}, {"XADD", "s", "2-1", "a", "b"}},
	}
	run := func(addr string, proto int, wake [][]string) []string {
		w := dialFresh(t, addr, 2)
		w.Do("XADD", "s", "1-1", "f", "v")
		w.Do("XGROUP", "CREATE", "s", "g", "$")
		b := dialRaw(t, addr) // not dialFresh: FLUSHALL would drop the stream
		if proto == 3 {
			b.Do("HELLO", "3")
		}
		b.Send(encodeCommand([]string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"}))
		waitForBlocked(t, w, 1)
		var out []string
		for _, cmd := range wake {
			out = append(out, w.Do(cmd...))
		}
		out = append(out, mustRead(t, b), w.Do("XPENDING", "s", "g"), b.Do("PING"))
		waitForBlocked(t, w, 0)
		return out
	}
	for _, proto := range []int{2, 3} {
		for _, wake := range wakes {
			sameReplies(t, run(redisAddr, proto, wake), run(shoal.addr, proto, wake))
		}
	}
}

// waitForBlocked polls INFO clients until blocked_clients is n.
func waitForBlocked(t *testing.T, c *rawConn, n int) {
	t.Helper()
	want := regexp.MustCompile(`blocked_clients:` + strconv.Itoa(n) + `\r`)
	deadline := time.Now().Add(20 * time.Second)
	for !want.MatchString(c.Do("INFO", "clients")) {
		if time.Now().After(deadline) {
			t.Fatalf("blocked_clients never reached %d", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStreamGroupRandomOpsAgainstRedis sends the same few thousand random
// consumer-group commands to redis-server and to Shoal, over two streams
// with entries added, deleted and trimmed under the groups, and compares
// every reply with the times masked (maskTimes): PELs, owners, delivery
// counts, last IDs, entries-read and lag must agree after any sequence.
func TestStreamGroupRandomOpsAgainstRedis(t *testing.T) {
	for seed := int64(126); seed < 132; seed += 2 {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) { streamGroupRandomOps(t, seed) })
	}
}

func streamGroupRandomOps(t *testing.T, seed int64) {
	randomOpsAgainstRedis(t, seed, func(t *testing.T, _ int, ref, got *rawConn, rng *rand.Rand) {
		keys := []string{"s1", "s2"}
		groups := []string{"g1", "g2", "g3"}
		consumers := []string{"c0", "c1", "c2", "c3"}
		next := map[string]int{}
		pick := func(xs []string) string { return xs[rng.Intn(len(xs))] }
		id := func(k string) string { return fmt.Sprintf("%d-%d", rng.Intn(next[k]+2), rng.Intn(2)) }
		for i := 0; i < 3000; i++ {
			k, g, c := pick(keys), pick(groups), pick(consumers)
			var args []string
			switch op := rng.Intn(24); {
			case op < 5:
				next[k]++
				args = []string{"XADD", k, fmt.Sprintf("%d-%d", next[k], rng.Intn(2)), "f", strconv.Itoa(i)}
			case op == 5:
				args = []string{"XGROUP", "CREATE", k, g, []string{"$", "0", id(k)}[rng.Intn(3)]}
				if rng.Intn(2) == 0 {
					args = append(args, "MKSTREAM")
				}
				if rng.Intn(3) == 0 {
					args = append(args, "ENTRIESREAD", strconv.Itoa(rng.Intn(next[k]+2)))
				}
			case op == 6:
				args = []string{"XGROUP", "SETID", k, g, []string{"$", "0", id(k)}[rng.Intn(3)]}
			case op == 7:
				args = []string{"XGROUP", []string{"CREATECONSUMER", "DELCONSUMER"}[rng.Intn(2)], k, g, c}
				if rng.Intn(8) == 0 {
					args = []string{"XGROUP", "DESTROY", k, g}
				}
			case op < 12:
				args = []string{"XREADGROUP", "GROUP", g, c, "COUNT", strconv.Itoa(rng.Intn(4)), "STREAMS", k, ">"}
				if rng.Intn(4) == 0 {
					args = slices.Insert(args, 6, "NOACK")
				}
			case op == 12:
				args = []string{"XREADGROUP", "GROUP", g, c, "COUNT", strconv.Itoa(rng.Intn(4)), "STREAMS", k, id(k)}
			case op < 15:
				args = []string{"XACK", k, g, id(k), id(k)}
			case op == 15:
				args = []string{"XCLAIM", k, g, c, "0", id(k), id(k)}
				switch rng.Intn(4) {
				case 0:
					args = append(args, "JUSTID")
				case 1:
					args = append(args, "FORCE", "JUSTID")
				case 2:
					args = append(args, "RETRYCOUNT", strconv.Itoa(rng.Intn(5)), "LASTID", id(k))
				}
			case op == 16:
				args = []string{"XAUTOCLAIM", k, g, c, "0", id(k), "COUNT", strconv.Itoa(rng.Intn(4) + 1)}
				if rng.Intn(2) == 0 {
					args = append(args, "JUSTID")
				}
			case op == 17:
				args = []string{"XDEL", k, id(k), id(k)}
			case op == 18:
				args = []string{"XTRIM", k, "MAXLEN", strconv.Itoa(rng.Intn(20))}
			case op == 19:
				args = []string{"XPENDING", k, g}
			case op == 20:
				args = []string{"XPENDING", k, g, "-", "+", strconv.Itoa(rng.Intn(10))}
				if rng.Intn(2) == 0 {
					args = append(args, c)
				}
			case op == 21:
				args = []string{"XINFO", "GROUPS", k}
			case op == 22:
				args = []string{"XINFO", "CONSUMERS", k, g}
			default:
				args = []string{"XINFO", "STREAM", k, "FULL"}
			}
			want, have := ref.Do(args...), got.Do(args...)
			if w, h := maskTimes(want), maskTimes(have); w != h {
				at := firstDifference(w, h)
				t.Fatalf("op %d %q differs at byte %d:\nredis: %q\nshoal: %q", i, args, at, around(w, at), around(h, at))
			}
		}
	})
}
