package kv_test

import "github.com/shoalkv/shoal/kv"

// Every float argument of float_parse_test.go's table, sent to redis-server
// and to Shoal in each place a float is read: a score (ZADD), both kinds of
// score range end (ZCOUNT), a blocking timeout (BLPOP, inside MULTI so that
// it never blocks), and INCRBYFLOAT's and HINCRBYFLOAT's increments. Run by
// TestDifferentialAgainstRedis.
func init() {
	steps := []step{c("ZADD r -inf a -1e308 b -1 c -0.5 d 0 e 1e-320 f 0.5 g 1 h 16 i 1e308 j +inf k")}
	for _, x := range kv.FloatArgInputs {
		steps = append(steps,
			s(exact, "ZADD", "z", x, "m"), c("ZSCORE z m"), c("DEL z"),
			s(exact, "ZCOUNT", "r", x, "+inf"), s(exact, "ZCOUNT", "r", "("+x, "+inf"),
			c("MULTI"), s(exact, "BLPOP", "nolist", x), c("EXEC"),
			s(exact, "INCRBYFLOAT", "f", x), c("DEL f"),
			s(exact, "HINCRBYFLOAT", "h", "f", x), c("DEL h"),
		)
	}
	// Timeouts too small for a float64 round up to a millisecond, as in
	// Redis, rather than to 0, which would block for ever.
	steps = append(steps, c("BLPOP nolist 1e-400"), c("BLPOP nolist 0x1p-16445"), c("BLPOP nolist 0.0001"))
	diffCases["float-arguments"] = steps
}
