package kv_test

import (
	"strconv"
	"strings"
)

// HyperLogLogs against redis-server: the same elements must build the same
// bytes (GET compares the representation, sparse and dense, cache bytes
// included) and the same estimates.
func init() {
	// A PFCOUNT that fills the cache modifies the key (WATCH); one that
	// reads the cache, or counts several keys, does not.
	diffCases["hll-pfcount-watch"] = []step{
		c("PFADD h a b"), c("WATCH h"), c("PFCOUNT h"), c("MULTI"), c("PING"), c("EXEC"),
		c("WATCH h"), c("PFCOUNT h"), c("PFCOUNT h nokey"), c("MULTI"), c("PING"), c("EXEC"),
	}
	var many, more []string
	for i := range 3000 {
		many = append(many, "e"+strconv.Itoa(i))
		more = append(more, "x"+strconv.Itoa(i*7))
	}
	pfadd := func(key string, elements []string) step {
		return s(exact, append([]string{"PFADD", key}, elements...)...)
	}
	diffCases["hll-basics"] = []step{
		c("PFADD h"), c("GET h"), c("PFCOUNT h"), c("GET h"), c("PFADD h a b c"), c("GET h"), c("PFADD h a"),
		c("PFCOUNT h"), c("GET h"), c("PFCOUNT h"), c("PFADD h d"), c("PFCOUNT h h"), c("GET h"), c("PFCOUNT nokey"),
		c("PFCOUNT nokey nokey2"), c("PFADD h2 x y a"), c("PFCOUNT h h2"), c("PFCOUNT h h2 nokey"), c("PFMERGE m h h2"),
		c("GET m"), c("PFCOUNT m"), c("PFMERGE m"), c("PFMERGE new"), c("GET new"), c("PFMERGE h2 h"), c("GET h2"),
		c("PFDEBUG ENCODING h"), c("PFDEBUG DECODE h"), c("PFDEBUG decode m"), c("PFDEBUG FOO h"), c("PFDEBUG FOO nokey"),
		c("PFDEBUG ENCODING nokey"), c("PFDEBUG TODENSE h"), c("PFDEBUG ENCODING h"), c("GET h"), c("PFDEBUG TODENSE h"),
		c("PFDEBUG DECODE h"), c("PFCOUNT h"), c("PFADD h a"), c("PFADD h zz"), c("GET h"), c("PFDEBUG GETREG h2"),
		c("PFDEBUG ENCODING h2"), c("PFMERGE m h"), c("PFDEBUG ENCODING m"), c("GET m"), c("PFCOUNT m"),
		s(exact, "PFADD", "bin", "", "\x00", "a\r\nb"), c("GET bin"), c("PFCOUNT bin"),
		c("SET str hello"), c("PFADD str a"), c("PFCOUNT str"), c("PFCOUNT h str"), c("PFMERGE m str"), c("PFMERGE str h"),
		c("PFDEBUG ENCODING str"), c("RPUSH l a"), c("PFADD l a"), c("PFCOUNT l"), c("PFCOUNT h l"), c("PFMERGE l h"),
		c("PFMERGE h l"), c("PFDEBUG GETREG l"), c("PFADD"), c("PFCOUNT"), c("PFMERGE"), c("PFDEBUG GETREG"),
		c("PFDEBUG GETREG h extra"), c("PFSELFTEST extra"), c("SET e v EX 100"), c("PFMERGE e2 h"), c("TTL e2"),
		c("COMMAND INFO pfadd pfcount pfmerge pfdebug pfselftest"), c("COMMAND GETKEYS PFMERGE d a b"),
		c("COMMAND GETKEYS PFCOUNT a b c"),
	}
	diffCases["hll-sparse-to-dense"] = []step{
		pfadd("h", many[:100]), c("GET h"), c("PFCOUNT h"), c("PFDEBUG ENCODING h"), pfadd("h", many[100:400]), c("GET h"),
		c("PFDEBUG ENCODING h"), c("PFCOUNT h"), pfadd("h", many[400:]), c("PFDEBUG ENCODING h"), c("GET h"), c("PFCOUNT h"),
		pfadd("h2", more[:50]), c("PFCOUNT h h2"), c("PFMERGE h2 h"), c("GET h2"), c("PFCOUNT h2"), pfadd("h3", more[:200]),
		c("PFMERGE h4 h3 nokey"), c("GET h4"), c("PFDEBUG DECODE h4"), c("PFMERGE h3 h2"), c("PFDEBUG ENCODING h3"), c("PFCOUNT h3"),
		pfadd("big", append(append([]string{}, many...), more...)), c("PFCOUNT big"), c("PFCOUNT big h h2 h3"),
	}
	// Sparse values near hll-sparse-max-bytes, with the setting lowered so
	// the switch to dense comes sooner.
	diffCases["hll-sparse-max-bytes"] = []step{
		c("CONFIG SET hll-sparse-max-bytes 200"), c("CONFIG GET hll-sparse-max-bytes"), pfadd("h", many[:40]),
		c("PFDEBUG ENCODING h"), c("STRLEN h"), pfadd("h", many[40:80]), c("PFDEBUG ENCODING h"), c("STRLEN h"), c("GET h"),
		c("PFCOUNT h"), pfadd("h2", many[:30]), c("PFMERGE h3 h2 nokey"), c("PFDEBUG ENCODING h3"), c("GET h3"),
		c("CONFIG SET hll-sparse-max-bytes 0"), c("PFADD h4 a"), c("PFDEBUG ENCODING h4"), c("GET h4"),
		c("CONFIG SET hll-sparse-max-bytes 3kb"), c("CONFIG GET hll-sparse-max-bytes"), c("CONFIG SET hll-sparse-max-bytes -1"),
		c("CONFIG SET hll-sparse-max-bytes abc"), c("CONFIG SET hll-sparse-max-bytes 3000"),
	}
	// Values that are not HyperLogLogs, or corrupt ones: Redis's errors,
	// never a crash or a count from garbage.
	dense := "HYLL\x00\x00\x00\x00" + strings.Repeat("\x00", 8) + strings.Repeat("\xff", 12288)
	diffCases["hll-corrupt"] = []step{
		s(exact, "SET", "short", "HYLL\x01"), c("PFADD short a"), c("PFCOUNT short"), c("PFCOUNT short nokey"), c("PFMERGE d short"),
		s(exact, "SET", "magic", "HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"), c("PFADD magic a"), c("PFCOUNT magic"),
		s(exact, "SET", "enc", "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"), c("PFADD enc a"), c("PFCOUNT enc"),
		s(exact, "SET", "dshort", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"), c("PFADD dshort a"), c("PFCOUNT dshort"),
		s(exact, "SET", "dense", dense), c("PFCOUNT dense"), c("PFADD dense a"), c("PFCOUNT dense nokey"), c("PFMERGE dm dense"), c("PFCOUNT dm"),
		s(exact, "SET", "cached", "HYLL\x01\x00\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00\x7f\xff"), c("PFCOUNT cached"), c("PFCOUNT cached nokey"),
		s(exact, "SET", "sp1", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe"), c("PFCOUNT sp1"), c("PFADD sp1 a"),
		c("PFCOUNT sp1 nokey"), c("PFMERGE d sp1"), c("PFDEBUG GETREG sp1"), c("PFDEBUG TODENSE sp1"), c("PFDEBUG DECODE sp1"),
		s(exact, "SET", "sp2", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x80"), c("PFCOUNT sp2"), c("PFADD sp2 a b c"),
		c("GET sp2"), c("PFMERGE d sp2"), c("PFDEBUG TODENSE sp2"),
		s(exact, "SET", "sp3", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"), c("PFCOUNT sp3"), c("PFADD sp3 a"), c("GET sp3"),
		c("PFMERGE sp3 nokey"), c("GET sp3"),
		s(exact, "SET", "sp4", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f"), c("PFCOUNT sp4"), c("PFADD sp4 a"), c("PFDEBUG DECODE sp4"),
		s(exact, "SET", "sp5", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\xff\xff\xff\x7f\xf0"), c("PFCOUNT sp5"), c("PFADD sp5 q r s"), c("GET sp5"),
		c("PFDEBUG DECODE sp5"), c("PFMERGE d2 sp5"), c("GET d2"),
	}
}
