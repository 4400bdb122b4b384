package kv_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// startLoops serves Shoal on loops loops that take connections in turn, so
// clients dialled one after another sit on different loops.
func startLoops(t *testing.T, loops int) *shoalServer {
	return startShoal(t, kv.Options{}, eventloop.Options{Loops: loops, Balancer: &eventloop.RoundRobin{}})
}

// oneConn is a go-redis client with a single connection, dialled now.
func oneConn(t *testing.T, addr string, proto int) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, PoolSize: 1, MinIdleConns: 0, ReadTimeout: -1})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return rdb
}

// eachProtocolConn starts a Shoal on two loops and runs fn with a oneConn
// client speaking RESP2, then with one speaking RESP3, each after a
// FLUSHALL.
func eachProtocolConn(t *testing.T, fn func(rdb *redis.Client, proto int)) {
	t.Helper()
	srv := startLoops(t, 2)
	for _, proto := range []int{2, 3} {
		rdb := oneConn(t, srv.addr, proto)
		if err := rdb.FlushAll(context.Background()).Err(); err != nil {
			t.Fatalf("resp%d FLUSHALL: %v", proto, err)
		}
		fn(rdb, proto)
	}
}

// startBlocked runs pop, a blocking command, in its own goroutine and
// returns once observer sees it blocked; the channel gets pop's result.
func startBlocked[T any](t *testing.T, observer *redis.Client, pop func() T) <-chan T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- pop() }()
	waitBlocked(t, observer, 1)
	return done
}

func blockedClients(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "clients").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "blocked_clients:"); ok {
			var n int
			fmt.Sscan(v, &n)
			return n
		}
	}
	t.Fatal("INFO clients has no blocked_clients")
	return 0
}

func waitBlocked(t *testing.T, rdb *redis.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for blockedClients(t, rdb) != n {
		if time.Now().After(deadline) {
			t.Fatalf("blocked_clients never reached %d (is %d)", n, blockedClients(t, rdb))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestGoRedisLists drives the list family through go-redis's typed API in
// RESP2 and RESP3.
func TestGoRedisLists(t *testing.T) {
	ctx := context.Background()
	eachProtocolConn(t, func(rdb *redis.Client, proto int) {
		if n := rdb.RPush(ctx, "l", "a", "b", "c", "d").Val(); n != 4 {
			t.Fatalf("RPUSH: %d", n)
		}
		rdb.LPush(ctx, "l", "z")
		if got := rdb.LRange(ctx, "l", 0, -1).Val(); strings.Join(got, ",") != "z,a,b,c,d" {
			t.Fatalf("LRANGE: %v", got)
		}
		if got := rdb.LPopCount(ctx, "l", 2).Val(); strings.Join(got, ",") != "z,a" {
			t.Fatalf("LPOP 2: %v", got)
		}
		if got := rdb.RPop(ctx, "l").Val(); got != "d" {
			t.Fatalf("RPOP: %q", got)
		}
		if err := rdb.LPop(ctx, "missing").Err(); err != redis.Nil {
			t.Fatalf("LPOP missing: %v", err)
		}
		if got := rdb.LPos(ctx, "l", "c", redis.LPosArgs{}).Val(); got != 1 {
			t.Fatalf("LPOS: %d", got)
		}
		if got := rdb.LMove(ctx, "l", "m", "LEFT", "RIGHT").Val(); got != "b" {
			t.Fatalf("LMOVE: %q", got)
		}
		key, vals, err := rdb.LMPop(ctx, "right", 5, "nothing", "l").Result()
		if err != nil || key != "l" || strings.Join(vals, ",") != "c" {
			t.Fatalf("LMPOP: %q %v %v", key, vals, err)
		}
		rdb.RPush(ctx, "l", "x", "y", "x")
		rdb.LInsertAfter(ctx, "l", "y", "after-y")
		rdb.LSet(ctx, "l", 0, "first")
		rdb.LRem(ctx, "l", -1, "x")
		rdb.LTrim(ctx, "l", 0, 1)
		if got := rdb.LRange(ctx, "l", 0, -1).Val(); strings.Join(got, ",") != "first,y" {
			t.Fatalf("after LINSERT/LSET/LREM/LTRIM: %v", got)
		}
		if got := rdb.LIndex(ctx, "l", -1).Val(); got != "y" {
			t.Fatalf("LINDEX: %q", got)
		}
		if err := rdb.Set(ctx, "s", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.LPush(ctx, "s", "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatalf("LPUSH on a string: %v", err)
		}
	})
}

// TestBlockingPopAcrossLoops: a BLPOP parked on one loop is served by a
// push from a connection on the other, and the parked loop keeps serving
// other clients meanwhile.
func TestBlockingPopAcrossLoops(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	waiter := oneConn(t, srv.addr, 2) // loop 0
	pusher := oneConn(t, srv.addr, 3) // loop 1
	other := oneConn(t, srv.addr, 2)  // loop 0 again
	done := startBlocked(t, pusher, func() []string { return waiter.BLPop(ctx, 0, "q").Val() })
	if err := other.Set(ctx, "alive", "1", 0).Err(); err != nil {
		t.Fatalf("the waiter's loop stopped serving: %v", err)
	}
	if n := pusher.RPush(ctx, "q", "v1", "v2").Val(); n != 2 {
		t.Fatalf("RPUSH: %d", n)
	}
	select {
	case got := <-done:
		if strings.Join(got, ",") != "q,v1" {
			t.Fatalf("BLPOP got %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("BLPOP was not served")
	}
	if got := pusher.LRange(ctx, "q", 0, -1).Val(); strings.Join(got, ",") != "v2" {
		t.Fatalf("left in the list: %v", got)
	}
	waitBlocked(t, pusher, 0)
	// Answered at once when the list has elements.
	if got := waiter.BRPop(ctx, 0, "nothing", "q").Val(); strings.Join(got, ",") != "q,v2" {
		t.Fatalf("BRPOP on a non-empty list: %v", got)
	}
}

// TestBlockingWaitersAreServedInOrder: several clients blocked on one key,
// on both loops, get the pushed elements in the order they blocked.
func TestBlockingWaitersAreServedInOrder(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	pusher := oneConn(t, srv.addr, 2)
	const n = 5
	results := make([]chan string, n)
	for i := 0; i < n; i++ {
		rdb := oneConn(t, srv.addr, 2+i%2)
		results[i] = make(chan string, 1)
		go func(ch chan string) {
			v := rdb.BLPop(ctx, 0, "other", "fifo").Val()
			if len(v) == 2 {
				ch <- v[1]
			} else {
				ch <- "error"
			}
		}(results[i])
		waitBlocked(t, pusher, i+1)
	}
	pusher.RPush(ctx, "fifo", "e0", "e1", "e2")
	pusher.RPush(ctx, "fifo", "e3")
	pusher.LPush(ctx, "fifo", "e4")
	for i := 0; i < n; i++ {
		select {
		case got := <-results[i]:
			if want := fmt.Sprint("e", i); got != want {
				t.Fatalf("waiter %d got %q, want %q", i, got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d not served", i)
		}
	}
}

// TestBlockingTimeouts: a fractional timeout answers nil once it passes.
func TestBlockingTimeouts(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		rdb := oneConn(t, srv.addr, proto)
		start := time.Now()
		if err := rdb.BLPop(ctx, 150*time.Millisecond, "empty").Err(); err != redis.Nil {
			t.Fatalf("BLPOP timeout: %v", err)
		}
		if took := time.Since(start); took < 140*time.Millisecond || took > 3*time.Second {
			t.Fatalf("BLPOP 0.15 returned after %v", took)
		}
		if err := rdb.BLMove(ctx, "empty", "d", "LEFT", "RIGHT", 50*time.Millisecond).Err(); err != redis.Nil {
			t.Fatalf("BLMOVE timeout: %v", err)
		}
		if _, _, err := rdb.BLMPop(ctx, 50*time.Millisecond, "left", 2, "empty").Result(); err != redis.Nil {
			t.Fatalf("BLMPOP timeout: %v", err)
		}
		if err := rdb.Do(ctx, "BLPOP", "empty", "-1").Err(); err == nil || err.Error() != "ERR timeout is negative" {
			t.Fatalf("negative timeout: %v", err)
		}
		if got := blockedClients(t, rdb); got != 0 {
			t.Fatalf("blocked_clients after the timeouts: %d", got)
		}
	}
}

// TestBlockedClientDisconnects: a waiter that goes away leaves the queue;
// the next push stays in the list instead of vanishing.
func TestBlockedClientDisconnects(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	pusher := oneConn(t, srv.addr, 2)
	raw := dialRaw(t, srv.addr)
	raw.Send(encodeCommand([]string{"BLPOP", "gone", "0"}))
	waitBlocked(t, pusher, 1)
	raw.C.Close()
	waitBlocked(t, pusher, 0)
	pusher.RPush(ctx, "gone", "kept")
	if got := pusher.LRange(ctx, "gone", 0, -1).Val(); strings.Join(got, ",") != "kept" {
		t.Fatalf("after the waiter left: %v", got)
	}
	// CLIENT KILL of a blocked client cleans up the same way.
	victim := oneConn(t, srv.addr, 2)
	id := victim.ClientID(ctx).Val()
	go victim.BLPop(ctx, 0, "killed")
	waitBlocked(t, pusher, 1)
	if err := pusher.ClientKillByFilter(ctx, "ID", fmt.Sprint(id)).Err(); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, pusher, 0)
}

// TestBlockedPipelineWaits: commands pipelined after a BLPOP in the same
// read run only once it is served, and in order.
func TestBlockedPipelineWaits(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	pusher := oneConn(t, srv.addr, 2)
	raw := dialRaw(t, srv.addr)
	var batch []byte
	for _, cmd := range [][]string{{"BLPOP", "p", "0"}, {"SET", "after", "1"}, {"GET", "after"}, {"BLPOP", "p", "0"}, {"INCR", "n"}} {
		batch = append(batch, encodeCommand(cmd)...)
	}
	raw.Send(batch)
	waitBlocked(t, pusher, 1)
	time.Sleep(20 * time.Millisecond)
	if err := pusher.Get(ctx, "after").Err(); err != redis.Nil {
		t.Fatalf("a command after the BLPOP ran before it was served: %v", err)
	}
	pusher.RPush(ctx, "p", "one")
	for _, want := range []string{"*2\r\n$1\r\np\r\n$3\r\none\r\n", "+OK\r\n", "$1\r\n1\r\n"} {
		if got := mustRead(t, raw); got != want {
			t.Fatalf("reply %q, want %q", got, want)
		}
	}
	waitBlocked(t, pusher, 1) // the second BLPOP parks in turn
	if err := pusher.Get(ctx, "n").Err(); err != redis.Nil {
		t.Fatal("INCR ran before the second BLPOP was served")
	}
	pusher.LPush(ctx, "p", "two")
	for _, want := range []string{"*2\r\n$1\r\np\r\n$3\r\ntwo\r\n", ":1\r\n"} {
		if got := mustRead(t, raw); got != want {
			t.Fatalf("reply %q, want %q", got, want)
		}
	}
}

// TestBlockingMoveChains: a BLMOVE served by a push creates its
// destination, which serves a BLPOP waiting there.
func TestBlockingMoveChains(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	mover := oneConn(t, srv.addr, 2)
	popper := oneConn(t, srv.addr, 3)
	pusher := oneConn(t, srv.addr, 2)
	moved := make(chan string, 1)
	popped := make(chan []string, 1)
	go func() { moved <- mover.BLMove(ctx, "src", "dst", "RIGHT", "LEFT", 0).Val() }()
	waitBlocked(t, pusher, 1)
	go func() { popped <- popper.BLPop(ctx, 0, "dst").Val() }()
	waitBlocked(t, pusher, 2)
	pusher.RPush(ctx, "src", "a", "b")
	if got := <-moved; got != "b" {
		t.Fatalf("BLMOVE got %q", got)
	}
	if got := <-popped; strings.Join(got, ",") != "dst,b" {
		t.Fatalf("BLPOP on the destination got %v", got)
	}
	if n := pusher.Exists(ctx, "dst").Val(); n != 0 {
		t.Fatal("the moved element was not popped from the destination")
	}
}

// TestBlockingRacingPushesLoseNothing: waiters on both loops and pushers on
// both loops racing: every pushed element is popped exactly once.
func TestBlockingRacingPushesLoseNothing(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 3, Balancer: &eventloop.RoundRobin{}})
	ctx := context.Background()
	const waiters, pushers, each = 6, 3, 300
	total := pushers * each
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < waiters; i++ {
		rdb := oneConn(t, srv.addr, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v, err := rdb.BLPop(ctx, 50*time.Millisecond, "race1", "race2").Result()
				if errors.Is(err, redis.Nil) {
					select {
					case <-stop:
						return
					default:
						continue
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[v[1]]++
				mu.Unlock()
			}
		}()
	}
	var pw sync.WaitGroup
	for p := 0; p < pushers; p++ {
		rdb := oneConn(t, srv.addr, 2)
		pw.Add(1)
		go func(p int) {
			defer pw.Done()
			for i := 0; i < each; i++ {
				key := []string{"race1", "race2"}[i%2]
				if err := rdb.RPush(ctx, key, fmt.Sprintf("%d-%d", p, i)).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}(p)
	}
	pw.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == total || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if len(seen) != total {
		t.Fatalf("%d distinct elements popped of %d pushed", len(seen), total)
	}
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("%s popped %d times", v, n)
		}
	}
}

// TestBlockingPopIsLoggedAsItsEffect: a BLPOP served by a push is logged as
// the LPOP it amounts to, and the file replays to the same list.
func TestBlockingPopIsLoggedAsItsEffect(t *testing.T) {
	srv := startAOF(t, aof.FsyncAlways)
	ctx := context.Background()
	waiter := oneConn(t, srv.addr, 2)
	pusher := oneConn(t, srv.addr, 2)
	done := startBlocked(t, pusher, func() []string { return waiter.BLPop(ctx, 0, "k").Val() })
	pusher.RPush(ctx, "k", "a", "b")
	if got := <-done; strings.Join(got, ",") != "k,a" {
		t.Fatalf("BLPOP: %v", got)
	}
	pusher.RPush(ctx, "l", "1", "2", "3")
	if _, got, err := pusher.BLMPop(ctx, 0, "right", 2, "l").Result(); err != nil || len(got) != 2 {
		t.Fatalf("BLMPOP: %v %v", got, err)
	}
	log := srv.stopAndReadLog(t)
	for _, want := range []string{"*2\r\n$4\r\nLPOP\r\n$1\r\nk\r\n", "*3\r\n$4\r\nRPOP\r\n$1\r\nl\r\n$1\r\n2\r\n"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the log lacks %q:\n%q", want, log)
		}
	}
	if strings.Contains(strings.ToUpper(log), "BLPOP") || strings.Contains(strings.ToUpper(log), "BLMPOP") {
		t.Fatalf("a blocking command was logged as itself:\n%q", log)
	}
	rdb := oneConn(t, srv.restart(t).addr, 2)
	if got := rdb.LRange(ctx, "k", 0, -1).Val(); strings.Join(got, ",") != "b" {
		t.Fatalf("replayed k: %v", got)
	}
	if got := rdb.LRange(ctx, "l", 0, -1).Val(); strings.Join(got, ",") != "1" {
		t.Fatalf("replayed l: %v", got)
	}
}

// TestListSurvivesAOFRewrite: a rewritten file rebuilds a long list
// (RPUSH in batches) with its TTL.
func TestListSurvivesAOFRewrite(t *testing.T) {
	srv := startAOF(t, aof.FsyncEverySec)
	ctx := context.Background()
	rdb := oneConn(t, srv.addr, 2)
	var want []string
	for i := 0; i < 300; i++ {
		want = append(want, fmt.Sprint("element-", i, strings.Repeat("x", i%40)))
	}
	for _, v := range want {
		rdb.RPush(ctx, "long", v)
	}
	rdb.Expire(ctx, "long", time.Hour)
	if err := rdb.Do(ctx, "BGREWRITEAOF").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.w.RewriteStats().InProgress || srv.w.RewriteStats().Count == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the rewrite did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	rdb2 := oneConn(t, srv.restart(t).addr, 2)
	if got := rdb2.LRange(ctx, "long", 0, -1).Val(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("replayed list differs: %d elements", len(got))
	}
	if ttl := rdb2.TTL(ctx, "long").Val(); ttl <= 0 {
		t.Fatalf("TTL lost: %v", ttl)
	}
}
