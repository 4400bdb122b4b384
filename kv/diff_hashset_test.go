package kv_test

import (
	"fmt"
	"strings"
)

// Hashes and sets against redis-server 7.0, RESP2 and RESP3 (diffCases runs
// each case in both, plain and pipelined). Replies from the small encodings
// (listpack hashes, intsets) are compared byte for byte, order included;
// replies from hashtables, whose order depends on the hash function, as sets
// (sortedBulk), as Redis's own tests compare them.

// many returns cmd key followed by n generated arguments: prefix0 .. (with
// pairs, prefix0 v0 prefix1 v1 ...).
func many(cmd, key, prefix string, n int, pairs bool) step {
	args := []string{cmd, key}
	for i := 0; i < n; i++ {
		args = append(args, fmt.Sprint(prefix, i))
		if pairs {
			args = append(args, fmt.Sprint("v", i))
		}
	}
	return s(exact, args...)
}

var (
	long64 = strings.Repeat("a", 64)
	long65 = strings.Repeat("b", 65)
)

func init() {
	diffCases["hash-basic"] = []step{
		c("HSET h f1 v1"), c("HSET h f2 v2 f3 v3"), c("HSET h f1 new f4 v4"), c("HGET h f1"), c("HGET h nosuch"),
		c("HGET nosuch f"), c("HMGET h f1 nosuch f3"), c("HMGET nosuch a b"), c("HGETALL h"), c("HKEYS h"), c("HVALS h"),
		c("HLEN h"), c("HLEN nosuch"), c("HEXISTS h f1"), c("HEXISTS h nosuch"), c("HEXISTS nosuch f"),
		c("HSTRLEN h f1"), c("HSTRLEN h nosuch"), c("HSTRLEN nosuch f"), c("HGETALL nosuch"), c("HKEYS nosuch"),
		c("HVALS nosuch"), c("HMSET h f5 v5 f1 again"), c("HGETALL h"), c("HSETNX h f1 x"), c("HSETNX h f6 v6"),
		c("HSETNX nx f v"), c("HGETALL nx"), c("HDEL h f1 nosuch f2"), c("HDEL h nosuch"), c("HDEL nosuch f"),
		c("HGETALL h"), c("HDEL h f3 f4 f5 f6 f7"), c("EXISTS h"), c("HSET h a 1"), c("HDEL h a a"), c("EXISTS h"),
		s(exact, "HSET", "bin", "f\x00\r\n", "v\x00\r\n", "", ""), s(exact, "HGET", "bin", "f\x00\r\n"), s(exact, "HGET", "bin", ""),
		c("HGETALL bin"), c("HSTRLEN bin"), c("TYPE bin"), c("hset H x 1"), c("HgetAll H"),
		// Arity and types.
		c("HSET h"), c("HSET h f"), c("HSET h f v f2"), c("HMSET h f"), c("HMSET h f v f2"), c("HSETNX h f"), c("HGET h"),
		c("HMGET h"), c("HGETALL"), c("HGETALL h x"), c("HDEL h"), c("HLEN"), c("HEXISTS h"), c("HSTRLEN h"), c("HKEYS"),
		c("HVALS h x"), c("SET str v"), c("HSET str f v"), c("HMSET str f v"), c("HSETNX str f v"), c("HGET str f"),
		c("HMGET str f"), c("HGETALL str"), c("HDEL str f"), c("HLEN str"), c("HEXISTS str f"), c("HSTRLEN str f"),
		c("HKEYS str"), c("HVALS str"), c("HINCRBY str f 1"), c("HINCRBYFLOAT str f 1"), c("HRANDFIELD str"),
		c("HSCAN str 0"), c("GET str"), c("SADD sset a"), c("HGET sset a"), c("HSET sset a b"),
	}

	diffCases["hash-incr"] = []step{
		c("HINCRBY h n 5"), c("HINCRBY h n -7"), c("HGET h n"), c("HINCRBY h n abc"), c("HINCRBY h n 1.5"),
		c("HINCRBY h n 9223372036854775808"), c("HSET h big 9223372036854775807"), c("HINCRBY h big 1"),
		c("HINCRBY h big 0"), c("HINCRBY h big -9223372036854775808"), c("HSET h small -9223372036854775808"),
		c("HINCRBY h small -1"), c("HINCRBY h small 1"), c("HSET h s abc"), c("HINCRBY h s 1"),
		s(exact, "HSET", "h", "sp", " 1"), c("HINCRBY h sp 1"), c("HSET h z 01"), c("HINCRBY h z 1"), c("HSET h m -0"),
		c("HINCRBY h m 1"), c("HINCRBY nosuch abc 1"), c("EXISTS nosuch"), c("HINCRBY new f abc"), c("EXISTS new"),
		c("HINCRBY h n"), c("HINCRBY h"),
		c("HINCRBYFLOAT f x 1.5"), c("HINCRBYFLOAT f x 0.1"), c("HINCRBYFLOAT f x -1.6"), c("HINCRBYFLOAT f x abc"),
		c("HINCRBYFLOAT f x inf"), c("HINCRBYFLOAT f x -inf"), c("HINCRBYFLOAT f x nan"), c("HINCRBYFLOAT f x 5.0e3"),
		c("HINCRBYFLOAT f y 0.1"), c("HINCRBYFLOAT f y 0.2"), c("HINCRBYFLOAT f z 1e20"), c("HINCRBYFLOAT f z 3.0e-3"),
		c("HSET f w 1.7976931348623157e308"), c("HINCRBYFLOAT f w 1.7976931348623157e308"), c("HGET f w"),
		c("HSET f inf inf"), c("HINCRBYFLOAT f inf 1"), c("HSET f s abc"), c("HINCRBYFLOAT f s 1"), c("HSET f i 10"),
		c("HINCRBYFLOAT f i 1"), c("HINCRBYFLOAT f i -11"), c("HINCRBYFLOAT f i 1e400"), c("HINCRBYFLOAT f i 0x10"),
		s(exact, "HINCRBYFLOAT", "f", "i", " 1"), s(exact, "HINCRBYFLOAT", "f", "i", ""), c("HINCRBYFLOAT nosuch2 x nan"),
		c("EXISTS nosuch2"), c("HINCRBYFLOAT nosuch2 x inf"), c("EXISTS nosuch2"), c("HGETALL f", sortedBulk), c("OBJECT ENCODING f"),
		c("HINCRBYFLOAT f x"), c("HINCRBYFLOAT f x 1 2"),
		// A long result converts the listpack, as a long HSET value would.
		c("HSET e a 1"), c("HINCRBYFLOAT e a 1e70"), c("OBJECT ENCODING e"), c("HSTRLEN e a"),
		s(exact, "HINCRBY", "e2", long65, "1"), c("OBJECT ENCODING e2"),
	}

	diffCases["hash-encoding"] = []step{
		many("HSET", "h", "f", 512, true), c("OBJECT ENCODING h"), c("HLEN h"), c("HSET h f0 again"),
		c("OBJECT ENCODING h"), c("HSETNX h new v"), c("OBJECT ENCODING h"), c("HDEL h new f0 f1 f2"), c("OBJECT ENCODING h"),
		c("HLEN h"), c("HKEYS h", sortedBulk), c("HVALS h", sortedBulk), c("HGETALL h", sortedBulk), c("HGET h f100"),
		s(exact, "HSET", "l", "a", long64, long64, "b"), c("OBJECT ENCODING l"), c("HGETALL l"),
		s(exact, "HSET", "l", "c", long65), c("OBJECT ENCODING l"), c("HGETALL l", sortedBulk),
		s(exact, "HSET", "l2", long65, "v"), c("OBJECT ENCODING l2"), s(exact, "HMSET", "l3", "a", "1", "b", long65),
		c("OBJECT ENCODING l3"), s(exact, "HSETNX", "l4", "a", long65), c("OBJECT ENCODING l4"),
		s(exact, "HSET", "l5", "a", "1"), s(exact, "HSETNX", "l5", "a", long65), c("OBJECT ENCODING l5"),
		many("HMSET", "m", "k", 513, true), c("OBJECT ENCODING m"), c("COPY h h2"), c("OBJECT ENCODING h2"),
		c("HLEN h2"), c("HGET h2 f511"), c("COPY l3 l6"), c("HGETALL l6", sortedBulk), c("RENAME m m2"), c("HLEN m2"),
		// Insertion order survives replacing values of other lengths and deletes.
		c("HSET o a 1 b 22 c 333"), c("HSET o b x"), c("HSET o a longer-value"), c("HDEL o b"), c("HSET o b 2"),
		c("HGETALL o"), c("HKEYS o"), c("HVALS o"), c("HSCAN o 0"),
	}

	diffCases["hash-scan-randfield"] = []step{
		c("HSCAN nosuch 0"), c("HSCAN nosuch x"), c("HSCAN nosuch 0 COUNT 0"), c("HSET h a 1 b 2 c 3 ab 4"),
		c("HSCAN h 0"), c("HSCAN h 0 MATCH a*"), c("HSCAN h 0 MATCH *"), c("HSCAN h 0 COUNT 1"), c("HSCAN h 0 COUNT 0"),
		c("HSCAN h 0 COUNT -1"), c("HSCAN h 0 COUNT x"), c("HSCAN h 0 COUNT"), c("HSCAN h 0 MATCH"), c("HSCAN h 0 TYPE hash"),
		c("HSCAN h 0 NOVALUES"), c("HSCAN h x"), c("HSCAN h -1"), c("HSCAN h 0 match [ab] count 5"), c("HSCAN h"),
		c("HRANDFIELD nosuch"), c("HRANDFIELD nosuch 5"), c("HRANDFIELD nosuch -5 WITHVALUES"), c("HRANDFIELD nosuch 0"),
		c("HRANDFIELD nosuch x"), c("HRANDFIELD nosuch 1 FOO"), c("HRANDFIELD nosuch 9223372036854775807 WITHVALUES"),
		c("HSET one f v"), c("HRANDFIELD one"), c("HRANDFIELD one 1"), c("HRANDFIELD one -3"), c("HRANDFIELD one -3 WITHVALUES"),
		c("HRANDFIELD one 5 WITHVALUES"), c("HRANDFIELD one 0"), c("HRANDFIELD one 0 WITHVALUES"),
		c("HRANDFIELD h 4"), c("HRANDFIELD h 10 WITHVALUES"), c("HRANDFIELD h 9223372036854775807"),
		c("HRANDFIELD h 4611686018427387903 WITHVALUES"), c("HRANDFIELD h 4611686018427387904 WITHVALUES"),
		c("HRANDFIELD h -4611686018427387904 WITHVALUES"), c("HRANDFIELD h -9223372036854775808"),
		c("HRANDFIELD h -9223372036854775807 WITHVALUES"), c("HRANDFIELD h x"), c("HRANDFIELD h 1.5"),
		c("HRANDFIELD h 1 WITHVALUES x"), c("HRANDFIELD"),
		many("HSET", "big", "f", 600, true), c("HRANDFIELD big 600", sortedBulk), c("HRANDFIELD big 1000", sortedBulk),
		c("HSCAN big 0 MATCH f59? COUNT 100000", scanSorted), c("HSCAN big 0 MATCH nomatch COUNT 100000"),
	}

	diffCases["set-basic"] = []step{
		c("SADD s a b c"), c("SADD s a d"), c("SCARD s"), c("SCARD nosuch"), c("SISMEMBER s a"), c("SISMEMBER s x"),
		c("SISMEMBER nosuch a"), c("SMISMEMBER s a x b"), c("SMISMEMBER nosuch a b"), c("SMEMBERS s", sortedBulk),
		c("SMEMBERS nosuch"), c("SREM s a x"), c("SREM s x"), c("SREM nosuch a"), c("SMEMBERS s", sortedBulk),
		c("SREM s b c d e"), c("EXISTS s"), c("SADD i 3 1 2 -5 100000 -9223372036854775808"), c("SMEMBERS i"),
		c("OBJECT ENCODING i"), c("SISMEMBER i 3"), c("SISMEMBER i 03"), c("SISMEMBER i x"), c("SMISMEMBER i 1 2 9 -5"),
		c("SREM i 3 x 03"), c("SMEMBERS i"), c("SADD i 7 7 7"), c("SMEMBERS i"),
		s(exact, "SADD", "bin", "a\x00\r\n", ""), s(exact, "SISMEMBER", "bin", ""), c("SCARD bin"),
		c("sadd S x"), c("SmEmBeRs S"),
		c("SADD s"), c("SADD"), c("SREM s"), c("SMEMBERS"), c("SMEMBERS a b"), c("SISMEMBER s"), c("SMISMEMBER s"),
		c("SCARD"), c("SET str v"), c("SADD str a"), c("SREM str a"), c("SMEMBERS str"), c("SISMEMBER str a"),
		c("SMISMEMBER str a"), c("SCARD str"), c("SPOP str"), c("SPOP str 1"), c("SRANDMEMBER str"),
		c("SRANDMEMBER str 2"), c("SSCAN str 0"), c("HSET hh f v"), c("SADD hh a"), c("SMEMBERS hh"),
	}

	diffCases["set-encoding"] = []step{
		many("SADD", "i", "", 512, false), c("OBJECT ENCODING i"), c("SADD i 511"), c("OBJECT ENCODING i"),
		c("SADD i 512"), c("OBJECT ENCODING i"), c("SCARD i"), c("SREM i 512 1 2 3"), c("OBJECT ENCODING i"),
		c("SMEMBERS i", sortedBulk), c("SADD j 1 2 3"), c("SADD j a"), c("OBJECT ENCODING j"), c("SMEMBERS j", sortedBulk),
		c("SREM j a"), c("OBJECT ENCODING j"), c("SADD k -0"), c("OBJECT ENCODING k"), c("SADD k2 01"), c("OBJECT ENCODING k2"),
		c("SADD k3 9223372036854775808"), c("OBJECT ENCODING k3"), c("SADD k4 -9223372036854775809"), c("OBJECT ENCODING k4"),
		c("SADD k5 +1"), c("OBJECT ENCODING k5"), c("SADD k6 1.0"), c("OBJECT ENCODING k6"),
		c("SADD w 1 40000 -70000 5000000000 -32768 32767"), c("SMEMBERS w"), c("OBJECT ENCODING w"),
		s(exact, "SADD", "l", long65), c("OBJECT ENCODING l"), c("COPY i i2"), c("OBJECT ENCODING i2"), c("SCARD i2"),
		c("COPY w w2"), c("SMEMBERS w2"), c("RENAME w w3"), c("SMEMBERS w3"), c("TYPE w3"),
	}

	diffCases["set-pop-randmember"] = []step{
		c("SPOP nosuch"), c("SPOP nosuch 0"), c("SPOP nosuch 3"), c("SPOP nosuch x"), c("SPOP nosuch -1"),
		c("SPOP nosuch 1 2"), c("SADD one x"), c("SPOP one 0"), c("SPOP one"), c("EXISTS one"), c("SADD one x"),
		c("SPOP one 1"), c("EXISTS one"), c("SADD i 1 2 3"), c("SPOP i 3"), c("EXISTS i"), c("SADD i 1 2 3"),
		c("SPOP i 10"), c("EXISTS i"), c("SADD i 5"), c("SPOP i 9223372036854775807"), c("SPOP i -9223372036854775808"),
		c("SADD s a b c"), c("SPOP s 3", sortedBulk), c("EXISTS s"),
		c("SRANDMEMBER nosuch"), c("SRANDMEMBER nosuch 5"), c("SRANDMEMBER nosuch -5"), c("SRANDMEMBER nosuch 0"),
		c("SRANDMEMBER nosuch x"), c("SRANDMEMBER nosuch 1 2"), c("SRANDMEMBER nosuch -9223372036854775808"),
		c("SADD one only"), c("SRANDMEMBER one"), c("SRANDMEMBER one 1"), c("SRANDMEMBER one -3"), c("SRANDMEMBER one 3"),
		c("SRANDMEMBER one 0"), c("SADD i 3 1 2"), c("SRANDMEMBER i 3"), c("SRANDMEMBER i 10"),
		c("SRANDMEMBER i 9223372036854775807"), c("SRANDMEMBER i -9223372036854775808"), c("SRANDMEMBER i 1.5"),
		c("SRANDMEMBER i 1 2"), c("SRANDMEMBER"), c("SPOP"),
		many("SADD", "big", "m", 700, false), c("SRANDMEMBER big 700", sortedBulk), c("SRANDMEMBER big 5000", sortedBulk),
		c("SPOP big 700", sortedBulk), c("EXISTS big"),
	}

	diffCases["set-algebra"] = []step{
		c("SADD a 1 2 3 4"), c("SADD b 3 4 5"), c("SADD c 4 5 6 x"), c("SADD d 0 -1"),
		c("SINTER a b"), c("SINTER a b c"), c("SINTER a nosuch"), c("SINTER nosuch"), c("SINTER a"), c("SINTER a a"),
		c("SUNION a b"), c("SUNION a b c", sortedBulk), c("SUNION a nosuch d"), c("SUNION nosuch"), c("SDIFF a b"),
		c("SDIFF a b c"), c("SDIFF c a", sortedBulk), c("SDIFF a nosuch"), c("SDIFF nosuch a"), c("SDIFF a a"),
		c("SINTERSTORE dst a b"), c("SMEMBERS dst"), c("OBJECT ENCODING dst"), c("SINTERSTORE dst a nosuch"), c("EXISTS dst"),
		c("SUNIONSTORE dst a b d"), c("SMEMBERS dst"), c("OBJECT ENCODING dst"), c("SUNIONSTORE dst a c"),
		c("OBJECT ENCODING dst"), c("SMEMBERS dst", sortedBulk), c("SDIFFSTORE dst c a"), c("SMEMBERS dst", sortedBulk),
		c("OBJECT ENCODING dst"), c("SDIFFSTORE dst a a"), c("EXISTS dst"), c("SUNIONSTORE a a b"), c("SMEMBERS a"),
		c("SUNIONSTORE nosuch2 nosuch"), c("EXISTS nosuch2"), c("SET t v EX 100"), c("SUNIONSTORE t b"), c("TTL t"),
		c("TYPE t"), c("SET str v"), c("SINTER a str"), c("SINTER nosuch str"), c("SUNION a str"), c("SDIFF nosuch str"),
		c("SDIFF str"), c("SINTERSTORE dst str a"), c("SUNIONSTORE str a"), c("TYPE str"), c("SDIFFSTORE dst"),
		c("SINTER"), c("SUNIONSTORE dst"), c("SINTERCARD 2 a b"), c("SINTERCARD 2 a b LIMIT 1"), c("SINTERCARD 2 a b LIMIT 0"),
		c("SINTERCARD 2 a b LIMIT -1"), c("SINTERCARD 2 a b LIMIT x"), c("SINTERCARD 2 a b LIMIT"), c("SINTERCARD 2 a b FOO"),
		c("SINTERCARD 2 a b LIMIT 1 LIMIT 5"), c("SINTERCARD 0 a"), c("SINTERCARD x a"), c("SINTERCARD -1 a"),
		c("SINTERCARD 3 a b"), c("SINTERCARD 1 nosuch"), c("SINTERCARD 2 nosuch str"), c("SINTERCARD 2 a str"),
		c("SINTERCARD 1 a"), c("SINTERCARD 1 a limit 2"), c("SINTERCARD"), c("SINTERCARD 1"),
		many("SADD", "n1", "", 600, false), many("SADD", "n2", "", 300, false), c("SINTERSTORE dst n1 n2"),
		c("OBJECT ENCODING dst"), c("SCARD dst"), c("SUNIONSTORE dst n1 n2"), c("OBJECT ENCODING dst"),
		c("SDIFFSTORE dst n1 n2"), c("OBJECT ENCODING dst"), c("SCARD dst"), c("SINTER n2 n1", sortedBulk),
		c("SINTERCARD 2 n1 n2 LIMIT 17"), c("SINTERCARD 2 n1 n2"),
	}

	diffCases["set-smove-scan"] = []step{
		c("SADD a 1 2 x"), c("SADD b 3"), c("SMOVE a b 1"), c("SMEMBERS b"), c("SMOVE a b 1"), c("SMOVE a b nosuch"),
		c("SMOVE a new x"), c("SMEMBERS new"), c("OBJECT ENCODING new"), c("SMOVE a new2 2"), c("OBJECT ENCODING new2"),
		c("EXISTS a"), c("SMOVE nosuch b 1"), c("SMOVE b b 3"), c("SMOVE b b 9"), c("SMOVE b new x"), c("SMEMBERS new"),
		c("SET str v"), c("SMOVE nosuch str a"), c("SMOVE str b a"), c("SMOVE b str 3"), c("SMOVE b str nosuch"),
		c("SMEMBERS b"), c("SMOVE b"), c("SMOVE b c d e"), c("SADD b 3"), c("SMOVE b b2 3"), c("EXISTS b"),
		c("SSCAN nosuch 0"), c("SSCAN nosuch x"), c("SADD i 5 1 3 -2"), c("SSCAN i 0"), c("SSCAN i 0 MATCH 1*"),
		c("SSCAN i 0 COUNT 1"), c("SSCAN i 0 COUNT 0"), c("SSCAN i 0 COUNT x"), c("SSCAN i 0 TYPE set"), c("SSCAN i 0 FOO"),
		c("SSCAN i x"), c("SSCAN i 18446744073709551616"), c("SSCAN i 0 MATCH"), c("SSCAN str 0"), c("SSCAN i"),
		c("SADD one member"), c("SSCAN one 0"), c("SSCAN one 0 MATCH m*"),
		many("SADD", "big", "m", 600, false), c("SSCAN big 0 MATCH m59? COUNT 100000", scanSorted),
	}

	// Under maxmemory 1 with noeviction, the denyoom writes answer OOM and
	// the others run.
	diffCases["hashset-oom"] = []step{
		c("HSET h a 1 b 2"), c("SADD s 1 2 3"), c("SADD t x y"), c("CONFIG SET maxmemory 1"), c("HSET h c 3"),
		c("HSET h a 1"), c("HMSET h a 1"), c("HSETNX h a 1"), c("HINCRBY h a 1"), c("HINCRBYFLOAT h a 1"), c("HDEL h a"),
		c("HGETALL h"), c("SADD s 4"), c("SADD s 1"), c("SINTERSTORE d s t"), c("SUNIONSTORE d s"), c("SDIFFSTORE d s t"),
		c("SMOVE s t 1"), c("SREM s 2"), c("SPOP t 5", sortedBulk), c("SMEMBERS s"), c("CONFIG SET maxmemory 0"), c("SADD s 9"),
	}
}
