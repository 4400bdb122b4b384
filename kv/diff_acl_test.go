package kv_test

// Differential cases of ACL users: each deletes its users first and last,
// and never changes the default user, since the cases share one
// redis-server and one Shoal. Users with more than one single-command
// rule are not listed here: Redis writes those in its command
// dictionary's order, which is random per process (TestACLListsRules).

func init() {
	for name, steps := range aclDiffCases {
		diffCases[name] = steps
	}
}

var aclDiffCases = map[string][]step{
	"acl-setuser-getuser": {
		c("ACL DELUSER alice"), c("ACL SETUSER alice"), c("ACL GETUSER alice"), c("ACL LIST"), c("ACL USERS"),
		s(exact, "ACL", "SETUSER", "alice", "on", ">pw", "+@read", "~k*", "%R~r*", "%W~w*", "%RW~rw*", "&ch*"),
		c("ACL GETUSER alice"), c("ACL LIST"),
		c("ACL SETUSER alice -@all +get ~* allchannels"), c("ACL GETUSER alice"), c("ACL LIST"),
		c("ACL SETUSER alice reset"), c("ACL GETUSER alice"), c("ACL LIST"),
		c("ACL SETUSER alice +@all -@dangerous nopass skip-sanitize-payload"), c("ACL LIST"), c("ACL GETUSER alice"),
		c("ACL SETUSER alice -@all +@string -@fast +get -@string"), c("ACL LIST"),
		c("ACL SETUSER alice -@all +config|get"), c("ACL LIST"),
		c("ACL SETUSER alice +@all -config"), c("ACL LIST"),
		c("ACL SETUSER alice -@all +client -client|kill"), c("ACL LIST"),
		c("ACL SETUSER alice resetpass >a >b >a <b"), c("ACL GETUSER alice"),
		c("ACL SETUSER alice #5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8 !5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"),
		c("ACL GETUSER alice"),
		s(exact, "ACL", "SETUSER", "alice", "(+set ~x* &c)", "(+get", "%R~y*)"), c("ACL GETUSER alice"), c("ACL LIST"),
		c("ACL SETUSER alice clearselectors resetkeys ~a ~a %R~a"), c("ACL GETUSER alice"),
		c("ACL SETUSER alice -@all +select|0 +select|1"), c("ACL LIST"),
		c("ACL SETUSER alice allcommands nocommands allkeys resetkeys resetchannels"), c("ACL LIST"),
		c("ACL USERS"), c("ACL DELUSER alice alice nosuch"), c("ACL GETUSER alice"), c("ACL USERS"),
	},
	"acl-setuser-errors": {
		c("ACL DELUSER bad"),
		c("ACL SETUSER bad +nosuch"), c("ACL SETUSER bad +@nosuch"), c("ACL SETUSER bad -@nosuch"), c("ACL SETUSER bad ~* ~x"),
		c("ACL SETUSER bad allkeys ~x"), c("ACL SETUSER bad &* &x"), c("ACL SETUSER bad <nopw"), c("ACL SETUSER bad #xyz"),
		c("ACL SETUSER bad !abc"), c("ACL SETUSER bad #5E884898DA28047151D0E56F8DC6292773603D0D6AABBDD62A11EF721D1542D8"),
		c("ACL SETUSER bad +config|get|x"), c("ACL SETUSER bad +get|"), c("ACL SETUSER bad +config|nosuch"),
		c("ACL SETUSER bad -config|nosuch"), c("ACL SETUSER bad -nosuch"), c("ACL SETUSER bad foo"), c("ACL SETUSER bad %X~k"),
		c("ACL SETUSER bad %RR~k"), c("ACL SETUSER bad (+get"), c("ACL SETUSER bad on (+get ~x"), c("ACL SETUSER bad (+nosuch)"),
		s(exact, "ACL", "SETUSER", "bad name"), s(exact, "ACL", "SETUSER", "bad", "~a b"), s(exact, "ACL", "SETUSER", "bad", "&a\x00b"),
		c("ACL GETUSER bad"), c("ACL SETUSER bad on +get nopass +nosuch"), c("ACL GETUSER bad"),
		c("ACL DELUSER default"), c("ACL DELUSER bad default"), c("ACL GETUSER nosuch"), c("ACL CAT nosuch"), c("ACL CAT"),
		c("ACL CAT read write"), c("ACL GENPASS 0"), c("ACL GENPASS abc"), c("ACL GENPASS 5000"), c("ACL GENPASS -1"), c("ACL GENPASS 1 2"),
		c("ACL LOAD"), c("ACL SAVE"), c("ACL HELP"), c("ACL WHOAMI"), c("ACL NOSUCH"), c("ACL"), c("ACL GETUSER"), c("ACL LOG abc"),
		c("ACL DRYRUN nosuch get k"), c("ACL DRYRUN default nosuch"), c("ACL DRYRUN default get"), c("ACL DRYRUN default get k"),
		c("ACL DRYRUN default config nosuch"), c("ACL DRYRUN default config"), c("ACL DRYRUN default config get x"),
		c("AUTH"), c("AUTH a b c"), c("AUTH nosuch pw"), c("AUTH pw"), c("AUTH default anything"), c("HELLO 2 AUTH nosuch pw"),
		c("ACL DELUSER bad"),
	},
	"acl-permissions": {
		c("ACL DELUSER carol"),
		c("ACL SETUSER carol on >pw -@all +get +set +mget +multi +exec +discard +publish +subscribe +psubscribe +eval +ping +client|id ~k* &news.*"),
		c("ACL DRYRUN carol get k1"), c("ACL DRYRUN carol get x"), c("ACL DRYRUN carol del k1"), c("ACL DRYRUN carol publish news.a m"),
		c("ACL DRYRUN carol publish sport m"), c("ACL DRYRUN carol mget k1 x k2"), c("ACL DRYRUN carol client list"),
		c("AUTH carol wrong"), c("AUTH carol pw"), c("ACL WHOAMI"), c("PING"), c("CLIENT ID", maskInts), c("CLIENT LIST"),
		c("GET k1"), c("GET other"), c("SET k1 v"), c("SET other v"), c("MGET k1 k2"), c("MGET k1 x"), c("DEL k1"),
		c("PUBLISH news.a x"), c("PUBLISH sports x"), c("SUBSCRIBE sports"), c("SUBSCRIBE news.a sports"), c("PSUBSCRIBE n*"),
		s(exact, "EVAL", "return redis.call('get','k1')", "0"), s(exact, "EVAL", "return redis.call('del','k1')", "0"),
		s(exact, "EVAL", "return redis.call('get','x')", "0"), s(exact, "EVAL", "return redis.pcall('publish','x','m')", "0"),
		s(exact, "EVAL", "return redis.call('get',KEYS[1])", "1", "x"),
		c("MULTI"), c("GET k1"), c("DEL k1"), c("GET x"), c("EXEC"),
		c("MULTI"), c("GET k1"), c("EXEC"),
		c("AUTH default anything"), c("ACL WHOAMI"), c("DEL k1"), c("ACL DELUSER carol"),
	},
	"acl-key-permissions": {
		c("ACL DELUSER dave"),
		c("ACL SETUSER dave on nopass +@all %R~r* %W~w* ~rw*"),
		c("AUTH dave x"), c("SET w1 v"), c("GET w1"), c("SET r1 v"), c("GET r1"), c("SET rw1 v"), c("GET rw1"),
		c("SET w1 v GET"), c("COPY w1 r1"), c("COPY r1 w2"), c("LPUSH w3 a"), c("LMOVE w3 r3 LEFT LEFT"), c("RPOPLPUSH r3 w4"),
		c("SINTERSTORE w5 r1 r2"), c("SINTERSTORE r5 w1"), c("ZUNIONSTORE w6 2 r1 r2"), c("ZUNIONSTORE w6 2 r1 w2"),
		c("EXISTS r1 w1"), c("TOUCH w1"), c("DEL w1 r1"), c("DEL w1 rw1"), c("KEYS *"), c("SCAN 0"), c("RENAME w1 w2"), c("RENAME rw1 r2"),
		c("EVAL return 1 1 w1"), c("EVAL return 1 1 rw1"),
		// Rules may change under a queued transaction: EXEC checks again.
		c("MULTI"), c("GET rw1"), c("ACL SETUSER dave -get"), c("GET rw1"), c("SET rw1 v"), c("EXEC"),
		c("ACL SETUSER dave +get ( ~x* +del ) ( %R~y* +get )"), c("ACL GETUSER dave"),
		c("GET x1"), c("DEL x1"), c("GET y1"), c("DEL y1"), c("DEL r1"), c("SET y1 v"),
		c("ACL DRYRUN dave get y1"), c("ACL DRYRUN dave set y1 v"), c("ACL DRYRUN dave del y1"), c("ACL DRYRUN dave del x1 y1"),
		c("AUTH default x"), c("FLUSHALL"), c("ACL DELUSER dave"),
	},
	"acl-hello-auth": {
		c("ACL DELUSER erin"), c("ACL SETUSER erin on >pw +@all ~* &*"),
		c("HELLO 2 AUTH erin wrong"), c("HELLO 3 AUTH erin wrong"), c("HELLO 2 AUTH erin pw", maskInts), c("ACL WHOAMI"),
		c("ACL SETUSER erin off"), c("AUTH erin pw"), c("ACL WHOAMI"), c("RESET"), c("ACL WHOAMI"),
		c("ACL DELUSER erin"),
	},
}
