package kv_test

import (
	"fmt"
	"math/rand"
	"strconv"
)

// Bitmaps against redis-server: every command, option, edge and error.
func init() {
	diffCases["bitmap-setbit-getbit"] = []step{
		c("SETBIT k 7 1"), c("GET k"), c("SETBIT k 7 1"), c("SETBIT k 7 0"), c("GETBIT k 7"), c("SETBIT k 100 1"),
		c("STRLEN k"), c("GET k"), c("GETBIT k 100"), c("GETBIT k 101"), c("GETBIT k 99999999"), c("GETBIT nokey 3"),
		c("SETBIT k -1 1"), c("SETBIT k abc 1"), c("SETBIT k 1 2"), c("SETBIT k 1 -1"), c("SETBIT k 1 x"),
		c("SETBIT k 4294967296 1"), c("SETBIT k 4294967295 x"), c("SETBIT k 9223372036854775807 1"),
		c("SETBIT k 99999999999999999999 1"), c("SETBIT k +1 1"), c("SETBIT k 01 1"), c("SETBIT k 1 01"),
		c("GETBIT k 4294967296"), c("GETBIT k -1"), c("GETBIT k 1.5"), s(exact, "GETBIT", "k", ""),
		c("SET n 12345"), c("GETBIT n 2"), c("SETBIT n 7 0"), c("GET n"), c("RPUSH l a"), c("SETBIT l 0 1"),
		c("GETBIT l 0"), c("SETBIT"), c("SETBIT k 1"), c("GETBIT k"), c("SETBIT k 0 1 1"),
		c("SET e v EX 100"), c("SETBIT e 0 1"), c("TTL e", approxInt), c("GET e"),
		c("SETBIT big 80000 1"), c("STRLEN big"), c("BITCOUNT big"), c("SETBIT big 10 1"), c("STRLEN big"),
	}
	diffCases["bitmap-bitcount"] = []step{
		c("BITCOUNT nokey"), c("BITCOUNT nokey 0 x"), c("BITCOUNT nokey a b c d"), c("SET k foobar"), c("BITCOUNT k"),
		c("BITCOUNT k 0 0"), c("BITCOUNT k 1 1"), c("BITCOUNT k 1 -1"), c("BITCOUNT k -2 -1"), c("BITCOUNT k -1 -2"),
		c("BITCOUNT k 5 1"), c("BITCOUNT k 0 100"), c("BITCOUNT k -100 100"), c("BITCOUNT k 100 200"),
		c("BITCOUNT k 5 30 BIT"), c("BITCOUNT k 5 30 bit"), c("BITCOUNT k 0 0 BYTE"), c("BITCOUNT k 0 -1 BIT"),
		c("BITCOUNT k -9 -1 BIT"), c("BITCOUNT k 1 6 BIT"), c("BITCOUNT k 3 3 BIT"), c("BITCOUNT k 47 47 BIT"),
		c("BITCOUNT k 46 100 BIT"), c("BITCOUNT k 9 8 BIT"), c("BITCOUNT k -1 -5 foo"), c("BITCOUNT k 0 1 foo"),
		c("BITCOUNT k 0"), c("BITCOUNT k 0 1 BIT x"), c("BITCOUNT k a 1"), c("BITCOUNT k 1 a"), c("BITCOUNT k a b BIT"),
		c("BITCOUNT k 0 9223372036854775807 BIT"), c("BITCOUNT k -9223372036854775808 -1 BIT"),
		c("SET e \"\""), s(exact, "SET", "empty", ""), c("BITCOUNT empty"), c("BITCOUNT empty 0 -1"), c("BITCOUNT empty 0 -1 BIT"),
		c("LPUSH l a"), c("BITCOUNT l"), c("BITCOUNT l 0 x"), c("BITCOUNT"), c("SET n 255"), c("BITCOUNT n"),
		s(exact, "SET", "bin", "\xff\xf0\x00\x0f\xaa\x55\xff\xff\xff\xff\xff\xff\xff\xff\x01"), c("BITCOUNT bin"),
		c("BITCOUNT bin 3 13"), c("BITCOUNT bin 3 13 BIT"), c("BITCOUNT bin 13 113 BIT"),
	}
	diffCases["bitmap-bitpos"] = []step{
		c("BITPOS nokey 1"), c("BITPOS nokey 0"), c("BITPOS nokey 1 x y z w"), c("BITPOS nokey 2"), c("BITPOS nokey x"),
		s(exact, "SET", "k", "\xff\xf0\x00"), c("BITPOS k 0"), c("BITPOS k 1"), c("BITPOS k 1 2"), c("BITPOS k 0 2"),
		c("BITPOS k 1 0 -1"), c("BITPOS k 0 0 0"), c("BITPOS k 0 0 1"), c("BITPOS k 0 0 -1"), c("BITPOS k 1 2 -1"),
		c("BITPOS k 1 7 15 BIT"), c("BITPOS k 0 7 15 BIT"), c("BITPOS k 0 0 11 BIT"), c("BITPOS k 0 0 12 BIT"),
		c("BITPOS k 1 12 23 BIT"), c("BITPOS k 0 3 3 BIT"), c("BITPOS k 0 13 14 BIT"), c("BITPOS k 1 5 BIT"),
		c("BITPOS k 1 5 2"), c("BITPOS k 1 -1 -2"), c("BITPOS k 0 100"), c("BITPOS k 0 -100"), c("BITPOS k 1 0 0 byte"),
		c("BITPOS k 1 0 0 foo"), c("BITPOS k 1 0 0 BIT x"), c("BITPOS k 1 a"), c("BITPOS k 1 0 a"), c("BITPOS k 1 a b foo"),
		c("BITPOS k 1 0 a foo"), c("BITPOS k 2 0"), c("BITPOS k -1"),
		s(exact, "SET", "ones", "\xff\xff\xff"), c("BITPOS ones 0"), c("BITPOS ones 0 0"), c("BITPOS ones 0 0 -1"),
		c("BITPOS ones 0 0 -1 BIT"), c("BITPOS ones 0 3 20 BIT"), c("BITPOS ones 1 3 20 BIT"), c("BITPOS ones 0 1 BIT"),
		s(exact, "SET", "zeros", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"),
		c("BITPOS zeros 1"), c("BITPOS zeros 0"), c("BITPOS zeros 1 0 -2"), c("BITPOS zeros 1 3 143 BIT"),
		c("BITPOS zeros 1 3 142 BIT"), c("BITPOS zeros 0 9 -1 BIT"),
		s(exact, "SET", "empty", ""), c("BITPOS empty 0"), c("BITPOS empty 1"), c("BITPOS empty 0 0"), c("BITPOS empty 0 0 -1 BIT"),
		c("RPUSH l a"), c("BITPOS l 0"), c("BITPOS l 2"), c("BITPOS l 0 x"), c("BITPOS k"),
	}
	diffCases["bitmap-bitop"] = []step{
		s(exact, "SET", "a", "\xff\x0f\xaa"), s(exact, "SET", "b", "\x0f\xff"), c("BITOP AND d a b"), c("GET d"),
		c("BITOP OR d a b"), c("GET d"), c("BITOP XOR d a b"), c("GET d"), c("BITOP NOT d a"), c("GET d"),
		c("BITOP and d a b nokey"), c("GET d"), c("BITOP or d nokey a"), c("GET d"), c("BITOP xor d a a"), c("GET d"),
		c("BITOP AND d nokey nokey2"), c("EXISTS d"), c("SET d x"), c("BITOP OR d nokey"), c("EXISTS d"),
		c("BITOP NOT d a b"), c("BITOP NOT d"), c("BITOP FOO d a"), c("BITOP d a"), c("RPUSH l x"), c("BITOP AND d a l"),
		c("BITOP AND l a"), c("TYPE l"), c("GET l"), c("SET t v EX 100"), c("BITOP OR t a"), c("TTL t"),
		c("BITOP OR a a b"), c("GET a"), c("SET n 12"), c("BITOP NOT d n"), c("GET d"),
		s(exact, "SET", "long1", "0123456789abcdef0123456789abcdefXYZ"), s(exact, "SET", "long2", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefgh"),
		c("BITOP AND d long1 long2"), c("GET d"), c("BITOP OR d long1 long2 a"), c("GET d"), c("BITOP XOR d long1 long2"),
		c("GET d"), c("BITOP NOT d long1"), c("GET d"), s(exact, "SET", "empty", ""), c("BITOP NOT d empty"), c("EXISTS d"),
		c("BITOP AND d empty a"), c("GET d"),
	}
	diffCases["bitmap-bitfield"] = []step{
		c("BITFIELD k"), c("BITFIELD k GET u8 0"), c("EXISTS k"), c("BITFIELD k SET i8 0 -100 GET u8 0 GET i4 0"),
		c("GET k"), c("BITFIELD k INCRBY u2 100 1 OVERFLOW SAT INCRBY u2 102 1"), c("BITFIELD k INCRBY i5 100 1 GET u4 0"),
		c("BITFIELD k SET u8 #1 255 GET u8 #1 GET u8 8"), c("BITFIELD k OVERFLOW WRAP INCRBY u8 #1 10"),
		c("BITFIELD k OVERFLOW SAT INCRBY u8 #1 500"), c("BITFIELD k OVERFLOW FAIL INCRBY u8 #1 1"),
		c("BITFIELD k OVERFLOW SAT INCRBY i8 0 -1000 INCRBY i8 0 2000 OVERFLOW FAIL INCRBY i8 0 1 INCRBY i8 0 -1"),
		c("BITFIELD k OVERFLOW WRAP INCRBY i8 0 200 INCRBY i8 0 -300"), c("BITFIELD k SET i64 0 -9223372036854775808"),
		c("BITFIELD k INCRBY i64 0 -1"), c("BITFIELD k OVERFLOW SAT INCRBY i64 0 -1 INCRBY i64 0 9223372036854775807 INCRBY i64 0 1"),
		c("BITFIELD k OVERFLOW FAIL INCRBY i64 0 1"), c("BITFIELD k SET u63 0 9223372036854775807 GET u63 0 GET i64 0"),
		c("BITFIELD k OVERFLOW WRAP INCRBY u63 0 1 GET u63 0"), c("BITFIELD k OVERFLOW SAT SET u4 0 100 SET i4 4 -100 SET i4 4 100 GET u8 0"),
		c("BITFIELD k OVERFLOW FAIL SET u4 0 16 SET u4 0 -1 SET i4 0 8 SET i4 0 -9 SET i4 0 -8 GET i4 0"),
		c("BITFIELD k OVERFLOW WRAP SET u4 0 17 SET i4 0 9 SET u1 3 -1 GET u8 0"), c("BITFIELD k SET u1 0 1 GET u1 0 GET i1 0"),
		c("BITFIELD k INCRBY i1 0 1 INCRBY i1 0 1"), c("BITFIELD k OVERFLOW SAT INCRBY i1 0 5 INCRBY i1 0 -5"),
		c("BITFIELD k GET u8 10000 GET i64 5 GET u63 3"), c("STRLEN k"), c("BITFIELD k SET u8 #100 1"), c("STRLEN k"),
		c("BITFIELD k GET u64 0"), c("BITFIELD k GET i65 0"), c("BITFIELD k GET u0 0"), c("BITFIELD k GET i0 0"),
		c("BITFIELD k GET x8 0"), c("BITFIELD k GET I8 0"), c("BITFIELD k GET u8"), c("BITFIELD k GET u8 -1"),
		c("BITFIELD k GET u8 #-1"), c("BITFIELD k GET u8 ##1"), c("BITFIELD k GET u8 4294967296"),
		c("BITFIELD k GET u8 #536870912"), c("BITFIELD k GET u8 #536870911"), c("BITFIELD k GET i64 #67108864"),
		c("BITFIELD k GET i64 #9223372036854775807"), c("BITFIELD k GET u8 x"), c("BITFIELD k SET u8 0"),
		c("BITFIELD k SET u8 0 x"), c("BITFIELD k INCRBY u8 0 1.5"), c("BITFIELD k OVERFLOW"), c("BITFIELD k OVERFLOW foo"),
		c("BITFIELD k OVERFLOW foo GET u8 0"), c("BITFIELD k FOO u8 0"), c("BITFIELD k GET u8 0 SET"), c("BITFIELD k get u8 0 overflow sat incrby u8 0 1"),
		c("BITFIELD k GET u8 0 SET u64 0 1"), c("BITFIELD k SET u8 0 1 GET u8 x"), c("BITFIELD k GET u8 0 SET u8 0 99999999999999999999"),
		s(exact, "BITFIELD", "k", "GET", "", "0"), s(exact, "BITFIELD", "k", "GET", "u8", ""), s(exact, "BITFIELD", "k", "GET", "u8\x00x", "0"),
		c("BITFIELD_RO k GET u8 0 GET i16 #1"), c("BITFIELD_RO k SET u8 0 1"), c("BITFIELD_RO k INCRBY u8 0 1"),
		c("BITFIELD_RO k OVERFLOW SAT GET u8 0"), c("BITFIELD_RO k GET u9 #1 GET u8"), c("BITFIELD_RO nokey GET u8 0"),
		c("BITFIELD_RO nokey"), c("BITFIELD_RO k SET u8 0 x"), c("RPUSH l a"), c("BITFIELD l GET u8 0"), c("BITFIELD l SET u8 0 1"),
		c("BITFIELD_RO l GET u8 0"), c("BITFIELD_RO l SET u8 0 1"), c("BITFIELD l"), c("BITFIELD"), c("BITFIELD_RO"),
		c("BITFIELD n OVERFLOW FAIL INCRBY u2 0 5"), c("GET n"), c("SET t v EX 100"), c("BITFIELD t SET u8 16 65"), c("TTL t", approxInt), c("GET t"),
		c("SET num 1234"), c("BITFIELD num GET u8 0 GET u16 8 INCRBY u8 0 1"), c("GET num"),
	}
	diffCases["bitmap-commands"] = []step{
		c("COMMAND INFO setbit getbit bitcount bitpos bitop bitfield bitfield_ro"),
		c("COMMAND GETKEYS BITOP AND d a b c"), c("COMMAND GETKEYS BITFIELD k GET u8 0"),
	}
}

// bitmapRandomSteps is a random sequence of bit writes and reads over a few
// keys, the same on every run (seeded), with offsets and ranges around byte
// and word edges.
func bitmapRandomSteps(seed int64, n int) []step {
	r := rand.New(rand.NewSource(seed))
	keys := []string{"a", "b", "c"}
	key := func() string { return keys[r.Intn(len(keys))] }
	num := func(limit int) string { return strconv.Itoa(r.Intn(2*limit+1) - limit) }
	types := []string{"u1", "i1", "u3", "i5", "u8", "i8", "u13", "i16", "u31", "i32", "u63", "i63", "i64"}
	units := []string{"", " BIT", " BYTE"}
	modes := []string{"WRAP", "SAT", "FAIL"}
	var steps []step
	for range n {
		var cmd string
		switch r.Intn(9) {
		case 0, 1:
			cmd = fmt.Sprintf("SETBIT %s %d %d", key(), r.Intn(300), r.Intn(2))
		case 2:
			cmd = fmt.Sprintf("GETBIT %s %d", key(), r.Intn(320))
		case 3:
			cmd = fmt.Sprintf("BITCOUNT %s %s %s%s", key(), num(40), num(40), units[r.Intn(3)])
		case 4:
			cmd = fmt.Sprintf("BITPOS %s %d", key(), r.Intn(2))
			switch r.Intn(4) {
			case 1:
				cmd += " " + num(40)
			case 2:
				cmd += " " + num(40) + " " + num(40)
			case 3:
				cmd += " " + num(300) + " " + num(300) + units[1+r.Intn(2)]
			}
		case 5:
			cmd = fmt.Sprintf("BITOP %s %s %s %s", []string{"AND", "OR", "XOR"}[r.Intn(3)], key(), key(), key())
			if r.Intn(4) == 0 {
				cmd = fmt.Sprintf("BITOP NOT %s %s", key(), key())
			}
		default:
			cmd = "BITFIELD " + key()
			for range 1 + r.Intn(4) {
				t := types[r.Intn(len(types))]
				off := strconv.Itoa(r.Intn(200))
				if r.Intn(3) == 0 {
					off = "#" + strconv.Itoa(r.Intn(10))
				}
				switch r.Intn(4) {
				case 0:
					cmd += " GET " + t + " " + off
				case 1:
					cmd += " SET " + t + " " + off + " " + strconv.FormatInt(r.Int63()>>r.Intn(64)*int64(1-2*r.Intn(2)), 10)
				case 2:
					cmd += " INCRBY " + t + " " + off + " " + strconv.FormatInt(r.Int63()>>r.Intn(64)*int64(1-2*r.Intn(2)), 10)
				case 3:
					cmd += " OVERFLOW " + modes[r.Intn(3)]
				}
			}
		}
		steps = append(steps, c(cmd))
		if r.Intn(8) == 0 {
			steps = append(steps, c("GET "+key()))
		}
	}
	return append(steps, c("GET a"), c("GET b"), c("GET c"))
}

func init() {
	for seed := range int64(4) {
		diffCases["bitmap-random-"+strconv.FormatInt(seed, 10)] = bitmapRandomSteps(seed, 400)
	}
}
