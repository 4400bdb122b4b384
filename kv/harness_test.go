package kv_test

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// freePort asks the kernel for an unused loopback port.
func freePort(t testing.TB) int { return redistest.FreePort(t) }

// startRedis starts a real redis-server 7 without persistence, with its
// default 16 databases as Shoal's, and stops it by PID when the test ends.
func startRedis(t testing.TB, extra ...string) string {
	t.Helper()
	return redistest.StartServer(t, extra...)
}

// waitPing reports whether addr answers PING (any reply: NOAUTH counts).
func waitPing(addr string, within time.Duration) bool { return redistest.WaitPing(addr, within) }

// bothServers runs scenario against a redis-server started with
// redisArgs, then against a Shoal on loops loops (which take connections
// in turn), compares what it returns, reply by reply, and returns
// redis-server's replies for the caller's own checks.
func bothServers(t *testing.T, loops int, redisArgs []string, scenario func(t *testing.T, addr string) []string) []string {
	t.Helper()
	redisAddr := startRedis(t, redisArgs...)
	shoal := startLoops(t, loops)
	want := scenario(t, redisAddr)
	sameReplies(t, want, scenario(t, shoal.addr))
	return want
}

// sameReplies reports every position where Shoal's replies (have) differ
// from redis-server's (want), a missing one counting as "".
func sameReplies(t *testing.T, want, have []string) {
	t.Helper()
	for i := range max(len(want), len(have)) {
		var w, h string
		if i < len(want) {
			w = want[i]
		}
		if i < len(have) {
			h = have[i]
		}
		if w != h {
			t.Errorf("reply %d: redis-server %q, shoal %q", i, w, h)
		}
	}
}

// shoalServer is an in-process Shoal (internal/shoaltest): the command
// layer behind the serving edge on a real eventloop server on loopback.
type shoalServer struct {
	addr    string
	srv     *eventloop.Server
	handler *kv.Handler
	store   *store.Store
}

func startShoal(t testing.TB, o kv.Options, eo eventloop.Options) *shoalServer {
	t.Helper()
	s := shoaltest.Start(t, shoaltest.Options{KV: o, Loop: eo})
	return &shoalServer{addr: s.Addr, srv: s.Loop, handler: s.KV, store: s.Store}
}

// testEngine is the eventloop engine the in-process servers of these tests
// run on (SHOAL_TEST_ENGINE; CI runs the package both ways).
func testEngine(t testing.TB) eventloop.Engine { return shoaltest.Engine(t) }

// rawConn is internal/shoaltest's raw RESP client: replies byte for byte.
type rawConn = shoaltest.RawConn

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	return shoaltest.Dial(t, addr)
}

func encodeCommand(args []string) []byte { return shoaltest.EncodeCommand(args) }

func readReply(rd *bufio.Reader, sb *strings.Builder) error { return shoaltest.ReadReply(rd, sb) }

// configure CONFIG SETs param to value through c, failing the test if that
// is refused, and sets it to restore when the test ends.
func configure(t *testing.T, c *rawConn, param, value, restore string) {
	t.Helper()
	if r := c.Do("CONFIG", "SET", param, value); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET %s %q: %q", param, value, r)
	}
	t.Cleanup(func() { c.Do("CONFIG", "SET", param, restore) })
}

// forEachProtocol runs fn in a subtest for RESP3 and then RESP2, with a
// go-redis client made from o speaking that protocol, closed after it.
func forEachProtocol(t *testing.T, o redis.Options, fn func(t *testing.T, rdb *redis.Client, proto int)) {
	for _, proto := range []int{3, 2} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			o.Protocol = proto
			rdb := redis.NewClient(&o)
			defer rdb.Close()
			fn(t, rdb, proto)
		})
	}
}

// goredisHelpers returns the checks of the go-redis typed-API tests: check
// stops the test on an error, eq reports a value that prints other than
// want.
func goredisHelpers(t *testing.T) (check func(string, error), eq func(string, any, any)) {
	check = func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eq = func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	return check, eq
}

// redisAndShoal starts a redis-server and a Shoal and returns a RESP2
// go-redis client of each, closed when the test ends.
func redisAndShoal(t *testing.T) (ref, ours *redis.Client) {
	t.Helper()
	ref = redis.NewClient(&redis.Options{Addr: startRedis(t), Protocol: 2})
	t.Cleanup(func() { ref.Close() })
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	ours = redis.NewClient(&redis.Options{Addr: srv.addr, Protocol: 2})
	t.Cleanup(func() { ours.Close() })
	return ref, ours
}

// dialFresh dials addr, empties its databases and switches to RESP3 when
// proto is 3: a connection for a differential test.
func dialFresh(t *testing.T, addr string, proto int) *rawConn {
	t.Helper()
	c := dialRaw(t, addr)
	if r := c.Do("FLUSHALL"); r != "+OK\r\n" {
		t.Fatalf("FLUSHALL on %s: %q", addr, r)
	}
	if proto == 3 {
		c.Do("HELLO", "3")
	}
	return c
}
