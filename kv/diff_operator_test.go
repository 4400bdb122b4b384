package kv_test

// TOUCH, SUBSTR, LCS, MODULE LIST, COMMAND GETKEYS/GETKEYSANDFLAGS, CLIENT
// NO-EVICT, CLIENT REPLY, CLIENT UNBLOCK (of no one) and LOLWUT against
// redis-server.
func init() {
	// Arguments that do not fit a command's key specs, in Redis 7.0's
	// order of checks (no key arguments before arity; a spec that does not
	// fit voids every key; no keys is [] only for no_mandatory_keys).
	diffCases["getkeys-edges"] = []step{
		c("COMMAND GETKEYS ZUNIONSTORE d 0 x"), c("COMMAND GETKEYS ZUNIONSTORE d -1 x"), c("COMMAND GETKEYS ZUNIONSTORE d 3 x y"),
		c("COMMAND GETKEYS ZUNIONSTORE d 2 x y"), c("COMMAND GETKEYS ZUNIONSTORE d two x y"), c("COMMAND GETKEYS ZINTER 2 a"),
		c("COMMAND GETKEYS SINTERCARD 0 a"), c("COMMAND GETKEYS LMPOP 2 a LEFT"), c("COMMAND GETKEYS LMPOP 1 a LEFT"),
		c("COMMAND GETKEYS EVAL x 0"), c("COMMAND GETKEYS EVAL x 5 a"), c("COMMAND GETKEYS EVAL x -1 a"), c("COMMAND GETKEYS EVAL x y a"),
		c("COMMAND GETKEYS FCALL f 0"), c("COMMAND GETKEYSANDFLAGS EVAL x 0"), c("COMMAND GETKEYS ECHO a b"), c("COMMAND GETKEYS PING a b c"),
		c("COMMAND GETKEYS MSET a 1 b"), c("COMMAND GETKEYS MIGRATE h 1 k 0 0"), s(exact, "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "0"),
		s(exact, "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "0", "KEYS", "a", "b"), c("COMMAND GETKEYS CLIENT KILL x"),
		c("COMMAND GETKEYS OBJECT ENCODING k"), c("COMMAND GETKEYS MEMORY USAGE k"), c("COMMAND GETKEYS BLPOP a b 0"),
	}
	diffCases["operator"] = []step{
		c("LOLWUT"), c("LOLWUT VERSION 7"), c("LOLWUT VERSION abc"), c("LOLWUT VERSION"), c("LOLWUT foo"), c("LOLWUT VERSION 8 1 2"),
		c("MSET a 1 b 2"), c("TOUCH a b missing a"), c("TOUCH missing"), c("TOUCH"), c("OBJECT IDLETIME a"),
		c("SET s hello-world"), c("SUBSTR s 0 4"), c("SUBSTR s -5 -1"), c("SUBSTR s 100 200"), c("SUBSTR missing 0 1"),
		c("SUBSTR s x 1"), c("SUBSTR s 0"), c("RPUSH l x"), c("SUBSTR l 0 1"),
		c("MODULE LIST"), c("MODULE"), c("MODULE LIST x"), c("MODULE HELP"), c("module help"),
		c("COMMAND GETKEYS GET k"), c("COMMAND GETKEYS MSET a 1 b 2"), c("COMMAND GETKEYS SET k v EX 10"),
		c("COMMAND GETKEYS LMOVE src dst LEFT RIGHT"), c("COMMAND GETKEYS ZUNIONSTORE dst 2 a b WEIGHTS 1 2"),
		c("COMMAND GETKEYS ZMPOP 2 a b MIN"), c("COMMAND GETKEYS DEL a b c"), c("COMMAND GETKEYS PING"),
		c("COMMAND GETKEYS NOSUCH a"), c("COMMAND GETKEYS GET"), c("COMMAND GETKEYS"), c("COMMAND GETKEYS EXPIRE k 10"),
		c("COMMAND GETKEYSANDFLAGS GET k"), c("COMMAND GETKEYSANDFLAGS LMOVE src dst LEFT RIGHT"),
		c("COMMAND GETKEYSANDFLAGS SET k v"), c("COMMAND GETKEYSANDFLAGS SET k v GET"), c("COMMAND GETKEYSANDFLAGS SET k v EX 1 get"), c("COMMAND GETKEYSANDFLAGS ZUNIONSTORE dst 2 a b"),
		c("COMMAND GETKEYSANDFLAGS COPY a b"), c("COMMAND GETKEYSANDFLAGS PING"),
		c("CLIENT NO-EVICT on"), c("CLIENT NO-EVICT off"), c("CLIENT NO-EVICT maybe"), c("CLIENT NO-EVICT"),
		c("CLIENT UNBLOCK 99999999"), c("CLIENT UNBLOCK 99999999 ERROR"), c("CLIENT UNBLOCK 99999999 TIMEOUT"),
		c("CLIENT UNBLOCK 99999999 FOO"), c("CLIENT UNBLOCK x"), c("CLIENT UNBLOCK 1 TIMEOUT x"),
		c("CLIENT REPLY maybe"), c("CLIENT REPLY ON"),
		c("SHUTDOWN ABORT"), c("SHUTDOWN FOO"), c("SHUTDOWN SAVE NOSAVE"), c("SHUTDOWN ABORT NOW"), c("shutdown abort"),
		c("SET m hello"), c("RPUSH ml a b c"), c("MEMORY USAGE m", sameType), c("MEMORY USAGE ml", sameType),
		c("MEMORY USAGE missing"), c("MEMORY USAGE m SAMPLES x"), c("MEMORY USAGE m SAMPLES 5", sameType),
		c("MEMORY USAGE m FOO"), c("MEMORY USAGE m SAMPLES"), c("MEMORY USAGE"), c("MEMORY HELP"), c("MEMORY"),
		c("MEMORY PURGE"), c("MEMORY STATS", sameType), c("MEMORY DOCTOR", sameType), c("MEMORY MALLOC-STATS", sameType),
		c("MEMORY FOO"),
		c("LATENCY LATEST"), c("LATENCY HISTORY command"), c("LATENCY RESET"), c("LATENCY RESET a b"), c("LATENCY GRAPH command"),
		c("LATENCY HELP"), c("LATENCY DOCTOR", sameType), c("LATENCY HISTOGRAM nosuch"), c("LATENCY HISTOGRAM get", sameType),
		c("LATENCY"), c("LATENCY FOO"), c("LATENCY HISTORY"),
		c("COMMAND LIST FILTERBY ACLCAT pubsub", sortedBulk), c("COMMAND LIST FILTERBY PATTERN object|*", sortedBulk),
		c("COMMAND LIST FILTERBY PATTERN CLIENT|T*", sortedBulk), c("COMMAND LIST FILTERBY MODULE x"),
		c("COMMAND LIST FILTERBY"), c("COMMAND LIST FILTERBY FOO x"), c("COMMAND LIST FILTERBY ACLCAT nosuch"),
		c("COMMAND LIST FILTERBY PATTERN get* x"), c("COMMAND LIST FILTERBY ACLCAT hash", sortedBulk), c("COMMAND LIST FILTERBY PATTERN z*", sortedBulk),
	}
	diffCases["lfu"] = []step{
		c("CONFIG SET maxmemory-policy allkeys-lfu"), c("SET k v"), c("OBJECT FREQ k"), c("GET k"), c("OBJECT FREQ k"),
		c("OBJECT IDLETIME k"), c("OBJECT FREQ missing"), c("CONFIG SET maxmemory-policy volatile-lfu"), c("OBJECT FREQ k"),
		c("CONFIG SET maxmemory-policy volatile-random"), c("CONFIG GET maxmemory-policy"), c("OBJECT FREQ k"),
		c("OBJECT IDLETIME k", sameType), c("CONFIG SET maxmemory-policy allkeys-mru"), c("CONFIG SET maxmemory-policy noeviction"),
		c("CONFIG GET maxmemory-samples"), c("CONFIG SET maxmemory-samples 0"), c("CONFIG SET maxmemory-samples 10"),
		c("CONFIG GET maxmemory-samples"), c("CONFIG SET maxmemory-samples 5"), c("CONFIG GET lfu-log-factor"), c("CONFIG GET lfu-decay-time"),
		c("CONFIG SET lfu-log-factor -1"), c("CONFIG SET lfu-log-factor 20"), c("CONFIG GET lfu-log-factor"),
		c("CONFIG SET lfu-log-factor 10"), c("CONFIG SET lfu-decay-time 0"), c("CONFIG GET lfu-decay-time"),
		c("CONFIG SET lfu-decay-time 1"),
	}
	diffCases["lcs"] = []step{
		c("MSET key1 ohmytext key2 mynewtext"), c("LCS key1 key2"), c("LCS key1 key2 LEN"), c("LCS key1 key2 IDX"),
		c("LCS key1 key2 IDX MINMATCHLEN 4"), c("LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN"),
		c("LCS key1 key2 IDX WITHMATCHLEN"), c("LCS key1 key2 LEN IDX"), c("LCS key1 key2 MINMATCHLEN x"),
		c("LCS key1 key2 MINMATCHLEN -3 IDX"), c("LCS key1 key2 FOO"), c("LCS key1 key2 MINMATCHLEN"),
		c("LCS key1 missing"), c("LCS missing missing2 IDX"), c("RPUSH l a"), c("LCS key1 l"), c("LCS l key1 LEN"),
		c("MSET a abcdefghabcdefgh b xxabcdyyefghzzabcd"), c("LCS a b"), c("LCS a b IDX WITHMATCHLEN"),
		c("LCS b a IDX MINMATCHLEN 2"), c("MSET e '' f x"), c("LCS e f IDX"), c("LCS a a IDX"), c("LCS key1"),
	}
}
