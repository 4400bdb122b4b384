package kv_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// Streams against redis-server 7.0, RESP2 and RESP3. IDs are given
// explicitly (or as <ms>-*) so that the replies are the same on both
// servers; XADD * is compared with its digits masked.

func init() {
	diffCases["stream-xadd"] = []step{
		c("XADD s 1-1 a 1 b 2"), c("XADD s 1-* a 3 b 4"), c("XADD s 1-* c 5"), c("XADD s 2-* c 6"), c("XADD s 2 c 7"),
		c("XADD s 0-0 a b"), c("XADD s 0 a b"), c("XADD s 0-* a b"), c("XADD s 1-1 a b"), c("XADD s 3-0 a"),
		c("XADD s 3-0 a b c"), c("XADD s"), c("XADD s *"), c("XADD s * a"), c("XADD s * a b", maskDigits),
		c("XADD s NOMKSTREAM 10-1 f v"), c("XADD nokey NOMKSTREAM 10-1 f v"), c("EXISTS nokey"),
		c("XADD s2 MAXLEN 2 1-1 f v"), c("XADD s2 MAXLEN = 2 2-1 f v"), c("XADD s2 MAXLEN ~ 2 3-1 f v"), c("XLEN s2"),
		c("XADD s2 MAXLEN 1 MINID 1 4-1 f v"), c("XADD s2 MAXLEN -1 4-1 f v"), c("XADD s2 MAXLEN abc 4-1 f v"),
		c("XADD s2 MINID 3 5-1 f v"), c("XRANGE s2 - +"), c("XADD s2 MINID bad 6-1 f v"), c("XADD s2 MINID - 6-1 f v"),
		c("XADD s2 LIMIT 10 6-1 f v"), c("XADD s2 MAXLEN 1 LIMIT 10 6-1 f v"), c("XADD s2 MAXLEN ~ 1 LIMIT -1 6-1 f v"),
		c("XADD s2 MAXLEN ~ 1 LIMIT 10 6-1 f v"), c("XADD s2 MAXLEN ~ 1 LIMIT abc 6-1 f v"),
		c("XADD s2 bad-id f v"), c("XADD s2 1-2-3 f v"), c("XADD s2 -1 f v"), c("XADD s2 + f v"), c("XADD s2 - f v"),
		c("XADD s2 18446744073709551616-1 f v"), c("XADD s2 1-18446744073709551616 f v"),
		c("XADD s3 18446744073709551615-18446744073709551614 f v"), c("XADD s3 18446744073709551615-* f v"),
		c("XADD s3 18446744073709551615-* f v"), c("XADD s3 * f v"), c("XADD s4 5-18446744073709551615 f v"),
		c("XADD s4 5-* f v"), c("XADD s4 6-* f v"), c("XADD s5  5-1 f v"), c("XADD s5 +5-1 f v"), c("XADD s5 005-2 f v"),
		c("XADD s5 nomkstream maxlen = 0 9-1 f v"), c("XLEN s5"), c("TYPE s5"), c("OBJECT ENCODING s5"),
		c("SET str x"), c("XADD str 1-1 f v"), c("XLEN str"), c("XRANGE str - +"), c("XDEL str 1-1"), c("XTRIM str MAXLEN 1"),
		c("XSETID str 1-1"), c("LPUSH s 1"), c("GET s"),
	}
	diffCases["stream-xrange"] = []step{
		c("XADD s 1-1 a 1"), c("XADD s 1-2 b 2"), c("XADD s 2-0 c 3"), c("XADD s 3-5 d 4 e 5"), c("XADD s 18446744073709551615-0 z 1"),
		c("XRANGE s - +"), c("XRANGE s + -"), c("XREVRANGE s + -"), c("XREVRANGE s - +"), c("XRANGE s 1 1"), c("XRANGE s 1-2 3"),
		c("XRANGE s (1-1 +"), c("XRANGE s - (2-0"), c("XRANGE s (1 (3"), c("XRANGE s ( +"), c("XRANGE s (- +"), c("XRANGE s - (+"),
		c("XRANGE s (18446744073709551615-18446744073709551615 +"), c("XRANGE s - (0-0"), c("XRANGE s - (0"),
		c("XREVRANGE s (3-5 -"), c("XREVRANGE s + (1-2"), c("XRANGE s - + COUNT 2"), c("XREVRANGE s + - COUNT 2"),
		c("XRANGE s - + COUNT 0"), c("XRANGE s - + COUNT -5"), c("XRANGE s - + COUNT abc"), c("XRANGE s - + COUNT"),
		c("XRANGE s - + LIMIT 2"), c("XRANGE s - + COUNT 1 COUNT 3"), c("XRANGE nokey - +"), c("XRANGE nokey - + COUNT 0"),
		c("XRANGE s bad +"), c("XRANGE s - bad"), c("XRANGE s 1-x +"), c("XRANGE s 18446744073709551615 +"),
		c("XRANGE s -1 +"), c("XLEN s"), c("XLEN nokey"), c("XRANGE s 1-1"), c("XLEN"),
		c("XRANGE s - + COUNT 9223372036854775807"), c("XRANGE s - + COUNT 9223372036854775808"),
	}
	diffCases["stream-xdel-xtrim-xsetid"] = []step{
		c("XADD s 1-1 a 1"), c("XADD s 2-1 a 2"), c("XADD s 3-1 a 3"), c("XADD s 4-1 a 4"), c("XADD s 5-1 a 5"),
		c("XDEL s 1-1 1-1 9-9"), c("XDEL s 3"), c("XDEL s bad"), c("XDEL s 2-1 bad"), c("XLEN s"), c("XDEL s -"),
		c("XDEL nokey 1-1"), c("XRANGE s - +"), c("XDEL s 2-1 3-1 4-1 5-1"), c("XLEN s"), c("EXISTS s"), c("TYPE s"),
		c("XADD s 6-1 a 6"), c("XADD s 7-1 a 7"), c("XADD s 8-1 a 8"), c("XTRIM s MAXLEN 1"), c("XRANGE s - +"),
		c("XTRIM s MAXLEN 5"), c("XTRIM s MINID 9"), c("XLEN s"), c("XTRIM s"), c("XTRIM s FOO 1"), c("XTRIM s MAXLEN"),
		c("XTRIM s LIMIT 5"), c("XTRIM s MAXLEN 1 LIMIT 5"), c("XTRIM s MAXLEN ~ 1 LIMIT 5"), c("XTRIM s MINID ~ 0 LIMIT 0"),
		c("XTRIM s MAXLEN 1 MINID 1"), c("XTRIM s MAXLEN -1"), c("XTRIM nokey MAXLEN 0"), c("XTRIM s MAXLEN 0 NOMKSTREAM"),
		c("XADD t 10-1 f v"), c("XSETID t 9-9"), c("XSETID t 10-1"), c("XSETID t 20-0"), c("XADD t 15-0 f v"), c("XADD t 20-* f v"),
		c("XSETID t 30-0 ENTRIESADDED 1"), c("XSETID t 30-0 ENTRIESADDED -1"), c("XSETID t 30-0 ENTRIESADDED abc"),
		c("XSETID t 30-0 MAXDELETEDID 31-0"), c("XSETID t 30-0 MAXDELETEDID 29-0 ENTRIESADDED 50"), c("XSETID t 30-0 FOO"),
		c("XSETID t 30-0 ENTRIESADDED"), c("XSETID nokey 1-1"), c("XSETID t bad"), c("XSETID t -"), c("XSETID t +"),
		c("XDEL t 20-1 10-1"), c("XSETID t 5-0"), c("XLEN t"), c("XADD t 31-0 f v"), c("XADD t MAXLEN 0 32-0 f v"), c("XLEN t"),
		c("EXISTS t"), c("XRANGE t - +"),
	}
	diffCases["stream-xread"] = []step{
		c("XADD s 1-1 a 1"), c("XADD s 2-1 b 2"), c("XADD t 1-1 c 3"), c("XREAD STREAMS s t 0 0"), c("XREAD COUNT 1 STREAMS s t 0-0 1"),
		c("XREAD STREAMS s $"), c("XREAD STREAMS s 2-1"), c("XREAD STREAMS s nokey 0 0"), c("XREAD STREAMS nokey $"),
		c("XREAD STREAMS s >"), c("XREAD STREAMS s"), c("XREAD STREAMS s t 0"), c("XREAD COUNT -1 STREAMS s 0"),
		c("XREAD COUNT abc STREAMS s 0"), c("XREAD BLOCK -1 STREAMS s 0"), c("XREAD BLOCK 1.5 STREAMS s 0"),
		c("XREAD BLOCK abc STREAMS s 0"), c("XREAD BLOCK 0 STREAMS s 0"), c("XREAD BLOCK 10 STREAMS s $"),
		c("XREAD GROUP g c STREAMS s 0"), c("XREAD NOACK STREAMS s 0"), c("XREAD STREAMS s 0 COUNT 5"), c("XREAD FOO STREAMS s 0"),
		c("XREAD COUNT 1"), c("SET str x"), c("XREAD STREAMS s str 0 0"), c("XREAD STREAMS s str 0 bad"), c("XREAD STREAMS str s bad 0"),
		c("XREAD STREAMS s s 0 1-1"), c("XREAD STREAMS s -"), c("XREAD STREAMS s +"), c("XREAD STREAMS s 1"),
		c("MULTI"), c("XREAD BLOCK 0 STREAMS s $"), c("EXEC"),
	}
	diffCases["stream-nodes"] = streamNodeSteps()
	// Smaller nodes by count, then by bytes, restored at the end (the
	// servers are shared by the cases).
	cfg := []step{c("CONFIG SET stream-node-max-entries 7"), c("CONFIG GET stream-node-max-entries")}
	for i := 1; i <= 40; i++ {
		cfg = append(cfg, s(exact, "XADD", "n", fmt.Sprintf("%d-1", i), "f", strconv.Itoa(i)))
	}
	cfg = append(cfg, c("DUMP n"), c("XTRIM n MAXLEN ~ 20"), c("XLEN n"), c("CONFIG SET stream-node-max-entries 0"),
		c("CONFIG SET stream-node-max-bytes 100"), c("CONFIG GET stream-node-max-bytes"))
	for i := 1; i <= 40; i++ {
		cfg = append(cfg, s(exact, "XADD", "m", fmt.Sprintf("%d-1", i), "f", strings.Repeat("y", i)))
	}
	cfg = append(cfg, c("DUMP m"), c("XTRIM m MAXLEN ~ 20"), c("XLEN m"), c("CONFIG SET stream-node-max-bytes 1kb"),
		c("CONFIG GET stream-node-max-bytes"), c("CONFIG SET stream-node-max-bytes -1"), c("CONFIG SET stream-node-max-entries -1"),
		c("CONFIG SET stream-node-max-bytes 4096"), c("CONFIG SET stream-node-max-entries 100"))
	diffCases["stream-node-config"] = cfg
}

// streamNodeSteps fills streams past several nodes (by entry count, by
// bytes, with fields that change and values that are integers) and
// compares what approximate trims remove, which depends on where nodes
// were cut, and the DUMP payloads, which hold the nodes themselves.
func streamNodeSteps() []step {
	var steps []step
	for i := 1; i <= 350; i++ {
		f := "f"
		if i%37 == 0 {
			f = "other"
		}
		steps = append(steps, s(exact, "XADD", "a", fmt.Sprintf("%d-1", i), f, strconv.Itoa(i*1000), "g", "x"))
	}
	for i := 1; i <= 60; i++ {
		steps = append(steps, s(exact, "XADD", "b", fmt.Sprintf("%d-*", i), "field", strings.Repeat("v", 90+i)))
	}
	steps = append(steps, c("DUMP a"), c("DUMP b"), c("XDEL a 1-1 2-1 150-1"), c("DUMP a"), c("XTRIM a MAXLEN ~ 300"),
		c("XLEN a"), c("XTRIM a MAXLEN ~ 10 LIMIT 150"), c("XLEN a"), c("XTRIM a MINID ~ 340"), c("XLEN a"),
		c("XTRIM b MAXLEN ~ 50"), c("XLEN b"), c("XTRIM b MINID 55"), c("XLEN b"), c("DUMP a"), c("DUMP b"),
		c("XADD a MAXLEN ~ 5 * f v", maskDigits), c("XLEN a"), c("XTRIM a MAXLEN 0"), c("XLEN a"), c("XDEL b 60-0"), c("DUMP b"))
	return steps
}

// TestStreamRandomOpsAgainstRedis sends the same few thousand random
// stream commands to redis-server and to Shoal and compares every reply,
// the DUMP payloads included: the nodes are Redis's listpacks, so they
// must match byte for byte after any sequence of adds, deletes and trims.
func TestStreamRandomOpsAgainstRedis(t *testing.T) {
	randomOpsAgainstRedis(t, 26, func(t *testing.T, _ int, ref, got *rawConn, rng *rand.Rand) {
		keys := []string{"s1", "s2"}
		next := map[string]int{}
		id := func(k string) string { // a random ID around what the key holds
			n := next[k]
			switch rng.Intn(4) {
			case 0:
				return "-"
			case 1:
				return "+"
			}
			return fmt.Sprintf("%d-%d", rng.Intn(n+3), rng.Intn(3))
		}
		for i := 0; i < 3000; i++ {
			k := keys[rng.Intn(len(keys))]
			var args []string
			switch op := rng.Intn(20); {
			case op < 9:
				next[k] += rng.Intn(3)
				args = []string{"XADD", k}
				switch rng.Intn(8) {
				case 0:
					args = append(args, "MAXLEN", "~", strconv.Itoa(rng.Intn(300)))
				case 1:
					args = append(args, "MAXLEN", strconv.Itoa(rng.Intn(300)+100))
				case 2:
					args = append(args, "MINID", "~", fmt.Sprint(next[k]-rng.Intn(200)), "LIMIT", strconv.Itoa(rng.Intn(300)))
				}
				if rng.Intn(2) == 0 {
					args = append(args, fmt.Sprintf("%d-*", next[k]))
				} else {
					args = append(args, fmt.Sprintf("%d-%d", next[k], rng.Intn(4)))
				}
				fields := []string{"f", "g"}
				if rng.Intn(10) == 0 {
					fields = []string{"h"}
				}
				for _, f := range fields {
					v := strconv.Itoa(rng.Intn(100000) - 50000)
					if rng.Intn(5) == 0 {
						v = strings.Repeat("x", rng.Intn(120))
					}
					args = append(args, f, v)
				}
			case op < 11:
				args = []string{"XDEL", k}
				for n := rng.Intn(5) + 1; n > 0; n-- {
					args = append(args, fmt.Sprintf("%d-%d", rng.Intn(next[k]+2), rng.Intn(4)))
				}
			case op < 13:
				args = []string{"XRANGE", k, id(k), id(k), "COUNT", strconv.Itoa(rng.Intn(20))}
				if rng.Intn(2) == 0 {
					args[0] = "XREVRANGE"
				}
			case op == 13:
				args = []string{"XTRIM", k, "MAXLEN", []string{"~", "="}[rng.Intn(2)], strconv.Itoa(rng.Intn(400))}
			case op == 14:
				args = []string{"XTRIM", k, "MINID", "~", fmt.Sprint(next[k] - rng.Intn(300)), "LIMIT", strconv.Itoa(rng.Intn(200))}
			case op == 15:
				args = []string{"XREAD", "COUNT", strconv.Itoa(rng.Intn(10)), "STREAMS", k, fmt.Sprintf("%d-0", rng.Intn(next[k]+2))}
			case op == 16:
				args = []string{"DUMP", k}
			case op == 17:
				args = []string{"XLEN", k}
			default:
				args = []string{"XRANGE", k, "-", "+", "COUNT", "3"}
			}
			want, have := ref.Do(args...), got.Do(args...)
			if want != have {
				t.Fatalf("op %d %.200q:\nredis: %.500q\nshoal: %.500q", i, args, want, have)
			}
		}
	})
}

func init() {
	// Keyspace events of the stream commands, compared message for
	// message with redis-server's (diff_notify_test.go).
	notifyCases["streams"] = []step{
		c("XADD s 1-1 f v"), c("XADD s 2-1 f v"), c("XADD s MAXLEN 1 3-1 f v"), c("XADD s MAXLEN 5 4-1 f v"),
		c("XADD s NOMKSTREAM 5-1 f v"), c("XADD nos NOMKSTREAM 5-1 f v"), c("XADD s 1-1 f v"), c("XDEL s 3-1"), c("XDEL s 9-9"),
		c("XTRIM s MAXLEN 0"), c("XTRIM s MAXLEN 0"), c("XSETID s 10-0"), c("XSETID s 1-0"), c("XADD s2 MINID 5 1-1 f v"),
		c("DEL s s2"),
	}
}
