package kv_test

import "strconv"

// Sets against redis-server. A hashtable set's order is its hash order, which
// differs between the two servers: those replies compare as sets
// (sortedBulk, scanSorted); intsets are sorted in both and compare exactly.
func init() {
	var big []string
	for i := range 600 {
		big = append(big, "m"+strconv.Itoa(i))
	}
	ints := make([]string, 0, 520)
	for i := range 520 {
		ints = append(ints, strconv.Itoa(i*7-100))
	}
	diffCases["set-lead-basics"] = []step{
		c("SADD s 3 1 2"), c("SADD s 2 4"), c("SMEMBERS s"), c("SCARD s"), c("OBJECT ENCODING s"),
		c("SISMEMBER s 2"), c("SISMEMBER s 9"), c("SISMEMBER nos 1"), c("SMISMEMBER s 1 9 4"), c("SMISMEMBER nos a b"),
		c("SADD s -9223372036854775808 9223372036854775807"), c("SMEMBERS s"), c("OBJECT ENCODING s"),
		c("SADD s 01"), c("OBJECT ENCODING s"), s(sortedBulk, "SMEMBERS", "s"), c("SREM s 01 2 nothere"),
		c("SREM nos a"), c("SCARD nos"), c("SMEMBERS nos"), c("TYPE s"),
		c("SADD t a b c"), c("OBJECT ENCODING t"), c("SREM t a b c"), c("EXISTS t"),
		c("SET str v"), c("SADD str a"), c("SREM str a"), c("SMEMBERS str"), c("SISMEMBER str a"), c("SCARD str"),
		c("SMISMEMBER str a"), c("SADD s"), c("SREM s"), c("SISMEMBER s"), c("SCARD"), c("SMISMEMBER s"),
		s(exact, "SADD", "bin", "a\x00b", ""), s(sortedBulk, "SMEMBERS", "bin"), s(exact, "SISMEMBER", "bin", ""),
		s(exact, append([]string{"SADD", "is"}, ints[:512]...)...), c("OBJECT ENCODING is"), c("SADD is 5000"),
		c("OBJECT ENCODING is"), c("SCARD is"), s(exact, append([]string{"SADD", "big"}, big...)...),
		c("OBJECT ENCODING big"), c("SCARD big"), c("SISMEMBER big m599"),
	}
	diffCases["set-lead-algebra"] = []step{
		c("SADD a 1 2 3 4"), c("SADD b 3 4 5"), c("SADD c x y 3"), c("SADD e 4 3 2 1"),
		c("SINTER a b"), c("SUNION a b"), c("SDIFF a b"), c("SDIFF b a"), s(sortedBulk, "SINTER", "a", "b", "c"),
		s(sortedBulk, "SUNION", "a", "c"), s(sortedBulk, "SDIFF", "c", "a"), c("SINTER a nos"), c("SUNION a nos"),
		c("SDIFF nos a"), c("SDIFF a nos"), c("SDIFF a a"), c("SINTER a a"), c("SINTER e a"),
		c("SET str v"), c("SINTER a str"), c("SINTER nos str"), c("SUNION str a"), c("SDIFF a str"), c("SDIFF nos str"),
		c("SINTERSTORE d a b"), c("SMEMBERS d"), c("SUNIONSTORE d a b"), c("SMEMBERS d"), c("SDIFFSTORE d a b"),
		c("SMEMBERS d"), c("SINTERSTORE d a nos"), c("EXISTS d"), c("SINTERSTORE str a b"), c("TYPE str"),
		c("SET str2 v EX 100"), c("SUNIONSTORE str2 a"), c("TTL str2"), c("SINTERSTORE d a str"),
		c("SDIFFSTORE a a b"), c("SMEMBERS a"), c("SUNIONSTORE c c b"), s(sortedBulk, "SMEMBERS", "c"),
		c("SINTERCARD 2 a b"), c("SINTERCARD 2 a b LIMIT 0"), c("SINTERCARD 1 e LIMIT 2"), c("SINTERCARD 1 e LIMIT 9"),
		c("SINTERCARD 2 e nos"), c("SINTERCARD 0 a"), c("SINTERCARD x a"), c("SINTERCARD 3 a b"),
		c("SINTERCARD 1 a LIMIT -1"), c("SINTERCARD 1 a LIMIT x"), c("SINTERCARD 1 a FOO 1"), c("SINTERCARD 1 a LIMIT"),
		c("SINTERCARD 1 str"), c("SINTER"), c("SINTERSTORE d"), c("SINTERCARD 1"),
	}
	diffCases["set-lead-move-pop-rand"] = []step{
		c("SADD a 1 2 3"), c("SADD b x"), c("SMOVE a b 1"), c("SMEMBERS a"), s(sortedBulk, "SMEMBERS", "b"),
		c("SMOVE a b 9"), c("SMOVE nos b 1"), c("SMOVE a a 2"), c("SMOVE a a 9"), c("SMOVE a new 2"), c("SMEMBERS new"),
		c("SMOVE a new 3"), c("EXISTS a"), c("SET str v"), c("SMOVE nos str a"), c("SMOVE str b x"), c("SMOVE b str x"),
		c("SMOVE b"), c("SADD p 5"), c("SPOP p"), c("EXISTS p"), c("SPOP p"), c("SPOP p 3"), c("SPOP p 0"),
		c("SADD p 1 2 3"), c("SPOP p 0"), c("SPOP p 3"), c("EXISTS p"), c("SADD p 7 8"), c("SPOP p 5"), c("SPOP p -1"),
		c("SPOP p x"), c("SPOP str"), c("SPOP str 1"), c("SPOP p 1 2"), c("SPOP"),
		c("SADD r 1 2 3"), c("SRANDMEMBER r 3"), c("SRANDMEMBER r 10"), c("SRANDMEMBER r 0"), c("SRANDMEMBER nos"),
		c("SRANDMEMBER nos 5"), c("SRANDMEMBER nos -5"), c("SRANDMEMBER r x"), c("SRANDMEMBER r -9223372036854775808"),
		c("SRANDMEMBER str"), c("SRANDMEMBER str 2"), c("SRANDMEMBER r 1 2"), c("SRANDMEMBER"),
		c("SADD one z"), c("SRANDMEMBER one"), c("SRANDMEMBER one -3"), c("SRANDMEMBER one 1"),
	}
	diffCases["set-lead-scan"] = []step{
		c("SADD s 5 1 3"), c("SSCAN s 0"), c("SSCAN s 0 COUNT 1"), c("SSCAN s 0 MATCH 1*"), c("SSCAN s 0 MATCH *"),
		c("SSCAN nos 0"), c("SSCAN nos 0 COUNT 0"), c("SSCAN s 0 COUNT 0"), c("SSCAN s 0 COUNT x"), c("SSCAN s x"),
		c("SSCAN s 0 FOO"), c("SSCAN s 0 COUNT"), c("SET str v"), c("SSCAN str 0"), c("SADD t a b c"),
		s(scanSorted, "SSCAN", "t", "0", "COUNT", "100"), s(scanSorted, "SSCAN", "t", "0", "MATCH", "[ab]"),
		c("SSCAN s 18446744073709551615"), c("SSCAN s -1"),
	}
	diffCases["set-as-zset-input"] = []step{
		c("SADD s 1 2 3"), c("ZADD z 5 2 7 9"), c("ZUNION 2 s z WITHSCORES"), c("ZINTER 2 s z WITHSCORES"),
		c("ZDIFF 2 s z WITHSCORES"), c("ZUNIONSTORE d 2 s z WEIGHTS 2 1"), c("ZRANGE d 0 -1 WITHSCORES"),
		c("ZINTERCARD 2 s z"), c("ZUNION 1 s AGGREGATE MAX WITHSCORES"),
	}
}
