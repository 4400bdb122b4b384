package kv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestGoRedisTxPipelined: go-redis's MULTI/EXEC pipeline, with a command
// that fails at run time answering its own error and the others running.
func TestGoRedisTxPipelined(t *testing.T) {
	ctx := context.Background()
	eachProtocolConn(t, func(rdb *redis.Client, proto int) {
		cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "n", 41, 0)
			p.Incr(ctx, "n")
			p.Set(ctx, "s", "text", 0)
			p.Incr(ctx, "s")
			p.Get(ctx, "n")
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "not an integer") {
			t.Errorf("resp%d: TxPipelined error %v, want INCR's ERR value is not an integer", proto, err)
		}
		if len(cmds) != 5 {
			t.Fatalf("resp%d: %d results", proto, len(cmds))
		}
		if got := cmds[1].(*redis.IntCmd).Val(); got != 42 {
			t.Errorf("resp%d: INCR in EXEC = %d, want 42", proto, got)
		}
		if cmds[3].Err() == nil {
			t.Errorf("resp%d: INCR of a string inside EXEC did not fail", proto)
		}
		if got := cmds[4].(*redis.StringCmd).Val(); got != "42" {
			t.Errorf("resp%d: GET in EXEC = %q", proto, got)
		}
	})
}

// TestGoRedisWatchRetriesAreExact: optimistic increments from many clients
// spread over the loops, each a WATCH / GET / MULTI SET EXEC retried while
// EXEC fails: the counter ends exact, and some EXECs did fail (the test
// exercises the WATCH path, not luck).
func TestGoRedisWatchRetriesAreExact(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 4})
	ctx := context.Background()
	const clients, perClient = 16, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	conflicts := 0
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		rdb := oneConn(t, srv.addr, 2+c%2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perClient; i++ {
				for {
					err := rdb.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "counter").Int()
						if err != nil && !errors.Is(err, redis.Nil) {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, "counter", n+1, 0)
							return nil
						})
						return err
					}, "counter")
					if errors.Is(err, redis.TxFailedErr) {
						mu.Lock()
						conflicts++
						mu.Unlock()
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rdb := oneConn(t, srv.addr, 3)
	if got := rdb.Get(ctx, "counter").Val(); got != strconv.Itoa(clients*perClient) {
		t.Errorf("counter = %s, want %d", got, clients*perClient)
	}
	if conflicts == 0 {
		t.Errorf("no EXEC failed on a watched key in %d contended increments", clients*perClient)
	}
	t.Logf("%d EXECs failed on a watched key", conflicts)
}

// TestExecIsAtomicAcrossLoops: writers increment two keys only inside
// MULTI/EXEC while readers on other loops read both inside MULTI/EXEC, and
// others read them with plain GETs between: no reader may ever see them
// differ inside a transaction.
func TestExecIsAtomicAcrossLoops(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 4})
	ctx := context.Background()
	const writers, readers, rounds = 8, 4, 150
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	stop := make(chan struct{})
	for w := 0; w < writers; w++ {
		rdb := oneConn(t, srv.addr, 3)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Incr(ctx, "a")
					p.IncrBy(ctx, "noise", 3)
					p.Incr(ctx, "b")
					return nil
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var rwg sync.WaitGroup
	reads := make([]int, readers)
	for r := 0; r < readers; r++ {
		rdb := oneConn(t, srv.addr, 2+r%2)
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Get(ctx, "a")
					p.Get(ctx, "b")
					return nil
				})
				if err != nil && !errors.Is(err, redis.Nil) {
					errs <- err
					return
				}
				a, b := cmds[0].(*redis.StringCmd).Val(), cmds[1].(*redis.StringCmd).Val()
				if a != b {
					errs <- fmt.Errorf("inside MULTI/EXEC a=%q b=%q", a, b)
					return
				}
				reads[r]++
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rdb := oneConn(t, srv.addr, 3)
	want := strconv.Itoa(writers * rounds)
	if a, b := rdb.Get(ctx, "a").Val(), rdb.Get(ctx, "b").Val(); a != want || b != want {
		t.Errorf("a=%s b=%s, want %s", a, b, want)
	}
	t.Logf("transactional reads per reader: %v", reads)
}

// TestGoRedisPubSub: channel and pattern subscriptions with go-redis in
// RESP2 and RESP3, publishers on other connections (and loops), every
// message received once, in publish order per publisher.
func TestGoRedisPubSub(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 4})
	ctx := context.Background()
	for _, proto := range []int{3, 2} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			// The previous subtest's subscriber closed its socket; the
			// server may not have seen the close yet (PUBLISH would
			// count it): wait until its subscriptions are gone.
			ctl := redis.NewClient(&redis.Options{Addr: srv.addr})
			defer ctl.Close()
			for deadline := time.Now().Add(10 * time.Second); ctl.PubSubNumSub(ctx, "news").Val()["news"] != 0 || ctl.PubSubNumPat(ctx).Val() != 0; {
				if time.Now().After(deadline) {
					t.Fatal("the previous subscriber is still subscribed 10 s after its close")
				}
				time.Sleep(5 * time.Millisecond)
			}
			sub := redis.NewClient(&redis.Options{Addr: srv.addr, Protocol: proto})
			defer sub.Close()
			ps := sub.Subscribe(ctx, "news")
			defer ps.Close()
			if err := ps.PSubscribe(ctx, "ev:*"); err != nil {
				t.Fatal(err)
			}
			// Wait for both confirmations.
			for i := 0; i < 2; i++ {
				if _, err := ps.ReceiveTimeout(ctx, 5*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			const publishers, each = 4, 200
			var wg sync.WaitGroup
			for p := 0; p < publishers; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					pub := redis.NewClient(&redis.Options{Addr: srv.addr, PoolSize: 1})
					defer pub.Close()
					for i := 0; i < each; i++ {
						ch := "news"
						if i%2 == 1 {
							ch = "ev:" + strconv.Itoa(p)
						}
						n, err := pub.Publish(ctx, ch, fmt.Sprintf("%d:%d", p, i)).Result()
						if err != nil || n != 1 {
							t.Errorf("PUBLISH %s: %d receivers, %v", ch, n, err)
							return
						}
					}
				}()
			}
			next := make([]int, publishers)
			for got := 0; got < publishers*each; got++ {
				m, err := ps.ReceiveTimeout(ctx, 10*time.Second)
				if err != nil {
					t.Fatalf("after %d messages: %v", got, err)
				}
				msg, ok := m.(*redis.Message)
				if !ok {
					t.Fatalf("received %T %v", m, m)
				}
				var p, i int
				if _, err := fmt.Sscanf(msg.Payload, "%d:%d", &p, &i); err != nil {
					t.Fatalf("payload %q", msg.Payload)
				}
				if i != next[p] {
					t.Fatalf("publisher %d: message %d arrived when %d was next", p, i, next[p])
				}
				next[p]++
				if i%2 == 1 && (msg.Pattern != "ev:*" || msg.Channel != "ev:"+strconv.Itoa(p)) {
					t.Errorf("pattern message %+v", msg)
				}
			}
			wg.Wait()
			n, err := sub.PubSubNumSub(ctx, "news").Result()
			if err != nil || n["news"] != 1 {
				t.Errorf("PUBSUB NUMSUB news = %v, %v", n, err)
			}
		})
	}
}

// TestSubscriberThatDoesNotReadIsDisconnected: a subscriber that never
// reads is closed once its unsent output passes the hard limit of
// client-output-buffer-limit pubsub, as in Redis; publishing goes on and
// its subscription is gone.
func TestSubscriberThatDoesNotReadIsDisconnected(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2, OutputHighWater: 64 << 10, OutputLowWater: 16 << 10,
		SocketSendBuffer: 4096})
	if r := dialRaw(t, srv.addr).Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := c.Write([]byte("SUBSCRIBE flood\r\n")); err != nil {
		t.Fatal(err)
	}
	// Wait for the confirmation: a PUBLISH that ran before the SUBSCRIBE
	// (another loop, a loaded machine) reaches no one, and the loop below
	// would take that for the close.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	for buf := make([]byte, 256); !strings.Contains(string(got), "flood\r\n:1\r\n"); {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("no SUBSCRIBE confirmation: %v (%q)", err, got)
		}
		got = append(got, buf[:n]...)
	}
	ctx := context.Background()
	pub := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer pub.Close()
	payload := strings.Repeat("x", 4096)
	deadline := time.Now().Add(20 * time.Second)
	sent := 0
	for {
		n, err := pub.Publish(ctx, "flood", payload).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && sent > 0 {
			break // the subscriber is gone
		}
		sent++
		if time.Now().After(deadline) {
			t.Fatalf("the subscriber still receives after %d messages (%d MiB)", sent, sent*4096>>20)
		}
	}
	// What the kernel's buffers took is not pending; beyond them the
	// close comes one message past the limit.
	if sent*4096 < 256<<10 || sent*4096 > 256<<10+256<<10 {
		t.Errorf("closed after %d bytes, want just past the 256 KiB hard limit", sent*4096)
	}
	// The close runs on the subscriber's loop; its subscriptions end with it.
	for deadline := time.Now().Add(5 * time.Second); pub.PubSubNumSub(ctx, "flood").Val()["flood"] != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("NUMSUB after the close = %d", pub.PubSubNumSub(ctx, "flood").Val()["flood"])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := pub.Info(ctx, "stats").Val(); !strings.Contains(got, "pubsub_channels:0") {
		t.Errorf("INFO stats after the close:\n%s", got)
	}
}

// TestClientListShowsSessions: CLIENT LIST's flags, sub, psub, ssub and
// multi fields, and TYPE pubsub, as Redis shows them.
func TestClientListShowsSessions(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	tx, sub, other := dialRaw(t, srv.addr), dialRaw(t, srv.addr), dialRaw(t, srv.addr)
	tx.Do("CLIENT", "SETNAME", "tx")
	sub.Do("CLIENT", "SETNAME", "sub")
	tx.Do("WATCH", "k")
	tx.Do("MULTI")
	tx.Do("SET", "k", "1")
	tx.Do("GET", "k")
	sub.Send([]byte("SUBSCRIBE a b\r\nPSUBSCRIBE p*\r\nSSUBSCRIBE s\r\n"))
	for i := 0; i < 4; i++ {
		if _, err := sub.Read(); err != nil {
			t.Fatal(err)
		}
	}
	other.Do("SET", "k", "2") // the watcher is now dirty
	list := other.Do("CLIENT", "LIST")
	for _, want := range []string{
		`name=tx age=\d+ idle=\d+ flags=xd db=0 sub=0 psub=0 ssub=0 multi=2 `,
		`name=sub age=\d+ idle=\d+ flags=P db=0 sub=2 psub=1 ssub=1 multi=-1 `,
	} {
		if !regexp.MustCompile(want).MatchString(list) {
			t.Errorf("CLIENT LIST lacks %s:\n%s", want, list)
		}
	}
	pubsubOnly := other.Do("CLIENT", "LIST", "TYPE", "pubsub")
	if !strings.Contains(pubsubOnly, "name=sub ") || strings.Contains(pubsubOnly, "name=tx ") {
		t.Errorf("CLIENT LIST TYPE pubsub:\n%s", pubsubOnly)
	}
	if r := other.Do("CLIENT", "KILL", "TYPE", "pubsub"); r != ":1\r\n" {
		t.Errorf("CLIENT KILL TYPE pubsub = %q", r)
	}
	if r := tx.Do("EXEC"); r != "*-1\r\n" {
		t.Errorf("EXEC after another client's write = %q", r)
	}
	// CLIENT KILL closes a connection of another loop through that loop,
	// so its subscriptions end a moment later.
	deadline := time.Now().Add(5 * time.Second)
	for {
		info := other.Do("INFO", "stats")
		missing := ""
		for _, f := range []string{"pubsub_channels:0", "pubsub_patterns:0", "pubsubshard_channels:0"} {
			if !strings.Contains(info, f) {
				missing = f
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO stats after the subscriber was killed lacks %s", missing)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
