package kv_test

import "strings"

// Lists against redis-server: every command, its errors and edge indexes
// (negative, out of range, int64 extremes), in RESP2 and RESP3 (the
// harness runs each case in both), and the blocking commands where they
// answer at once or time out.
func init() {
	big := strings.Repeat("b", 9000) // a node of its own
	diffCases["list-push-pop"] = []step{
		c("LPUSH l a b c"), c("RPUSH l d e"), c("LRANGE l 0 -1"), c("LLEN l"), c("LPUSHX nol a"), c("RPUSHX nol a"),
		c("EXISTS nol"), c("LPUSHX l x y"), c("RPUSHX l z"), c("LRANGE l 0 -1"), c("LPOP l"), c("RPOP l"),
		c("LPOP l 2"), c("RPOP l 2"), c("LPOP l 0"), c("RPOP l 0"), c("LRANGE l 0 -1"), c("LPOP l 100"), c("EXISTS l"),
		c("LPOP l"), c("RPOP l"), c("LPOP l 1"), c("LPOP nol 0"), c("RPOP nol 5"), c("LPOP l -1"), c("LPOP l x"),
		c("LPOP l 1 2"), c("RPOP l 1 2"), c("SET s x"), c("LPUSH s a"), c("RPUSH s a"), c("LPUSHX s a"), c("LPOP s"),
		c("RPOP s 1"), c("LPOP s -1"), c("LLEN s"), c("LLEN nol"), c("LPUSH"), c("LPUSH l"), c("RPUSH l"), c("LPOP"),
		c("TYPE l"), c("RPUSH l 1 2 3"), c("TYPE l"), c("OBJECT ENCODING l"), s(exact, "RPUSH", "l", big),
		c("OBJECT ENCODING l"), c("RPOP l"), c("LLEN l"), s(exact, "LPUSH", "e", ""), c("LRANGE e 0 -1"),
		c("LPOP l 9223372036854775807"), c("RPOP nol 9223372036854775808"),
	}
	diffCases["list-range-index"] = []step{
		c("RPUSH l a b c d e f g"), c("LRANGE l 0 0"), c("LRANGE l -1 -1"), c("LRANGE l -100 100"), c("LRANGE l 3 1"),
		c("LRANGE l 7 10"), c("LRANGE l -3 -2"), c("LRANGE l 2 -3"), c("LRANGE l x 1"), c("LRANGE l 0 y"),
		c("LRANGE nol 0 -1"), c("LRANGE l -9223372036854775808 9223372036854775807"), c("LRANGE l 9223372036854775807 -9223372036854775808"),
		c("LINDEX l 0"), c("LINDEX l -1"), c("LINDEX l 6"), c("LINDEX l 7"), c("LINDEX l -7"), c("LINDEX l -8"),
		c("LINDEX l x"), c("LINDEX nol 0"), c("LINDEX l 9223372036854775807"), c("LINDEX l -9223372036854775808"),
		c("SET s x"), c("LRANGE s 0 -1"), c("LINDEX s 0"), c("LRANGE l 0"), c("LINDEX l"), c("LRANGE l 1.5 2"),
	}
	diffCases["list-set-insert-rem"] = []step{
		c("RPUSH l a b c a b c a"), c("LSET l 0 x"), c("LSET l -1 y"), c("LSET l 7 z"), c("LSET l -8 z"), c("LSET l x z"),
		c("LSET nol 0 z"), c("LRANGE l 0 -1"), s(exact, "LSET", "l", "1", strings.Repeat("q", 300)), c("LINDEX l 1"),
		c("LINSERT l BEFORE c C1"), c("LINSERT l after c C2"), c("LINSERT l before nope v"), c("LINSERT nol before a v"),
		c("LINSERT l middle a v"), c("LRANGE l 0 -1"), c("LINSERT l AFTER y end"), c("LINSERT l BEFORE x start"),
		c("LRANGE l 0 -1"), c("LREM l 1 c"), c("LREM l -1 a"), c("LREM l 0 b"), c("LRANGE l 0 -1"), c("LREM l 0 nope"),
		c("LREM nol 0 a"), c("LREM l x a"), c("RPUSH r a a a a a"), c("LREM r -2 a"), c("LREM r 9223372036854775807 a"),
		c("EXISTS r"), c("RPUSH r a a a"), c("LREM r -9223372036854775808 a"), c("EXISTS r"), c("SET s x"),
		c("LSET s 0 a"), c("LINSERT s before a b"), c("LREM s 0 a"), c("LSET l 0"), c("LINSERT l before a"), c("LREM l 1"),
	}
	diffCases["list-trim"] = []step{
		c("RPUSH l a b c d e f"), c("LTRIM l 1 -2"), c("LRANGE l 0 -1"), c("LTRIM l -100 100"), c("LRANGE l 0 -1"),
		c("LTRIM l 2 1"), c("EXISTS l"), c("RPUSH l a b c"), c("LTRIM l 5 10"), c("EXISTS l"), c("LTRIM nol 0 1"),
		c("RPUSH l a b c"), c("LTRIM l 0 0"), c("LRANGE l 0 -1"), c("LTRIM l x 1"), c("SET s x"), c("LTRIM s 0 1"),
		c("RPUSH m a b c"), c("LTRIM m -9223372036854775808 9223372036854775807"), c("LRANGE m 0 -1"), c("LTRIM m 0"),
	}
	diffCases["list-lpos"] = []step{
		c("RPUSH l a b c a b c a"), c("LPOS l a"), c("LPOS l c"), c("LPOS l z"), c("LPOS l a RANK 2"), c("LPOS l a RANK -1"),
		c("LPOS l a RANK -2"), c("LPOS l a RANK 5"), c("LPOS l a COUNT 0"), c("LPOS l a COUNT 2"), c("LPOS l a RANK 2 COUNT 0"),
		c("LPOS l a RANK -1 COUNT 2"), c("LPOS l a MAXLEN 1"), c("LPOS l a MAXLEN 1 RANK 2"), c("LPOS l c MAXLEN 2"),
		c("LPOS l a RANK -1 MAXLEN 1"), c("LPOS l a COUNT 0 MAXLEN 4"), c("LPOS l a RANK 0"), c("LPOS l a RANK x"),
		c("LPOS l a COUNT -1"), c("LPOS l a MAXLEN -1"), c("LPOS l a FOO"), c("LPOS l a RANK"), c("LPOS nol a"),
		c("LPOS nol a COUNT 0"), c("LPOS l a RANK -9223372036854775808"), c("LPOS l a RANK -9223372036854775808 COUNT 0"),
		c("LPOS l a RANK 9223372036854775807"), c("LPOS l a COUNT 9223372036854775807"), c("SET s x"), c("LPOS s a"),
		c("LPOS s a RANK 0"), c("LPOS l"), c("lpos l a rank 1 count 1 maxlen 0"),
	}
	diffCases["list-move-mpop"] = []step{
		c("RPUSH a 1 2 3"), c("LMOVE a b LEFT RIGHT"), c("LMOVE a b RIGHT LEFT"), c("LRANGE a 0 -1"), c("LRANGE b 0 -1"),
		c("LMOVE a a LEFT RIGHT"), c("LRANGE a 0 -1"), c("LMOVE nol b LEFT LEFT"), c("LMOVE a b UP LEFT"), c("LMOVE a b left down"),
		c("RPOPLPUSH b a"), c("LRANGE a 0 -1"), c("RPOPLPUSH nol a"), c("SET s x"), c("LMOVE a s LEFT LEFT"), c("LMOVE s a LEFT LEFT"),
		c("LMOVE nol s LEFT LEFT"), c("RPOPLPUSH a s"), c("RPOPLPUSH s a"), c("RPUSH one x"), c("RPOPLPUSH one one"),
		c("LRANGE one 0 -1"), c("RPOPLPUSH one two"), c("EXISTS one"), c("LRANGE two 0 -1"),
		c("LMPOP 1 a LEFT"), c("LMPOP 2 nol a RIGHT COUNT 10"), c("LMPOP 2 nol a RIGHT"), c("LMPOP 1 nol LEFT"),
		c("LMPOP 2 s a LEFT"), c("LMPOP 2 nol s LEFT"), c("LMPOP 0 a LEFT"), c("LMPOP -1 a LEFT"), c("LMPOP x a LEFT"),
		c("LMPOP 2 a LEFT"), c("LMPOP 1 a MIDDLE"), c("LMPOP 1 a LEFT COUNT 0"), c("LMPOP 1 a LEFT COUNT -1"),
		c("LMPOP 1 a LEFT COUNT x"), c("LMPOP 1 a LEFT FOO"), c("LMPOP 1 a LEFT COUNT 1 COUNT 2"), c("LMPOP 1 a LEFT COUNT"),
		c("RPUSH m 1 2 3 4"), c("LMPOP 1 m RIGHT COUNT 3"), c("LMPOP 1 m left COUNT 9223372036854775807"), c("EXISTS m"),
		c("LMPOP 9223372036854775807 a LEFT"), c("LMPOP 3 a LEFT"), c("LMPOP 1"), c("LMOVE a b"), c("RPOPLPUSH a"),
	}
	diffCases["list-blocking-at-once"] = []step{
		c("RPUSH a 1 2 3"), c("BLPOP a 0"), c("BRPOP a 0"), c("BLPOP nol a 0"), c("BLPOP nol 0.01"), c("BRPOP nol nol2 0.01"),
		c("SET s x"), c("BLPOP s 0"), c("BLPOP nol s 0"), c("BLPOP a s 0"), c("BLPOP a -1"), c("BLPOP a abc"), c("BLPOP a 1e400"),
		c("BLPOP a inf"), c("BLPOP a nan"), s(exact, "BLPOP", "a", " 1"), s(exact, "BLPOP", "a", ""), c("BLPOP a 99999999999999999"),
		c("RPUSH a x y"), c("BLPOP a -0.0001"), c("BLPOP a 0x10"), c("RPUSH b 1 2"), c("BLMOVE b c LEFT RIGHT 0"),
		c("BLMOVE b c RIGHT LEFT 0.5"), c("BLMOVE b c LEFT RIGHT 0.01"), c("BLMOVE b c UP RIGHT 0"), c("BLMOVE b c LEFT RIGHT -1"),
		c("BLMOVE s c LEFT RIGHT 0"), c("RPUSH b 1"), c("BLMOVE b s LEFT RIGHT 0"), c("LRANGE c 0 -1"), c("BRPOPLPUSH c d 0"),
		c("BRPOPLPUSH nol d 0.01"), c("BRPOPLPUSH c d x"), c("BRPOPLPUSH s d 0"), c("RPUSH e 1 2 3"),
		c("BLMPOP 0 2 nol e LEFT COUNT 2"), c("BLMPOP 0 1 e RIGHT"), c("BLMPOP 0.01 1 e RIGHT"), c("BLMPOP 0 0 e LEFT"),
		c("BLMPOP x 1 e LEFT"), c("BLMPOP -1 1 e LEFT"), c("BLMPOP 0 1 e MIDDLE"), c("BLMPOP 0 1 e LEFT COUNT 0"),
		c("BLMPOP 0 1 s LEFT"), c("BLMPOP 0 2 e LEFT"), c("BLPOP"), c("BLPOP a"), c("BLMOVE a b LEFT RIGHT"), c("BLMPOP 0 1 e"),
		c("BRPOPLPUSH a b"),
	}
}
