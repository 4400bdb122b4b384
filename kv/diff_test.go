package kv_test

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// How a reply is compared between redis-server and Shoal. Everything is
// byte for byte unless a value must differ (TTL countdowns, ids, times,
// hash-dependent orders).
type compareMode int

const (
	exact      compareMode = iota
	approxInt              // integers within 2 (seconds) or 2000 (milliseconds); negatives exact
	maskInts               // every ":<int>" line compared as ":N" (ids)
	maskDigits             // every digit run compared as "N" (TIME)
	sortedBulk             // an array of bulks compared as a set (KEYS)
	scanSorted             // SCAN's [cursor, keys] with the keys compared as a set
	sameType               // only the reply type byte (INFO, COMMAND COUNT)
	maskAvgTTL             // INFO keyspace with avg_ttl's value masked (below)
)

// avgTTL matches INFO keyspace's avg_ttl. Redis estimates it in its expire
// cron, so it reads 0 or the TTL depending on whether the cron has run since
// the SET; Shoal always reports 0 (a known gap, noted in README). The
// reply's length header changes with it (avg_ttl=0 is 5 digits shorter than
// avg_ttl=99999), so the header is masked too: masking the value alone made
// the test fail whenever Redis's cron had run first.
var (
	avgTTL     = regexp.MustCompile(`avg_ttl=[0-9]+`)
	bulkHeader = regexp.MustCompile(`^[$=][0-9]+\r\n`)
)

// maskAvgTTLReply masks avg_ttl's value and the length header of the bulk
// (RESP2) or verbatim string (RESP3) that holds it.
func maskAvgTTLReply(reply string) string {
	return bulkHeader.ReplaceAllString(avgTTL.ReplaceAllString(reply, "avg_ttl=N"), "$$N\r\n")
}

type step struct {
	args []string
	mode compareMode
}

// c splits a command on spaces; use s() for arguments with spaces.
func c(cmd string, mode ...compareMode) step {
	st := step{args: strings.Split(cmd, " ")}
	if len(mode) > 0 {
		st.mode = mode[0]
	}
	return st
}

func s(mode compareMode, args ...string) step { return step{args: args, mode: mode} }

var longArg = strings.Repeat("x", 200)

// diffCases cover every command, option and error text Shoal implements.
// Each runs on a fresh connection after FLUSHALL, in RESP2 and again after
// HELLO 3.
var diffCases = map[string][]step{
	"set-options": {
		c("GET k"), c("SET k v"), c("GET k"), c("SET k v2 GET"), c("SET k v3 NX"), c("SET k v3 NX GET"),
		c("SET new v XX"), c("SET new v XX GET"), c("SET k v XX"), c("GET k"), c("SET k v NX XX"), c("SET k v XX NX"),
		c("SET k v EX 10 PX 100"), c("SET k v KEEPTTL EX 10"), c("SET k v EX 10 KEEPTTL"), c("SET k v EX"),
		c("SET k v EX abc"), c("SET k v EX 0"), c("SET k v EX -5"), c("SET k v PX 0"), c("SET k v EXAT 0"),
		c("SET k v PXAT -1"), c("SET k v EX 9223372036854775807"), c("SET k v EX 9223372036854775"),
		c("SET k v PX 9223372036854775807"), c("SET k v EX 100 EX 200"), c("TTL k", approxInt),
		c("SET k v2 KEEPTTL"), c("TTL k", approxInt), c("SET k v"), c("TTL k"), c("SET k v EXAT 4102444800"),
		c("EXPIRETIME k"), c("PEXPIRETIME k"), c("SET k v PXAT 4102444800123"), c("PEXPIRETIME k"), c("SET k v get get"),
		c("SET k v FOO"), c("set k v nx"), c("set k v px 50000"), c("PTTL k", approxInt), c("SET k v PERSIST"),
		c("SET k"), c("SET"), s(exact, "SET", "", ""), s(exact, "GET", ""), s(exact, "SET", "bin\x00\r\nkey", "v\x00\r\n"),
		s(exact, "GET", "bin\x00\r\nkey"), c("SET k v EX 10 NX"), c("SET k v EXAT 1"), c("GET k"), c("SET k v PXAT 9223372036854775807"),
	},
	// GET reserves its header from the previous value's length; values of
	// growing and shrinking lengths take both ways of fixing a wrong guess.
	"get-value-lengths": {
		s(exact, "SET", "l1", "x"), s(exact, "SET", "l12", strings.Repeat("y", 12)),
		s(exact, "SET", "l1234", strings.Repeat("z", 1234)), s(exact, "SET", "l100k", strings.Repeat("w", 100000)),
		s(exact, "SET", "l0", ""), c("GET l1"), c("GET l1"), c("GET l12"), c("GET l1234"), c("GET l100k"), c("GET l1"),
		c("GET l100k"), c("GET l0"), c("GET l12"), c("GET missing"), c("GET l1234"), c("GETEX l12"), c("GETEX l100k PERSIST"),
		c("GETEX l1"), c("GETDEL l1234"), c("GETDEL l1234"), c("GETDEL l0"), c("MSET h 1"), c("GETEX l12 EX 100"),
		c("GETDEL l100k"), c("GET l12"),
	},
	"setnx-setex-getset-getdel": {
		c("SETNX k v"), c("SETNX k v"), c("SETEX k 10 v"), c("TTL k", approxInt), c("SETEX k 0 v"), c("SETEX k abc v"),
		c("SETEX k -1 v"), c("PSETEX k 1000 v"), c("PTTL k", approxInt), c("PSETEX k 0 v"), c("SETEX k 10"),
		c("GETSET k new"), c("TTL k"), c("GETSET missing v"), c("GETDEL k"), c("GETDEL k"), c("GETSET k"), c("GETDEL"),
	},
	"getex": {
		c("GETEX missing"), c("SET k v"), c("GETEX k"), c("GETEX k EX 100"), c("TTL k", approxInt), c("GETEX k PERSIST"),
		c("TTL k"), c("GETEX k PX 5000"), c("PTTL k", approxInt), c("GETEX k EXAT 4102444800"), c("EXPIRETIME k"),
		c("GETEX k PXAT 4102444800000"), c("PEXPIRETIME k"), c("GETEX k EX 0"), c("GETEX missing EX 0"), c("GETEX k EX abc"),
		c("GETEX missing EX abc"), c("GETEX k PERSIST EX 10"), c("GETEX k EX 10 PERSIST"), c("GETEX k NX"), c("GETEX k EX"),
		c("GETEX k KEEPTTL"), c("GETEX k GET"), c("GETEX k EXAT 1"), c("EXISTS k"), c("GETEX"),
	},
	"mget-mset": {
		c("MGET a b c"), c("MSET a 1 b 2"), c("MGET a b c"), c("MGET a a"), c("MSET a"), c("MSET a 1 b"), c("MSETNX a 1 c 3"),
		c("MGET c"), c("MSETNX c 3 d 4"), c("MGET c d"), c("MSETNX x"), c("MSETNX x 1 y"), c("MGET"), c("MSET a 1 a 2"), c("GET a"),
	},
	"incr-decr": {
		c("INCR n"), c("INCR n"), c("INCRBY n 10"), c("INCRBY n -20"), c("INCRBY n abc"), c("INCRBY n 1.5"), c("DECR n"),
		c("DECRBY n 5"), c("DECRBY n -9223372036854775808"), c("DECRBY n 9223372036854775808"),
		c("SET n 9223372036854775807"), c("INCR n"), c("INCRBY n -1"), c("SET n -9223372036854775808"), c("DECR n"),
		c("SET s abc"), c("INCR s"), s(exact, "SET", "s", " 1"), c("INCR s"), c("SET s 01"), c("INCR s"), c("SET s +1"),
		c("INCR s"), s(exact, "SET", "s", ""), c("INCR s"), c("INCRBY n 9223372036854775808"), c("INCR"), c("INCRBY n"),
		c("SET s -0"), c("INCR s"), c("SET s 1"), c("INCRBY s 0"), c("DECRBY s -5"),
	},
	"incrbyfloat": {
		c("INCRBYFLOAT f 1.5"), c("INCRBYFLOAT f 0.1"), c("INCRBYFLOAT f -1.6"), c("INCRBYFLOAT f abc"),
		c("INCRBYFLOAT f inf"), c("INCRBYFLOAT f nan"), c("INCRBYFLOAT f 5.0e3"), c("SET f 3.0"), c("INCRBYFLOAT f 0"),
		c("SET f abc"), c("INCRBYFLOAT f 1"), s(exact, "INCRBYFLOAT", "g", " 1"), c("INCRBYFLOAT g 10.50"),
		c("INCRBYFLOAT g -10.5"), c("INCRBYFLOAT h 1e5"), c("INCRBYFLOAT h 3.0e-3"), c("SET i 10"), c("INCRBYFLOAT i 1"),
		c("INCRBYFLOAT"), c("INCRBYFLOAT f"),
	},
	"append-strlen-ranges": {
		c("APPEND a x"), c("APPEND a yz"), c("STRLEN a"), c("STRLEN missing"), c("GETRANGE a 0 -1"), c("GETRANGE a 1 1"),
		c("GETRANGE a -2 -1"), c("GETRANGE a 5 10"), c("GETRANGE missing 0 -1"), c("GETRANGE a x 1"), c("GETRANGE a 2 1"),
		c("GETRANGE a -100 100"), c("SETRANGE a 1 ZZ"), c("GET a"), c("SETRANGE a -1 x"), c("SETRANGE a abc x"),
		c("SETRANGE new 3 abc"), c("GET new"), s(exact, "SETRANGE", "empty", "0", ""), c("EXISTS empty"),
		c("SETRANGE a 536870912 x"), s(exact, "SETRANGE", "a", "536870912", ""), c("GETRANGE a 0"), c("APPEND a"),
		c("SETRANGE a 0"), c("STRLEN"),
	},
	"del-exists-type": {
		c("MSET a 1 b 2"), c("EXISTS a a b c"), c("TYPE a"), c("TYPE missing"), c("DEL a c"), c("UNLINK b a"),
		c("EXISTS a b"), c("DEL"), c("EXISTS"), c("TYPE"), c("TYPE a b"),
	},
	"expire": {
		c("SET k v"), c("EXPIRE k 100"), c("TTL k", approxInt), c("EXPIRE k 100 NX"), c("EXPIRE k 200 XX"),
		c("EXPIRE k 50 GT"), c("EXPIRE k 500 GT"), c("EXPIRE k 600 LT"), c("EXPIRE k 10 LT"), c("TTL k", approxInt),
		c("PERSIST k"), c("PERSIST k"), c("PERSIST missing"), c("EXPIRE k 100 GT"), c("EXPIRE k 100 LT"),
		c("EXPIRE k 100 NX XX"), c("EXPIRE k 100 GT LT"), c("EXPIRE k 100 NX GT"), c("EXPIRE k 50 XX GT"), c("EXPIRE k 500 XX GT"),
		c("EXPIRE k 100 FOO"), c("EXPIRE k abc"), c("EXPIRE k abc FOO"), c("EXPIRE k 9223372036854775807"),
		c("EXPIRE k 9223372036854775"), c("EXPIRE k -9223372036854775808"), c("PEXPIRE k 9223372036854775807"),
		c("EXPIRE missing 100"), c("EXPIRE k -1"), c("EXISTS k"), c("SET k v"), c("PEXPIRE k 100000"),
		c("PTTL k", approxInt), c("EXPIREAT k 4102444800"), c("EXPIRETIME k"), c("PEXPIREAT k 4102444800555"),
		c("PEXPIRETIME k"), c("TTL k", approxInt), c("EXPIRETIME missing"), c("SET p v"), c("EXPIRETIME p"),
		c("PEXPIRETIME p"), c("TTL missing"), c("PTTL p"), c("EXPIRE p 100 XX LT"), c("EXPIRE p 100"),
		c("EXPIRE p 50 XX LT"), c("TTL p", approxInt), c("EXPIREAT k 1"), c("EXISTS k"), c("SET k v"),
		c("PEXPIRE k 0"), c("EXISTS k"), c("SET k v"), c("PEXPIREAT k 0 NX"), c("EXISTS k"), c("EXPIRE k"),
		c("EXPIRE"), c("TTL"), c("PERSIST"), c("EXPIRETIME"), c("expire p 100 nx"),
	},
	"keys-scan": {
		c("KEYS *"), c("MSET ka 1 kb 2 kc 3 x 1"), c("KEYS k*", sortedBulk), c("KEYS k[ab]", sortedBulk),
		c("KEYS *", sortedBulk), c("KEYS nomatch"), c("KEYS k?", sortedBulk), c("KEYS k[^a]", sortedBulk),
		c("SCAN 0 COUNT 1000", scanSorted), c("SCAN 0 MATCH k* COUNT 1000", scanSorted),
		c("SCAN 0 TYPE string COUNT 1000", scanSorted), c("SCAN 0 TYPE list COUNT 1000", scanSorted),
		c("SCAN 0 MATCH * COUNT 1000", scanSorted), c("scan 0 match x count 1000", scanSorted),
		c("KEYS *a*", sortedBulk), c("KEYS k[a-b]", sortedBulk), s(sortedBulk, "KEYS", "k\\a"), c("KEYS [", sortedBulk),
		c("KEYS k[", sortedBulk), s(sortedBulk, "KEYS", "\\"), c("KEYS k[b-a]", sortedBulk), c("KEYS ?", sortedBulk),
		c("KEYS K*", sortedBulk), c("SCAN 0 MATCH k[^c] COUNT 1000", scanSorted),
		c("SCAN x"), c("SCAN 0 COUNT 0"), c("SCAN 0 COUNT -1"), c("SCAN 0 COUNT abc"), c("SCAN 0 FOO bar"),
		c("SCAN 0 COUNT"), c("SCAN 0 MATCH"), c("SCAN 1.5"), c("SCAN 18446744073709551616"), c("SCAN"), c("KEYS"),
	},
	// SCAN cursors go through strtoul(3) in Redis; on an empty keyspace every
	// accepted cursor answers "0" and an empty page.
	"scan-cursors": {
		c("SCAN -1"), c("SCAN +5"), c("SCAN -0"), c("SCAN 007"), c("SCAN 18446744073709551615"),
		c("SCAN -18446744073709551615"), c("SCAN -18446744073709551616"), c("SCAN +"), c("SCAN -"), c("SCAN --1"),
		c("SCAN +-1"), c("SCAN 0x10"), c("SCAN 1e3"), s(exact, "SCAN", ""), s(exact, "SCAN", " 1"), s(exact, "SCAN", "1 "),
		s(exact, "SCAN", "\t1"), s(exact, "SCAN", "5\x00abc"), s(exact, "SCAN", "\x00"), s(exact, "SCAN", "-\x001"),
		s(exact, "SCAN", "1\n"), c("SCAN -1 COUNT 5 MATCH k*"), c("SCAN -1 COUNT 0"),
	},
	"rename-randomkey": {
		c("RANDOMKEY"), c("SET ka 1"), c("RANDOMKEY"), c("MSET kb 2 kc 3"), c("RENAME ka kz"), c("GET kz"), c("GET ka"),
		c("RENAME missing x"), c("RENAME kz kz"), c("RENAMENX kb kc"), c("RENAMENX kb kq"), c("GET kq"),
		c("RENAMENX missing y"), c("RENAMENX kq kq"), c("SET t v EX 100"), c("RENAME t t2"), c("TTL t2", approxInt),
		c("RENAME t2 kc"), c("TTL kc", approxInt), c("RENAME"), c("RENAMENX a"), c("RANDOMKEY x"),
	},
	"dbsize-flush": {
		c("DBSIZE"), c("MSET a 1 b 2"), c("DBSIZE"), c("FLUSHDB"), c("DBSIZE"), c("SET a 1"), c("FLUSHALL ASYNC"),
		c("DBSIZE"), c("FLUSHALL SYNC"), c("flushall async"), c("FLUSHALL foo"), c("FLUSHDB a b"), c("FLUSHDB SYNC"),
		c("DBSIZE x"),
	},
	"connection": {
		c("PING"), c("PING hello"), c("PING a b"), c("ECHO x"), c("ECHO"), c("ECHO a b"), s(exact, "ECHO", ""),
		c("SELECT 0"), c("SELECT 1"), c("SELECT -1"), c("SELECT x"), c("SELECT 99999999999"), c("SELECT"),
		c("ping"), c("PiNg"), c("TIME", maskDigits), c("TIME x"),
	},
	"unknown-and-arity": {
		c("FOO"), c("FOO a b"), s(exact, "FOO", longArg, "b"), s(exact, "FOO", "a\r\nb"), s(exact, "FOO", "a", "b", "c", "d", "e"),
		s(exact, strings.Repeat("y", 40), "a"), c("GET"), c("GET a b"), c("SET a"), c("CLIENT"), c("CONFIG"),
		c("CONFIG GET"), c("CLIENT SETNAME"), c("CLIENT FOO"), c("CONFIG FOO"), c("COMMAND FOO"), c("client foo bar"),
		c("CLIENT ID x"), c("CLIENT GETNAME x"), c("CONFIG SET maxmemory"), c("CONFIG SET"), c("COMMAND COUNT x"),
		s(exact, "FOO", strings.Repeat("a", 60), strings.Repeat("b", 60), strings.Repeat("c", 60)),
		s(exact, "FOO", "x\x00y", "z"), c("CLIENT KILL"), c("CLIENT LIST x"), c("CONFIG RESETSTAT x"),
		c("CLIENT INFO x"), c("CLIENT SETNAME a b"), c("CONFIG REWRITE x"), c("COMMAND HELP x"), c("HELLO 3 AUTH"),
		c("client Id x"), c("CONFIG GET a b c", sameType),
	},
	"client": {
		c("CLIENT ID", maskInts), c("CLIENT GETNAME"), c("CLIENT SETNAME foo"), c("CLIENT GETNAME"),
		s(exact, "CLIENT", "SETNAME", "a b"), s(exact, "CLIENT", "SETNAME", "a\nb"), s(exact, "CLIENT", "SETNAME", ""),
		c("CLIENT GETNAME"), c("CLIENT KILL 1.2.3.4:5"), c("CLIENT KILL ID 999999"), c("CLIENT KILL ID 0"),
		c("CLIENT KILL ID abc"), c("CLIENT KILL FOO bar"), c("CLIENT KILL ADDR 1.2.3.4:5"), c("CLIENT KILL TYPE foo"),
		c("CLIENT KILL TYPE pubsub"), c("CLIENT KILL USER nobody"), c("CLIENT KILL ADDR x SKIPME maybe"),
		c("CLIENT KILL ID 1 ADDR"), c("CLIENT LIST TYPE foo"), c("CLIENT LIST FOO"), c("CLIENT LIST ID abc"),
		c("CLIENT LIST ID 0"), c("CLIENT LIST TYPE pubsub"), c("CLIENT LIST ID 999999"), c("CLIENT KILL LADDR 1.2.3.4:5"),
		c("CLIENT KILL USER default ID 999999"), c("CLIENT INFO", sameType), c("CLIENT LIST", sameType),
	},
	"hello-auth-reset": {
		c("HELLO", maskInts), c("HELLO 4"), c("HELLO 1"), c("HELLO abc"), c("HELLO 3 FOO"), c("HELLO 3 AUTH a"),
		c("HELLO 3 AUTH default x", maskInts), c("GET missing"), c("HELLO 3 AUTH bob x"), s(exact, "HELLO", "3", "SETNAME", "a b"),
		c("HELLO 2 SETNAME myname", maskInts), c("CLIENT GETNAME"), c("GET missing"), c("AUTH x"), c("AUTH default x"),
		c("AUTH bob x"), c("AUTH a b c"), c("AUTH"), c("HELLO 3", maskInts), c("RESET"), c("GET missing"),
		c("CLIENT GETNAME"), c("RESET x"), c("hello 3 setname n auth default p", maskInts), c("CLIENT GETNAME"),
		c("HELLO 0"), c("HELLO -1"), c("HELLO 2 SETNAME"), c("HELLO 3 setname x y"),
	},
	"config": {
		c("CONFIG GET maxmemory"), c("CONFIG GET save"), c("CONFIG GET appendonly"), c("CONFIG GET databases"),
		c("CONFIG GET maxmemory-policy"), c("CONFIG GET nonexistent"), c("CONFIG SET maxmemory 100mb"),
		c("CONFIG GET maxmemory"), c("CONFIG SET maxmemory 1gb"), c("CONFIG GET maxmemory"), c("CONFIG SET maxmemory 0"),
		c("CONFIG SET maxmemory abc"), c("CONFIG SET foo bar"), c("CONFIG SET maxmemory 1 maxmemory 2"),
		c("CONFIG SET maxmemory-policy allkeys-lru"), c("CONFIG GET maxmemory-policy"),
		c("CONFIG SET maxmemory-policy noeviction"), c("CONFIG GET MAXMEMORY"), c("CONFIG GET requirepass"),
		c("CONFIG SET save"), c("CONFIG RESETSTAT"), c("CONFIG REWRITE"),
	},
	"client-output-buffer-limit": {
		c("CONFIG GET client-output-buffer-limit"), s(exact, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 2kb 5"),
		c("CONFIG GET client-output-buffer-limit"), s(exact, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 2kb"),
		s(exact, "CONFIG", "SET", "client-output-buffer-limit", "foo 1mb 2kb 5"),
		s(exact, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mx 2kb 5"),
		s(exact, "CONFIG", "SET", "client-output-buffer-limit", "replica 1gb 2kb -5"),
		s(exact, "CONFIG", "SET", "client-output-buffer-limit", "master 1gb 2kb 5"),
		s(exact, "CONFIG", "SET", "client-output-buffer-limit", ""), c("CONFIG GET client-output-buffer-limit"),
		s(exact, "CONFIG", "SET", "client-output-buffer-limit", "normal 1 2 3 REPLICA 10kb 5k 7 Pubsub 1G 1g 0"),
		c("CONFIG GET client-output-buffer-limit"),
		s(exact, "CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60"),
		c("CONFIG GET client-output-buffer-limit"), c("CONFIG GET client-output-*"),
		c("CONFIG GET maxmemory-clients"), c("CONFIG SET maxmemory-clients 10%"), c("CONFIG GET maxmemory-clients"),
		c("CONFIG SET maxmemory-clients 200%"), c("CONFIG SET maxmemory-clients abc"), c("CONFIG SET maxmemory-clients -5%"),
		c("CONFIG SET maxmemory-clients 5mb"), c("CONFIG GET maxmemory-clients"), c("CONFIG SET maxmemory-clients 0%"),
		c("CONFIG GET maxmemory-clients"), c("CONFIG SET maxmemory-clients 0"),
	},
	"command-info": commandInfoSteps(),
	"oom": {
		c("SET k v"), c("SET n 1"), c("CONFIG SET maxmemory 1"), c("SET a b"), c("GET a"), c("GET k"), c("SETNX k v"),
		c("SET k v NX"), c("SET k v2 XX"), c("INCR n"), c("INCRBY n 2"), c("DECR n"), c("INCRBYFLOAT n 1"),
		c("APPEND k x"), c("SETRANGE k 0 x"), c("MSET a 1"), c("MSETNX a 1"), c("GETSET k x"), c("SETEX k 10 v"),
		c("PSETEX k 10 v"), c("EXPIRE k 100"), c("TTL k", approxInt), c("GETEX k PERSIST"), c("GETDEL k"),
		c("DEL n"), c("RENAME nothing x"), c("EXISTS a"), c("CONFIG SET maxmemory 0"), c("SET a b"),
	},
	// Every integer argument a client controls, at the edges of int64: a
	// sum or product that wraps must answer Redis's error, never panic.
	// A SCAN from a hostile cursor starts mid-keyspace, where the keys seen
	// depend on the hash layout, so only its shape is compared. Under
	// maxmemory only valid arguments are sent: Redis answers OOM before it
	// validates arguments, Shoal validates first.
	"hostile-integers": {
		c("SETRANGE k 9223372036854775807 x"), c("SETRANGE k 9223372036854775806 x"), c("SETRANGE k 536870912 x"),
		c("SETRANGE k -9223372036854775808 x"), c("SETRANGE k 9223372036854775808 x"), c("EXISTS k"),
		s(exact, "SETRANGE", "k", "9223372036854775807", ""), c("SET k abc"), c("SETRANGE k 9223372036854775807 x"),
		c("SETRANGE k 9223372036854775806 xy"), c("SETRANGE k 536870911 xy"), c("GET k"),
		c("GETRANGE k -9223372036854775808 9223372036854775807"), c("GETRANGE k 9223372036854775807 -9223372036854775808"),
		c("GETRANGE k -9223372036854775808 -9223372036854775808"), c("GETRANGE k 9223372036854775807 9223372036854775807"),
		c("GETRANGE k -9223372036854775807 -1"), c("GETRANGE k 0 9223372036854775808"), c("GETRANGE k -1 -9223372036854775808"),
		c("GETRANGE missing -9223372036854775808 9223372036854775807"),
		c("EXPIRE k 9223372036854775807"), c("PEXPIRE k 9223372036854775807"), c("EXPIRE k -9223372036854775808"),
		c("PEXPIRE k -9223372036854775808"), c("EXPIREAT k 9223372036854775807"), c("EXPIREAT k 9223372036854775"),
		c("PEXPIRETIME k"), c("PEXPIREAT k 9223372036854775807"), c("PEXPIRETIME k"), c("EXPIRETIME k"),
		c("TTL k", approxInt), c("EXPIRE k 9223372036854775807 GT"), c("EXPIRE k 9223372036854775 LT"),
		c("PEXPIREAT k -9223372036854775808"), c("EXISTS k"), c("SET k v"), c("PEXPIRE k 9223372036854775806"),
		c("PEXPIRE k 9223372036854775808"), c("EXPIRE k 9223372036854776"),
		c("SET k v EX 9223372036854775807"), c("SET k v PX 9223372036854775807"), c("SET k v EX 9223372036854775806"),
		c("SET k v EXAT 9223372036854775807"), c("SET k v EXAT 9223372036854775"), c("EXPIRETIME k"),
		c("SET k v PXAT 9223372036854775807"), c("PEXPIRETIME k"), c("SET k v EX -9223372036854775808"),
		c("SET k v PX -9223372036854775808"), c("SET k v PXAT -9223372036854775808"), c("SET k v EX 9223372036854775808"),
		c("SETEX k 9223372036854775807 v"), c("PSETEX k 9223372036854775807 v"), c("SETEX k -9223372036854775808 v"),
		c("PSETEX k -9223372036854775808 v"), c("GETEX k EX 9223372036854775807"), c("GETEX k PX 9223372036854775807"),
		c("GETEX k EXAT 9223372036854775807"), c("GETEX k PXAT 9223372036854775807"), c("PEXPIRETIME k"),
		c("GETEX k EX -9223372036854775808"), c("GETEX k PXAT -1"), c("GETEX missing PX 9223372036854775807"),
		c("INCRBY n 9223372036854775807"), c("INCRBY n 9223372036854775807"), c("INCRBY n 1"), c("GET n"),
		c("DECRBY n -9223372036854775808"), c("DECRBY n 9223372036854775807"), c("DECRBY n 9223372036854775807"),
		c("INCRBY n -9223372036854775808"), c("SET n -9223372036854775808"), c("DECRBY n 1"), c("INCRBY n -1"),
		c("DECR n"), c("INCRBY n 9223372036854775807"), c("INCR n"), c("GET n"),
		c("INCRBYFLOAT f 1e308"), c("INCRBYFLOAT f 1e308"), c("SCAN 0 COUNT 9223372036854775807", scanSorted), c("SCAN 0 COUNT 9223372036854775808"), c("SCAN 0 COUNT -9223372036854775808"),
		c("SCAN 9223372036854775807 COUNT 9223372036854775807", sameType),
		c("SCAN 18446744073709551615 COUNT 2147483648", sameType),
		c("SELECT 9223372036854775807"), c("SELECT -9223372036854775808"), c("HELLO 9223372036854775807"),
		c("HELLO -9223372036854775808"), c("CLIENT KILL ID 9223372036854775807"), c("CLIENT KILL ID -1"),
		c("CLIENT KILL ID 18446744073709551615"), c("CLIENT LIST ID 9223372036854775807"), c("CLIENT LIST ID -9223372036854775808"),
		c("APPEND big x"), c("SETRANGE big 536870911 x"), c("STRLEN big"), c("APPEND big x"), c("SETRANGE big 536870912 x"),
		c("DEL big"), c("CONFIG SET maxmemory 9223372036854775807"), c("CONFIG GET maxmemory"), c("SET k v"),
		c("SETRANGE k 9223372036854775807 x"), c("SETRANGE k 1 x"), c("INCRBY n 1"), c("CONFIG SET maxmemory 1"),
		c("SETRANGE k 9223372036854775807 x"), s(exact, "SETRANGE", "k", "9223372036854775807", ""),
		c("GETRANGE k -9223372036854775808 9223372036854775807"), c("INCRBY n 9223372036854775807"),
		c("EXPIRE k 9223372036854775807"), c("CONFIG SET maxmemory 0"),
	},
	"info": {
		c("INFO", sameType), c("INFO keyspace"), c("INFO modules"), c("INFO errorstats", sameType), c("INFO cluster"), c("SET a 1"), c("SET b 2 EX 100"), c("INFO keyspace", maskAvgTTL),
		c("INFO nonexistent"), c("INFO server", sameType), c("INFO KEYSPACE", maskAvgTTL), c("COMMAND COUNT", sameType),
		c("COMMAND DOCS foo"), c("COMMAND INFO foo"), c("COMMAND INFO foo get"), c("DBSIZE"),
	},
}

// commandInfoSteps compares COMMAND INFO for every command and every
// subcommand. A container is asked for by its subcommands only: Redis lists
// them in its hash order, which changes from run to run.
func commandInfoSteps() []step {
	var steps []step
	for _, name := range kv.CommandNames() {
		subs := kv.Subcommands(name)
		if subs == nil {
			steps = append(steps, s(exact, "COMMAND", "INFO", name))
		}
		for _, sub := range subs {
			if sub == "client|setinfo" {
				continue // Redis 7.2's, which go-redis sends; 7.0 has none
			}
			steps = append(steps, s(exact, "COMMAND", "INFO", sub))
		}
	}
	return append(steps, c("COMMAND INFO GET"))
}

func TestDifferentialAgainstRedis(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	for _, proto := range []int{2, 3} {
		for name, steps := range diffCases {
			t.Run("resp"+strconv.Itoa(proto)+"/"+name, func(t *testing.T) {
				runDiff(t, redisAddr, shoal.addr, proto, steps, false)
			})
		}
	}
	// Again with every case sent as one pipeline, so many commands meet in
	// one read and one reply batch.
	for _, proto := range []int{2, 3} {
		for name, steps := range diffCases {
			t.Run("pipelined-resp"+strconv.Itoa(proto)+"/"+name, func(t *testing.T) {
				runDiff(t, redisAddr, shoal.addr, proto, steps, true)
			})
		}
	}
}

// runDiff runs steps on fresh connections to both servers and compares
// every reply.
func runDiff(t *testing.T, redisAddr, shoalAddr string, proto int, steps []step, pipelined bool) {
	t.Helper()
	ref, got := dialFresh(t, redisAddr, proto), dialFresh(t, shoalAddr, proto)
	if pipelined {
		var all []byte
		for _, st := range steps {
			all = append(all, encodeCommand(st.args)...)
		}
		ref.Send(all)
		got.Send(all)
	}
	for i, st := range steps {
		var want, have string
		if pipelined {
			want, have = mustRead(t, ref), mustRead(t, got)
		} else {
			want, have = ref.Do(st.args...), got.Do(st.args...)
		}
		if !equalReplies(st.mode, want, have) {
			t.Errorf("step %d %q:\nredis: %q\nshoal: %q", i, st.args, want, have)
		}
	}
}

func mustRead(t *testing.T, r *rawConn) string {
	t.Helper()
	reply, err := r.Read()
	if err != nil {
		t.Fatalf("reading a pipelined reply: %v", err)
	}
	return reply
}

var (
	intLine  = regexp.MustCompile(`(?m)^:-?\d+\r$`)
	digitRun = regexp.MustCompile(`\d+`)
)

func equalReplies(mode compareMode, want, have string) bool {
	switch mode {
	case approxInt:
		if want == have {
			return true
		}
		a, errA := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(want, ":"), "\r\n"), 10, 64)
		b, errB := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(have, ":"), "\r\n"), 10, 64)
		if errA != nil || errB != nil || a < 0 || b < 0 {
			return false
		}
		// Times in flight: a PTTL of 1000 read 5 ms later on a loaded
		// machine is 995 (a tolerance of 2 failed so, under load 10).
		tolerance := max(int64(2), a/10)
		if a > 10000 {
			tolerance = max(tolerance, 2000)
		}
		return a-b <= tolerance && b-a <= tolerance
	case maskInts:
		return intLine.ReplaceAllString(want, ":N\r") == intLine.ReplaceAllString(have, ":N\r")
	case maskDigits:
		return digitRun.ReplaceAllString(want, "N") == digitRun.ReplaceAllString(have, "N")
	case sortedBulk:
		return sortReplyElements(want, 0) == sortReplyElements(have, 0)
	case scanSorted:
		return sortReplyElements(want, 3) == sortReplyElements(have, 3)
	case sameType:
		return len(want) > 0 && len(have) > 0 && want[0] == have[0]
	case maskAvgTTL:
		return maskAvgTTLReply(want) == maskAvgTTLReply(have)
	}
	return want == have
}

// sortReplyElements sorts the "$n\r\nvalue\r\n" pairs of a flat array reply
// after the first skip lines, so hash-ordered results compare as sets.
func sortReplyElements(reply string, skip int) string {
	lines := strings.Split(reply, "\r\n")
	head := skip + 1
	if len(lines) < head {
		return reply
	}
	var elems []string
	for i := head; i+1 < len(lines); i += 2 {
		elems = append(elems, lines[i]+"\r\n"+lines[i+1])
	}
	sort.Strings(elems)
	return strings.Join(lines[:head], "\r\n") + "|" + strings.Join(elems, "|")
}

// TestAvgTTLMaskCoversTheLengthHeader: the two INFO keyspace replies
// redis-server gives before and after its expire cron has estimated avg_ttl
// compare equal under maskAvgTTL, in RESP2 and RESP3, and a reply that
// differs elsewhere does not.
func TestAvgTTLMaskCoversTheLengthHeader(t *testing.T) {
	body := func(ttl string) string { return "# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=" + ttl + "\r\n" }
	for _, framing := range []func(string) string{
		func(b string) string { return "$" + strconv.Itoa(len(b)) + "\r\n" + b + "\r\n" },
		func(b string) string { return "=" + strconv.Itoa(len(b)+4) + "\r\ntxt:" + b + "\r\n" },
	} {
		before, after := framing(body("0")), framing(body("99999"))
		if !equalReplies(maskAvgTTL, before, after) {
			t.Errorf("%q and %q differ under maskAvgTTL", before, after)
		}
		other := framing(strings.Replace(body("0"), "keys=2", "keys=3", 1))
		if equalReplies(maskAvgTTL, before, other) {
			t.Errorf("%q and %q compare equal under maskAvgTTL", before, other)
		}
	}
}
