package kv_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// Keyspace notifications against redis-server 7.0: each case runs its
// commands on both servers while a second connection listens with
// PSUBSCRIBE __key*__:*, and the messages each command caused are compared
// in order, byte for byte (so are the replies). After every command a
// PUBLISH of a marker tells the listener where that command's messages end:
// a server publishes a command's events before it replies, so every one of
// them is ahead of the marker.
//
// A step "#wait N" sleeps N milliseconds: the lazy-expiry cases need a TTL
// to run out, which only the clock can do; both servers have their active
// expiry off so that the key is still there to be found expired.

// notifyCases are the command sequences; each starts on an empty server
// with notify-keyspace-events set to "KEA" plus the key-miss and new-key
// classes (KEAmn), unless its first step sets another value.
var notifyCases = map[string][]step{
	"strings": {
		c("SET k v"), c("SET k v2"), c("SET k v NX"), c("SET k v XX"), c("SET k2 v XX"), c("SET k v EX 100"),
		c("SET k v PX 100000 GET"), c("SET nk v GET"), c("SET k v KEEPTTL"), c("SET k v EXAT 4102444800"),
		c("SET k v BAD"), c("SETNX k v"), c("SETNX k3 v"), c("SETEX k4 100 v"), c("SETEX k4 0 v"), c("PSETEX k5 100000 v"),
		c("GETSET k w"), c("GETSET k6 w"), c("GETDEL k6"), c("GETDEL k6"), c("GETEX k"), c("GETEX k EX 100"),
		c("GETEX k PERSIST"), c("GETEX k PERSIST"), c("GETEX k PXAT 1"), c("GETEX missing EX 10"), c("GET k"),
		c("MSET a 1 b 2 a 3"), c("MSETNX a 1 c 2"), c("MSETNX c 1 d 2"), c("INCR n"), c("INCRBY n 5"), c("DECR n"),
		c("DECRBY n 2"), c("INCR a"), c("INCR k6"), c("SET s x"), c("INCR s"), c("INCRBYFLOAT f 1.5"), c("INCRBYFLOAT f 1"),
		c("INCRBYFLOAT s 1"), c("APPEND ap x"), c("APPEND ap y"), c("SETRANGE sr 2 x"), c("SETRANGE sr 0 y"),
		s(exact, "SETRANGE", "empty", "0", ""), s(exact, "SETRANGE", "sr", "1", ""), c("GETRANGE sr 0 -1"),
		c("STRLEN sr"), c("STRLEN nope"), c("MGET a nope b nope2"), c("GET nope"), c("GETRANGE nope 0 1"),
		c("LPUSH l x"), c("SET l v GET"), c("GETSET l x"), c("SUBSTR sr 0 1"), c("SUBSTR nope 0 1"),
	},
	"generic": {
		c("MSET a 1 b 2 c 3"), c("DEL a nope b"), c("UNLINK c nope"), c("DEL nope"), c("SET k v"), c("EXPIRE k 100"),
		c("EXPIRE k 100 NX"), c("PEXPIRE k 100000 XX"), c("EXPIREAT k 4102444800"), c("PEXPIREAT k 4102444800000"),
		c("EXPIRE nope 10"), c("PERSIST k"), c("PERSIST k"), c("PERSIST nope"), c("EXPIRE k 0"), c("SET k v"),
		c("PEXPIRE k -5"), c("SET k v"), c("EXPIREAT k 1"), c("SET k v"), c("EXPIRE k abc"),
		c("SET k v"), c("RENAME k k2"), c("RENAME k2 k2"), c("RENAME nope x"), c("SET k v"), c("RENAME k k2"),
		c("RENAMENX k2 k3"), c("SET k4 v"), c("RENAMENX k3 k4"), c("RENAMENX nope k9"),
		c("EXISTS k3 nope k4 nope2"), c("TYPE nope"), c("TYPE k4"), c("TTL nope"), c("PTTL nope"), c("EXPIRETIME nope"),
		c("PEXPIRETIME nope"), c("TTL k4"), c("TOUCH k4 nope"), c("OBJECT ENCODING nope"), c("OBJECT ENCODING k4"),
		c("MEMORY USAGE nope"), c("KEYS *", sortedBulk), c("DBSIZE"),
		c("LPUSH l a"), c("RENAME l l2"), c("LCS k4 nope"),
	},
	"databases": {
		c("SET k v"), c("MOVE k 1"), c("MOVE k 1"), c("SET k v"), c("MOVE k 1"), c("SELECT 1"), c("SET x v"),
		c("DEL x"), c("COPY k k2"), c("COPY k k2"), c("COPY k k2 REPLACE"), c("COPY nope k3"), c("COPY k k5 DB 2"),
		c("SELECT 2"), c("GET nope"), c("EXPIRE k5 100"), c("SELECT 0"), c("SET a 1"), c("SET b 2"), c("SELECT 3"),
		c("SET c 1"), c("SWAPDB 0 3"), c("GET a"), c("SELECT 0"), c("DEL c"), c("FLUSHDB"), c("SET z 1"),
		c("FLUSHALL"), c("SET z 1"), c("FLUSHDB ASYNC"),
	},
	"hashes": {
		c("HSET h a 1 b 2"), c("HSET h a 1"), c("HSET h a 2 c 3"), c("HSETNX h a 1"), c("HSETNX h d 1"), c("HSETNX h2 a 1"),
		c("HMSET h e 1"), c("HMSET h3 a 1"), c("HDEL h a nope"), c("HDEL h nope"), c("HDEL nope a"),
		c("HINCRBY h n 5"), c("HINCRBY h4 n 5"), c("HINCRBY h a x"), c("HINCRBYFLOAT h f 1.5"), c("HINCRBYFLOAT h5 f 1"),
		c("HDEL h2 a"), c("HDEL h b c d e n f"), c("EXISTS h"), c("HGET nope a"), c("HGET h3 nope"), c("HMGET nope a b"),
		c("HGETALL nope"), c("HEXISTS nope a"), c("HKEYS nope"), c("HVALS nope"), c("HLEN nope"), c("HSTRLEN nope a"),
		c("HSCAN nope 0"), c("HRANDFIELD nope"), c("HSET k"), c("SET s v"), c("HSET s a 1"),
	},
	"lists": {
		c("LPUSH l a b"), c("RPUSH l c"), c("LPUSHX l d"), c("LPUSHX nope d"), c("RPUSHX l e"), c("RPUSHX nope e"),
		c("LINSERT l BEFORE a z"), c("LINSERT l AFTER nope z"), c("LINSERT nope BEFORE a z"), c("LSET l 0 q"),
		c("LSET l 99 q"), c("LREM l 1 q"), c("LREM l 1 nope"), c("LTRIM l 0 2"), c("LTRIM l 0 -1"), c("LRANGE l 0 -1"),
		c("LPOP l"), c("RPOP l"), c("LPOP l 5"), c("LPOP l"), c("RPUSH l2 a b c"), c("LTRIM l2 5 10"), c("EXISTS l2"),
		c("RPUSH l3 a b c"), c("LMOVE l3 l4 LEFT RIGHT"), c("LMOVE l3 l4 RIGHT LEFT"), c("LMOVE l3 l4 LEFT LEFT"),
		c("LMOVE nope l4 LEFT LEFT"), c("RPOPLPUSH l4 l4"), c("RPOPLPUSH l4 l5"), c("LMOVE l4 l4 LEFT RIGHT"),
		c("RPUSH m1 a b"), c("LMPOP 2 nope m1 LEFT COUNT 1"), c("LMPOP 1 m1 RIGHT COUNT 5"), c("LMPOP 1 m1 LEFT"),
		c("RPUSH b1 x"), c("BLPOP b1 1"), c("RPUSH b1 x y"), c("BRPOP b1 1"), c("BLMOVE b1 b2 LEFT LEFT 1"),
		c("BRPOPLPUSH b2 b3 1"), c("RPUSH b4 x"), c("BLMPOP 1 1 b4 LEFT"), c("RPUSH lr a a a"), c("LREM lr 0 a"),
		c("LRANGE nope 0 -1"), c("LINDEX nope 0"), c("LLEN nope"), c("LPOS nope a"), c("RPUSH lr x"), c("LINDEX lr 5"),
		c("LPOP nope"), c("RPOP nope 2"), c("SET s v"), c("LPUSH s x"),
	},
	"sets": {
		c("SADD s a b"), c("SADD s a"), c("SADD s c"), c("SREM s a nope"), c("SREM s nope"), c("SREM nope a"),
		c("SPOP s", sameType), c("SPOP nope"), c("SADD s2 a b c"), c("SPOP s2 2", sameType), c("SPOP s2 5", sameType), c("SADD s3 a"), c("SPOP s3 0"),
		c("SADD x a b c"), c("SADD y b c d"), c("SINTERSTORE d x y"), c("SINTERSTORE d x y"), c("SUNIONSTORE u x y"),
		c("SDIFFSTORE df x y"), c("SINTERSTORE d x nope"), c("SINTERSTORE d x nope"), c("SUNIONSTORE u nope nope2"),
		c("SDIFFSTORE df nope x"), c("SMOVE x y a"), c("SMOVE x y b"), c("SMOVE x z c"), c("SMOVE nope y a"),
		c("SADD p a"), c("SMOVE p p a"), c("SMOVE p q nope"), c("SMOVE p q a"),
		c("SMEMBERS nope"), c("SISMEMBER nope a"), c("SMISMEMBER nope a"), c("SCARD nope"), c("SRANDMEMBER nope"),
		c("SINTER nope y nope2"), c("SUNION nope y", sortedBulk), c("SDIFF nope y"), c("SINTERCARD 2 nope y"),
		c("SSCAN nope 0"), c("SREM y b c d"),
	},
	"zsets": {
		c("ZADD z 1 a 2 b"), c("ZADD z 1 a"), c("ZADD z 5 a"), c("ZADD z XX 1 nope"), c("ZADD nope XX 1 a"),
		c("ZADD z NX 1 a"), c("ZADD z INCR 2 a"), c("ZADD z GT 1 a"), c("ZADD z CH 9 b"), c("ZINCRBY z 1 c"),
		c("ZINCRBY z2 1 c"), c("ZREM z c nope"), c("ZREM z nope"), c("ZREM nope a"), c("ZADD r 1 a 2 b 3 c 4 d"),
		c("ZREMRANGEBYRANK r 0 0"), c("ZREMRANGEBYRANK r 10 20"), c("ZREMRANGEBYSCORE r 2 2"),
		c("ZREMRANGEBYSCORE r 100 200"), c("ZREMRANGEBYLEX r - +"), c("ZREMRANGEBYLEX nope - +"),
		c("ZADD x 1 a 2 b"), c("ZADD y 1 b 3 c"), c("ZUNIONSTORE u 2 x y"), c("ZINTERSTORE i 2 x y"),
		c("ZDIFFSTORE d 2 x y"), c("ZINTERSTORE i 2 x nope"), c("ZINTERSTORE i 2 x nope"), c("ZUNIONSTORE u 1 nope"),
		c("ZDIFFSTORE d 1 nope"), c("ZRANGESTORE rs x 0 -1"), c("ZRANGESTORE rs x 5 10"), c("ZRANGESTORE rs nope 0 1"),
		c("ZADD p 1 a 2 b 3 c"), c("ZPOPMIN p"), c("ZPOPMAX p 5"), c("ZPOPMIN nope"), c("ZADD p 1 a 2 b"),
		c("ZMPOP 2 nope p MIN COUNT 1"), c("ZMPOP 1 p MAX COUNT 9"), c("ZADD b1 1 a"), c("BZPOPMIN b1 1"),
		c("ZADD b1 1 a 2 b"), c("BZPOPMAX b1 1"), c("BZMPOP 1 1 b1 MIN"), c("ZADD e 1 a"), c("ZREM e a"),
		c("ZRANGE nope 0 -1"), c("ZSCORE nope a"), c("ZCARD nope"), c("ZRANK nope a"), c("ZCOUNT nope 0 1"),
		c("ZRANGEBYSCORE nope 0 1"), c("ZMSCORE nope a"), c("ZRANDMEMBER nope"), c("ZUNION 2 nope x"),
		c("ZINTER 2 nope x"), c("ZDIFF 1 nope"), c("ZINTERCARD 1 nope"), c("ZSCAN nope 0"), c("ZLEXCOUNT nope - +"),
		c("ZADD x NX GT 1 a"), c("ZADD x 1"), c("SET s v"), c("ZADD s 1 a"),
	},
	// "#bg" sends a blocking command on a third connection and waits until
	// the server has parked it; "#bgreply" reads its reply, once a write
	// served it.
	"blocked-served": {
		c("#bg BLPOP q 0"), c("LPUSH q a"), c("#bgreply"), c("#bg BRPOP q 0"), c("RPUSH q a b"), c("#bgreply"),
		c("#bg BLMOVE src dst LEFT RIGHT 0"), c("RPUSH src x"), c("#bgreply"),
		c("#bg BRPOPLPUSH src dst 0"), c("LPUSH src y"), c("#bgreply"),
		c("#bg BLMPOP 0 2 m1 m2 LEFT COUNT 2"), c("RPUSH m2 a b c"), c("#bgreply"),
		c("#bg BZPOPMIN z 0"), c("ZADD z 1 a"), c("#bgreply"), c("#bg BZPOPMAX z 0"), c("ZADD z 1 a 2 b"), c("#bgreply"),
		c("#bg BZMPOP 0 1 z2 MIN COUNT 5"), c("ZADD z2 1 a 2 b"), c("#bgreply"),
		c("SELECT 3"), c("#bg BLPOP q3 0"), c("LPUSH q3 a"), c("#bgreply"),
	},
	"transactions": {
		c("MULTI"), c("SET a 1"), c("INCR a"), c("LPUSH l x"), c("DEL a nope"), c("EXEC"),
		s(exact, "EVAL", "redis.call('SET', KEYS[1], 'v'); redis.call('EXPIRE', KEYS[1], 100); return redis.call('DEL', KEYS[1])", "1", "sk"),
		s(exact, "EVAL", "return redis.call('GET', KEYS[1])", "1", "nope"),
	},
	"lazy-expiry": {
		c("SET k v PX 30"), c("SET k2 v PX 30"), c("SET k3 v PX 30"), c("SET k4 v PX 30"), c("SET k5 v PX 30"),
		c("HSET h a 1"), c("PEXPIRE h 30"), c("#wait 60"), c("GET k"), c("SET k2 w"), c("EXISTS k3"), c("DEL k4"),
		c("INCR k5"), c("HGET h a"), c("GET k"),
	},
	"classes-g": {
		c("CONFIG SET notify-keyspace-events Eg"), c("SET k v EX 100"), c("DEL k"), c("LPUSH l a"), c("LPOP l"),
		c("GET nope"), c("RENAME l x"),
	},
	"classes-string-list": {
		c("CONFIG SET notify-keyspace-events K$l"), c("SET k v EX 100"), c("DEL k"), c("LPUSH l a"), c("LPOP l"),
		c("SADD s a"), c("HSET h a 1"), c("ZADD z 1 a"),
	},
	"classes-shz": {
		c("CONFIG SET notify-keyspace-events Kshz"), c("SADD s a"), c("SREM s a"), c("HSET h a 1"), c("HDEL h a"),
		c("ZADD z 1 a"), c("ZREM z a"), c("SET k v"),
	},
	"classes-new-miss-only": {
		c("CONFIG SET notify-keyspace-events Enm"), c("SET k v"), c("SET k v"), c("GET nope"), c("LPUSH l a"),
		c("HINCRBY h f 1"), c("RENAME k k2"), c("COPY k2 k3"), c("SADD s a"), c("SMOVE s t a"),
	},
	"classes-keyspace-only": {
		c("CONFIG SET notify-keyspace-events KA"), c("SET k v"), c("DEL k"),
	},
	"classes-none": {
		c("CONFIG SET notify-keyspace-events A"), c("SET k v"), c("CONFIG SET notify-keyspace-events K"), c("SET k v"),
		c("CONFIG SET notify-keyspace-events ''"), c("SET k v"),
	},
}

// TestDifferentialNotifications runs notifyCases on redis-server and Shoal.
func TestDifferentialNotifications(t *testing.T) {
	redisAddr := startRedis(t, "--enable-debug-command", "yes")
	shoal := shoaltest.Start(t, shoaltest.Options{Store: store.Options{ActiveExpireInterval: -1},
		Loop: eventloop.Options{Engine: testEngine(t)}})
	ref := dialRaw(t, redisAddr)
	if r := ref.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); r != "+OK\r\n" {
		t.Fatalf("DEBUG SET-ACTIVE-EXPIRE 0: %q", r)
	}
	for name, steps := range notifyCases {
		t.Run(name, func(t *testing.T) {
			runNotifyDiff(t, redisAddr, shoal.Addr, steps)
		})
	}
}

// notifyListener is one server's pair of connections: commands on one,
// PSUBSCRIBE __key*__:* on the other.
type notifyListener struct {
	cmd, sub *rawConn
	bg       *rawConn // the blocking commands' connection
	addr     string
	marks    int
	inMulti  bool
}

func newNotifyListener(t *testing.T, addr string) *notifyListener {
	t.Helper()
	l := &notifyListener{cmd: dialRaw(t, addr), sub: dialRaw(t, addr), addr: addr}
	for _, args := range [][]string{{"SELECT", "0"}, {"FLUSHALL"}, {"CONFIG", "SET", "notify-keyspace-events", "KEAmn"}} {
		if r := l.cmd.Do(args...); r != "+OK\r\n" {
			t.Fatalf("%q: %q", args, r)
		}
	}
	if r := l.sub.Do("PSUBSCRIBE", "__key*__:*"); !strings.Contains(r, "psubscribe") {
		t.Fatalf("PSUBSCRIBE: %q", r)
	}
	return l
}

// run sends args and returns the reply and the messages the listener got
// for it. Between MULTI and EXEC the marker would be queued too: the
// messages of a transaction's commands come with EXEC's.
func (l *notifyListener) run(t *testing.T, args []string) (reply string, msgs []string) {
	t.Helper()
	reply = l.cmd.Do(args...)
	switch strings.ToUpper(args[0]) {
	case "MULTI":
		l.inMulti = true
	case "EXEC", "DISCARD":
		l.inMulti = false
	}
	if l.inMulti {
		return reply, nil
	}
	l.marks++
	mark := strconv.Itoa(l.marks)
	l.cmd.Do("PUBLISH", notifyMarkChannel, mark)
	for {
		m, err := l.sub.Read()
		if err != nil {
			t.Fatalf("%q: reading notifications: %v", args, err)
		}
		if strings.Contains(m, notifyMarkChannel) {
			if !strings.HasSuffix(m, "$"+strconv.Itoa(len(mark))+"\r\n"+mark+"\r\n") {
				t.Fatalf("%q: marker out of order: %q", args, m)
			}
			return reply, msgs
		}
		msgs = append(msgs, m)
	}
}

// notifyMarkChannel matches the listener's pattern but is no key's.
const notifyMarkChannel = "__keyspace@0__:\x00mark"

func runNotifyDiff(t *testing.T, redisAddr, shoalAddr string, steps []step) {
	t.Helper()
	ref, got := newNotifyListener(t, redisAddr), newNotifyListener(t, shoalAddr)
	for i, st := range steps {
		if st.args[0] == "#wait" {
			ms, _ := strconv.Atoi(st.args[1])
			time.Sleep(time.Duration(ms) * time.Millisecond) // a TTL runs out: only the clock can do that
			continue
		}
		switch st.args[0] {
		case "#bg":
			ref.block(t, st.args[1:])
			got.block(t, st.args[1:])
			continue
		case "#bgreply":
			want, have := mustRead(t, ref.bg), mustRead(t, got.bg)
			if want != have {
				t.Errorf("step %d: the served command's reply:\nredis: %q\nshoal: %q", i, want, have)
			}
			continue
		}
		args := st.args
		if len(args) == 4 && args[3] == "''" {
			args = append(args[:3:3], "")
		}
		wantReply, want := ref.run(t, args)
		haveReply, have := got.run(t, args)
		if !equalReplies(st.mode, wantReply, haveReply) {
			t.Errorf("step %d %q reply:\nredis: %q\nshoal: %q", i, args, wantReply, haveReply)
		}
		if strings.Join(want, "") != strings.Join(have, "") {
			t.Errorf("step %d %q notifications:\nredis: %q\nshoal: %q", i, args, briefMessages(want), briefMessages(have))
		}
	}
}

// briefMessages shows pmessages as "channel message" for a failure's text;
// the comparison is of the raw bytes.
func briefMessages(msgs []string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		if lines := strings.Split(m, "\r\n"); len(lines) >= 9 && lines[2] == "pmessage" {
			out[i] = lines[6] + " " + lines[8]
		} else {
			out[i] = m
		}
	}
	return out
}

// block sends a blocking command on the listener's third connection, in
// the database the command connection uses, and returns once the server
// counts it among INFO's blocked_clients.
func (l *notifyListener) block(t *testing.T, args []string) {
	t.Helper()
	if l.bg == nil {
		l.bg = dialRaw(t, l.addr)
	}
	db := "0"
	if info := l.cmd.Do("CLIENT", "INFO"); strings.Contains(info, " db=") {
		db = strings.Fields(info[strings.Index(info, " db=")+4:])[0]
	}
	l.bg.Do("SELECT", db)
	l.bg.Send(encodeCommand(args))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(l.cmd.Do("INFO", "clients"), "blocked_clients:1\r\n") {
		if time.Now().After(deadline) {
			t.Fatalf("%q did not block", args)
		}
		time.Sleep(time.Millisecond) // polling the server's own count
	}
}

// TestDifferentialNotifyConfig: CONFIG SET notify-keyspace-events takes
// and refuses the values redis-server does, with its error text, and
// CONFIG GET answers in Redis's canonical order.
func TestDifferentialNotifyConfig(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{Engine: testEngine(t)})
	var steps []step
	for _, v := range []string{"KEA", "", "K", "E", "g", "$", "l", "s", "h", "z", "x", "e", "t", "m", "d", "n", "A",
		"KA", "EA", "Kn", "Em", "KEAmn", "KEg$lshzxetdmn", "Ex", "foo", "KEA!", "AKE", "gA", "$lshzxetdKE", "nmEK",
		"kea", " ", "KEA ", "KK", "Ag$lshzxeKEtmdn"} {
		steps = append(steps, s(exact, "CONFIG", "SET", "notify-keyspace-events", v),
			s(exact, "CONFIG", "GET", "notify-keyspace-events"))
	}
	steps = append(steps, c("CONFIG SET notify-keyspace-events"), c("CONFIG GET notify-*"),
		c("CONFIG SET notify-keyspace-events KEA notify-keyspace-events x"), c("CONFIG GET notify-keyspace-events"),
		c("CONFIG SET notify-keyspace-events KEA maxmemory-policy bad"), c("CONFIG GET notify-keyspace-events"),
		s(exact, "CONFIG", "SET", "notify-keyspace-events", ""))
	runDiff(t, redisAddr, shoal.addr, 2, steps, false)
}
