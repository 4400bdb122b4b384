package kv_test

import (
	"bufio"
	"strings"
	"testing"
	"time"

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
