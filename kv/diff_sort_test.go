package kv_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// SORT and SORT_RO against redis-server 7.0: every option, the weights'
// number syntax, LIMIT's clamping, BY nosort's orders, STORE's list and
// its deletion of the destination, and the errors, byte for byte. Only
// a set's own order (BY nosort without STORE) is compared as a set.

func init() {
	nums := c("RPUSH l 3 1 2 10 -1.5 1e2 0x10 2")
	weights := c("MSET w_3 1 w_1 3 w_2 2 w_10 0 w_-1.5 7 w_1e2 -4 w_0x10 1 o_3 three o_1 one o_2 two o_10 ten")
	diffCases["sort-basic"] = []step{
		nums, c("SORT l"), c("SORT l DESC"), c("SORT l ASC"), c("SORT l ALPHA"), c("SORT l ALPHA DESC"),
		c("SORT l LIMIT 0 3"), c("SORT l LIMIT 2 2"), c("SORT l LIMIT 2 2 DESC"), c("SORT l LIMIT 7 5"), c("SORT l LIMIT 8 5"),
		c("SORT l LIMIT 100 5"), c("SORT l LIMIT -5 2"), c("SORT l LIMIT 1 -1"), c("SORT l LIMIT 1 -7"), c("SORT l LIMIT 1 0"),
		c("SORT l LIMIT 0 9223372036854775807"), c("SORT l LIMIT 9223372036854775807 9223372036854775807"),
		c("SORT l LIMIT -9223372036854775808 -9223372036854775808"), c("SORT l LIMIT 1"), c("SORT l LIMIT a 1"),
		c("SORT l LIMIT 1 a"), c("SORT l LIMIT 1 2 3"), c("SORT l LIMIT 9223372036854775808 1"),
		c("SORT missing"), c("SORT missing DESC LIMIT 0 1"), c("SORT missing STORE d"), c("EXISTS d"), c("SORT missing BY nosort"),
		c("SET str x"), c("SORT str"), c("SORT str BY nosort"), c("SORT str BADOPT"), c("HSET hh a 1"), c("SORT hh"),
		c("SORT l BADOPT"), c("SORT l BY"), c("SORT l GET"), c("SORT l STORE"), c("SORT l asc desc alpha"), c("SORT"),
		c("SORT_RO l"), c("SORT_RO l STORE d"), c("SORT_RO l DESC LIMIT 1 3"), c("SORT_RO str"), c("SORT_RO"),
	}
	diffCases["sort-by-get"] = []step{
		nums, weights, c("SORT l BY w_*"), c("SORT l BY w_* DESC"), c("SORT l BY w_* GET o_*"), c("SORT l BY w_* GET o_* GET #"),
		c("SORT l BY w_* LIMIT 1 3 GET # GET o_*"), c("SORT l BY w_* ALPHA"), c("SORT l BY o_* ALPHA"), c("SORT l BY o_* ALPHA DESC"),
		c("SORT l BY o_*"), c("SORT l BY nosort"), c("SORT l BY nosort DESC"), c("SORT l BY nosort LIMIT 2 3"),
		c("SORT l BY nosort DESC LIMIT 2 3"), c("SORT l BY nosort DESC LIMIT 7 3"), c("SORT l BY nosort LIMIT 8 3"),
		c("SORT l BY nosort LIMIT 0 0"), c("SORT l BY nosort GET o_*"), c("SORT l BY nosort BY w_*"), c("SORT l BY w_* BY nosort"),
		c("SORT l GET nokey"), c("SORT l GET #"), c("SORT l GET o_* GET nope_* LIMIT 0 2"), c("SORT l GET o"),
		c("HSET h_1 f x g 5"), c("HSET h_2 f y g -5"), c("HSET h_3 f z"), c("SORT l BY h_*->g"), c("SORT l BY h_*->g GET h_*->f"),
		c("SORT l BY h_*->f ALPHA GET h_*->f GET #"), c("SORT l BY h_*->"), c("SORT l GET h_*->"), c("SORT l GET h_*->nofield"),
		c("SORT l BY h_*-> ALPHA"), c("SORT l GET w_*->f"), c("SORT l BY o_*->f ALPHA"), c("SORT l GET ->*"), c("SORT l GET *->f"),
		c("SORT l GET *"), c("SET 1 one"), c("SORT l GET *"), c("SORT l GET #x"), c("SORT l GET x#"),
		s(exact, "SORT", "l", "GET", "#\x00x"), s(exact, "SORT", "l", "GET", "o_\x00*"), s(exact, "SORT", "l", "GET", "o_*\x00"),
		s(exact, "SORT", "l", "BY", "w_\x00*"), s(exact, "SORT", "l", "GET", "h_*->f\x00"), s(exact, "SORT", "l", "GET", "h_*-\x00>f"),
		c("SORT_RO l BY w_* GET o_* GET #"), c("SORT_RO l BY h_*->g GET h_*->f LIMIT 0 2"),
	}
	// A weight strtod finds out of range leaves errno at ERANGE in
	// redis-server, and its SORT reads errno without clearing it: every
	// later numeric SORT on that thread fails too, until a new connection's
	// accept resets it. So such a weight is the last step of its case.
	diffCases["sort-scores"] = []step{
		c("RPUSH a 1 2 x"), c("SORT a"), c("SORT a ALPHA"), c("SORT a BY nosort"), c("SORT a STORE d"), c("EXISTS d"),
		s(exact, "RPUSH", "b", " 5", "\t6", "", "inf", "-inf", "0x1p3", "+3", ".5", "-0", "0", "5\x00x", "0x10", "1e2", "1E-2"),
		c("SORT b"), c("SORT b DESC"), c("SORT b ALPHA"), c("SORT b BY nosort"),
		s(exact, "RPUSH", "n1", "7 "), c("SORT n1"), s(exact, "RPUSH", "n2", "nan"), c("SORT n2"), s(exact, "RPUSH", "n3", "1_0"), c("SORT n3"),
		s(exact, "RPUSH", "n4", " "), c("SORT n4"), s(exact, "RPUSH", "n5", "0x"), c("SORT n5"), s(exact, "RPUSH", "n6", "infinity", "-INF"), c("SORT n6"),
		c("RPUSH c 1 2 3"), c("MSET w_1 abc w_2 2"), c("SORT c BY w_*"), c("SORT c BY w_* ALPHA"), c("SET w_1 1.5"), c("SORT c BY w_*"),
		s(exact, "SET", "w_1", " "), c("SORT c BY w_*"), s(exact, "SET", "w_1", ""), c("SORT c BY w_*"), c("SET w_1 nan"), c("SORT c BY w_*"),
		c("SET w_1 1e308"), c("SORT c BY w_*"), c("LPUSH w_1 x"), c("SORT c BY w_*"),
		c("SORT c BY w_* ALPHA"), c("RPUSH dup 3 1 3 2 1 3"), c("SORT dup"), c("SORT dup ALPHA DESC"), c("MSET v_1 b v_2 a v_3 c"),
		c("SORT dup BY v_* ALPHA"), c("SORT dup BY v_* ALPHA STORE d"), c("LRANGE d 0 -1"),
		s(exact, "RPUSH", "bin", "a\x00b", "a\x00a", "a", "b"), c("SORT bin ALPHA"), c("SORT bin ALPHA STORE d"), c("LRANGE d 0 -1"),
	}
	diffCases["sort-overflow"] = []step{c("RPUSH b 1 1e400"), c("SORT b ALPHA"), c("SORT b BY nosort"), c("SORT b")}
	diffCases["sort-underflow"] = []step{c("RPUSH c 1 2"), c("SET w_1 1e-400"), c("SORT c BY w_* ALPHA"), c("SORT c BY w_*")}
	diffCases["sort-types"] = []step{
		c("SADD s 5 3 9 1"), c("SORT s"), c("SORT s DESC LIMIT 1 2"), c("SORT s BY nosort STORE d"), c("LRANGE d 0 -1"),
		c("SADD t banana apple cherry"), c("SORT t ALPHA"), c("SORT t"), c("SORT t BY nosort STORE d"), c("LRANGE d 0 -1"),
		c("SORT t BY nosort DESC STORE d LIMIT 0 2"), c("LRANGE d 0 -1"), c("SORT s BY nosort", sortedBulk),
		c("ZADD z 3 c 1 a 2 b 0 d"), c("SORT z ALPHA"), c("SORT z ALPHA DESC"), c("SORT z BY nosort"), c("SORT z BY nosort DESC"),
		c("SORT z BY nosort LIMIT 1 2"), c("SORT z BY nosort DESC LIMIT 1 2"), c("SORT z BY nosort DESC LIMIT 3 5"),
		c("SORT z BY nosort LIMIT 4 1"), c("SORT z BY nosort LIMIT -1 -1"), c("SORT z"), c("MSET w_a 4 w_b 3 w_c 2 w_d 1"),
		c("SORT z BY w_*"), c("SORT z BY w_* GET # GET w_*"), c("SORT z BY nosort GET w_* STORE d"), c("LRANGE d 0 -1"),
		c("ZADD nz 1 10 2 9 3 8"), c("SORT nz"), c("SORT nz BY nosort"), c("SORT_RO z BY nosort DESC LIMIT 0 2"),
	}
	diffCases["sort-store"] = []step{
		c("RPUSH l 3 1 2"), c("SORT l STORE d"), c("LRANGE d 0 -1"), c("TYPE d"), c("SET d x EX 100"), c("SORT l STORE d DESC"),
		c("LRANGE d 0 -1"), c("TTL d"), c("SORT l LIMIT 5 5 STORE d"), c("EXISTS d"), c("SORT l LIMIT 5 5 STORE d"),
		c("SORT l STORE d GET nokey_* GET #"), c("LRANGE d 0 -1"), c("SORT l STORE d STORE e"), c("EXISTS d e"), c("LRANGE e 0 -1"),
		c("SORT l STORE l"), c("LRANGE l 0 -1"), c("SORT l BY nosort DESC STORE l"), c("LRANGE l 0 -1"), c("SORT missing STORE l"),
		c("EXISTS l"), c("SADD s b a"), c("SORT s STORE s"), c("TYPE s"), c("LRANGE s 0 -1"), c("SORT s ALPHA STORE s"), c("LRANGE s 0 -1"),
		c("COMMAND GETKEYS SORT a STORE b"), c("COMMAND GETKEYS SORT a STORE b STORE c"), c("COMMAND GETKEYS SORT a LIMIT store x"),
		c("COMMAND GETKEYS SORT a BY store GET store STORE"), c("COMMAND GETKEYS SORT a"), c("COMMAND GETKEYS SORT_RO a STORE b"),
		c("COMMAND GETKEYSANDFLAGS SORT a BY w STORE b"), c("COMMAND GETKEYSANDFLAGS SORT_RO a"), c("COMMAND GETKEYS SORT"),
		c("COMMAND GETKEYSANDFLAGS GEORADIUS a 1 2 3 m STORE b"), c("COMMAND INFO sort sort_ro"),
		c("MULTI"), c("SORT l STORE d"), c("SORT l"), c("EXEC"), c("EVAL \"return redis.call('sort', KEYS[1], 'STORE', 'd')\" 1 l"),
		c("SADD s2 c a b"), c("EVAL \"return redis.call('sort', KEYS[1], 'BY', 'nosort')\" 1 s2"),
		c("EVAL \"return redis.call('sort_ro', KEYS[1], 'BY', 'nosort', 'DESC')\" 1 s2"),
	}
	diffCases["sort-acl"] = []step{
		c("RPUSH l 2 1"), c("SET w_1 2"), c("SET w_2 1"),
		c("ACL SETUSER lim on nopass +@all ~l ~d"), c("ACL SETUSER rw on nopass +@all %R~* ~l ~d"), c("ACL SETUSER ro on nopass +@all %R~l %W~d"),
		c("AUTH lim x"), c("SORT l"), c("SORT l BY w_*"), c("SORT l BY nosort"), c("SORT l GET #"), c("SORT l STORE d"), c("SORT l STORE e"),
		c("SORT_RO l BY w_*"), c("AUTH rw x"), c("SORT l BY w_*"), c("SORT l GET w_*"), c("SORT l BY w_* STORE d"),
		c("AUTH ro x"), c("SORT l STORE d"), c("SORT l STORE l"), c("SORT_RO l"), c("SORT d"),
	}
}

// TestSortRandomAgainstRedis sorts random lists, sets and sorted sets with
// random options, weights and GET patterns on redis-server and on Shoal,
// and compares every reply and every stored list byte for byte. BY's
// weights are distinct per element so that no order rests on a tie
// (ties keep the input's order, which is the same on both servers only
// for a list: t_* and nokey_* weigh lists alone); a
// set left in its own order (BY nosort) is compared as a set, or by its
// length under LIMIT.
func TestSortRandomAgainstRedis(t *testing.T) {
	randomOpsAgainstRedis(t, 26, func(t *testing.T, _ int, ref, got *rawConn, rng *rand.Rand) {
		elem := func() string {
			switch rng.Intn(8) {
			case 0:
				return fmt.Sprint("s", rng.Intn(40))
			case 1:
				return fmt.Sprint(float64(rng.Intn(400)-200) / 4)
			}
			return strconv.Itoa(rng.Intn(60) - 20)
		}
		send := func(args ...string) (string, string) { return ref.Do(args...), got.Do(args...) }
		seen := map[byte]int{} // SORT replies by type: the walk must meet lists, errors and counts
		for i := 0; i < 1500; i++ {
			if i%300 == 0 { // new weights: distinct numbers and strings per element
				send("FLUSHALL")
				all := allSortElems()
				perm := rng.Perm(len(all))
				mset := []string{"MSET"}
				for j, e := range all {
					mset = append(mset, "w_"+e, strconv.Itoa(perm[j]-100), "o_"+e, fmt.Sprintf("obj%03d", perm[(j+3)%len(perm)]))
					if j%3 == 0 {
						mset = append(mset, "t_"+e, strconv.Itoa(j%4))
					}
					send("HSET", "h_"+e, "n", strconv.Itoa(perm[(j+7)%len(perm)]), "s", fmt.Sprintf("v%03d", perm[(j+13)%len(perm)]))
				}
				send(mset...)
			}
			var args []string
			switch op := rng.Intn(10); {
			case op < 3:
				args = []string{[]string{"RPUSH", "LPUSH"}[rng.Intn(2)], "l"}
			case op < 5:
				args = []string{"SADD", "s"}
			case op < 7:
				args = []string{"ZADD", "z"}
			default:
				args = sortArgs(rng)
			}
			if args[0] != "SORT" && args[0] != "SORT_RO" {
				for n := rng.Intn(6) + 1; n > 0; n-- {
					if args[0] == "ZADD" {
						args = append(args, strconv.Itoa(rng.Intn(20)))
					}
					args = append(args, elem())
				}
			}
			want, have := send(args...)
			if strings.HasPrefix(args[0], "SORT") && len(want) > 3 {
				seen[want[0]]++
				if want[0] == '*' && want[1] != '0' && want[2] != '\r' {
					seen['L']++ // ten or more values
				}
			}
			if want != have && sortOwnSetOrder(args) {
				if slicesContain(args, "LIMIT") { // which members: the set's order's
					want, have = strings.SplitN(want, "\r\n", 2)[0], strings.SplitN(have, "\r\n", 2)[0]
				} else {
					want, have = canonicalReply(t, want), canonicalReply(t, have)
				}
			}
			if want != have {
				t.Fatalf("step %d: %q\nredis: %q\nshoal: %q", i, args, want, have)
			}
			if args[0] == "SORT" && slicesContain(args, "STORE") {
				if want, have := send("LRANGE", "dst", "0", "-1"); want != have {
					t.Fatalf("step %d: %q stored\nredis: %q\nshoal: %q", i, args, want, have)
				}
			}
		}
		for _, kind := range []byte{'*', '-', ':', 'L'} {
			if seen[kind] < 20 {
				t.Errorf("SORT replies of type %q: %d; the walk does not cover them (%v)", kind, seen[kind], seen)
			}
		}
	})
}

// allSortElems is every element the random test may add.
func allSortElems() []string {
	var all []string
	for i := 0; i < 40; i++ {
		all = append(all, fmt.Sprint("s", i))
	}
	for i := -200; i < 200; i++ {
		all = append(all, fmt.Sprint(float64(i)/4))
	}
	for i := -20; i < 40; i++ {
		all = append(all, strconv.Itoa(i))
	}
	return all
}

// sortArgs builds a random SORT or SORT_RO of l, s or z.
func sortArgs(rng *rand.Rand) []string {
	cmd := []string{"SORT", "SORT_RO"}[rng.Intn(2)]
	args := []string{cmd, []string{"l", "s", "z", "missing"}[rng.Intn(4)]}
	opts := [][]string{
		{"DESC"}, {"ASC"}, {"ALPHA"},
		{"LIMIT", strconv.Itoa(rng.Intn(12) - 2), strconv.Itoa(rng.Intn(12) - 2)},
		{"BY", []string{"w_*", "nosort", "h_*->n", "h_*->s", "o_*"}[rng.Intn(5)]},
		{"GET", []string{"#", "o_*", "h_*->s", "w_*", "nokey_*"}[rng.Intn(5)]},
	}
	if args[1] == "l" {
		// Ties: a list's elements come in the same order on both servers,
		// so equal weights keep Redis's order, through qsort or pqsort.
		opts = append(opts, []string{"BY", "nokey_*"}, []string{"BY", "t_*"})
	}
	if cmd == "SORT" {
		opts = append(opts, []string{"STORE", "dst"})
	}
	for n := rng.Intn(5); n > 0; n-- {
		args = append(args, opts[rng.Intn(len(opts))]...)
	}
	return args
}

// sortOwnSetOrder reports whether a SORT returns a set in its own order:
// the set under BY nosort, not stored (Redis's hash table order).
func sortOwnSetOrder(args []string) bool {
	if args[1] != "s" || slicesContain(args, "STORE") {
		return false
	}
	for i, a := range args {
		if a == "BY" && i+1 < len(args) && !strings.Contains(args[i+1], "*") {
			return true
		}
	}
	return false
}

func slicesContain(list []string, w string) bool {
	for _, a := range list {
		if a == w {
			return true
		}
	}
	return false
}
