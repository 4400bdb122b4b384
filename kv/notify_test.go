package kv_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// The keys a server removes on its own: the active expiry cycle's
// "expired" and eviction's "evicted", on redis-server and on Shoal, and the
// client-side caching invalidations Shoal sends for them.

// eventListener is a raw connection subscribed to keyevent channels.
type eventListener struct {
	t    *testing.T
	conn *rawConn
	cmd  *rawConn
}

func listenEvents(t *testing.T, addr, pattern string) *eventListener {
	t.Helper()
	l := &eventListener{t: t, conn: dialRaw(t, addr), cmd: dialRaw(t, addr)}
	if r := l.conn.Do("PSUBSCRIBE", pattern); !strings.Contains(r, "psubscribe") {
		t.Fatalf("PSUBSCRIBE: %q", r)
	}
	return l
}

// next returns the channel and payload of the next message.
func (l *eventListener) next() (channel, payload string) {
	l.t.Helper()
	m, err := l.conn.Read()
	if err != nil {
		l.t.Fatalf("reading a notification: %v", err)
	}
	lines := strings.Split(m, "\r\n")
	if len(lines) < 9 || lines[2] != "pmessage" {
		l.t.Fatalf("not a pmessage: %q", m)
	}
	return lines[6], lines[8]
}

// until collects the payloads of the messages up to a marker published on
// markChannel now: every message the server published before it.
func (l *eventListener) until(markChannel string) []string {
	l.t.Helper()
	l.cmd.Do("PUBLISH", markChannel, "\x00mark")
	var got []string
	for {
		ch, payload := l.next()
		if payload == "\x00mark" && ch == markChannel {
			return got
		}
		got = append(got, ch+" "+payload)
	}
}

// TestNotifyActiveExpiry: keys nobody reads expire through the active
// cycle, and each publishes "expired" on its database's channel, on
// redis-server and on Shoal alike.
func TestNotifyActiveExpiry(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{Engine: testEngine(t)})
	var sets [2][]string
	for i, addr := range []string{redisAddr, shoal.addr} {
		l := listenEvents(t, addr, "__keyevent@*__:expired")
		c := l.cmd
		c.Do("CONFIG", "SET", "notify-keyspace-events", "Ex")
		for _, k := range []string{"a", "b", "c", "d"} {
			c.Do("SET", k, "v", "PX", "30")
		}
		c.Do("SET", "stays", "v")
		c.Do("SELECT", "2")
		c.Do("SET", "e", "v", "PX", "30")
		var got []string
		for len(got) < 5 {
			ch, key := l.next()
			got = append(got, ch+" "+key)
		}
		slices.Sort(got) // the cycle's order is the hash table's
		sets[i] = got
		if n := c.Do("DBSIZE"); n != ":0\r\n" {
			t.Errorf("%s: db 2 holds %q keys after its only key expired", addr, n)
		}
		c.Do("SELECT", "0")
		if n := c.Do("DBSIZE"); n != ":1\r\n" {
			t.Errorf("%s: db 0 holds %q keys, want the one without a TTL", addr, n)
		}
		if rest := l.until("__keyevent@0__:expired"); len(rest) != 0 {
			t.Errorf("%s: more expired events: %q", addr, rest)
		}
	}
	want := []string{"__keyevent@0__:expired a", "__keyevent@0__:expired b", "__keyevent@0__:expired c",
		"__keyevent@0__:expired d", "__keyevent@2__:expired e"}
	if !slices.Equal(sets[0], want) {
		t.Errorf("redis-server's expired events %q, want %q", sets[0], want)
	}
	if !slices.Equal(sets[1], sets[0]) {
		t.Errorf("expired events:\nredis: %q\nshoal: %q", sets[0], sets[1])
	}
}

// TestNotifyEviction fills past maxmemory under allkeys-lru: every key
// that went published "evicted" (which keys go may differ from
// redis-server's), no key that stayed did, and one evicted key is
// announced once.
func TestNotifyEviction(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{Engine: testEngine(t)})
	for _, addr := range []string{redisAddr, shoal.addr} {
		t.Run(map[bool]string{true: "redis", false: "shoal"}[addr == redisAddr], func(t *testing.T) {
			l := listenEvents(t, addr, "__keyevent@*__:evicted")
			c := l.cmd
			c.Do("CONFIG", "SET", "notify-keyspace-events", "Ee")
			c.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
			used := 0
			if info := c.Do("INFO", "memory"); strings.Contains(info, "used_memory:") {
				used, _ = strconv.Atoi(strings.Fields(strings.SplitN(info, "used_memory:", 2)[1])[0])
			}
			c.Do("CONFIG", "SET", "maxmemory", strconv.Itoa(used+1<<20))
			const keys = 3000
			value := strings.Repeat("v", 1000)
			var batch []byte
			for i := 0; i < keys; i++ {
				batch = append(batch, encodeCommand([]string{"SET", "key:" + strconv.Itoa(i), value})...)
			}
			c.Send(batch)
			for i := 0; i < keys; i++ {
				if r, err := c.Read(); err != nil || r != "+OK\r\n" {
					t.Fatalf("SET %d: %q %v", i, r, err)
				}
			}
			// Redis evicts before any command while over the limit (the
			// subscriber's output counts): no more once it is lifted.
			c.Do("CONFIG", "SET", "maxmemory", "0")
			evicted := map[string]bool{}
			for _, m := range l.until("__keyevent@0__:evicted") {
				key := strings.TrimPrefix(m, "__keyevent@0__:evicted ")
				if evicted[key] {
					t.Errorf("%s evicted twice", key)
				}
				evicted[key] = true
			}
			if len(evicted) == 0 {
				t.Fatal("nothing was evicted")
			}
			gone := 0
			for i := 0; i < keys; i++ {
				key := "key:" + strconv.Itoa(i)
				exists := c.Do("EXISTS", key) == ":1\r\n"
				if !exists {
					gone++
				}
				if exists == evicted[key] {
					t.Errorf("%s: exists %v, evicted event %v", key, exists, evicted[key])
				}
			}
			t.Logf("%d of %d keys evicted", gone, keys)
		})
	}
}

// TestTrackingInvalidatesKeysTheServerRemoves: a client caching a key is
// told when the key expires (found by the active cycle, or by another
// client's read) or is evicted, as Redis tells it.
func TestTrackingInvalidatesKeysTheServerRemoves(t *testing.T) {
	for _, tc := range []struct {
		name   string
		active bool
		setup  []string
		remove func(t *testing.T, other *rawConn)
	}{
		{"active expiry", true, []string{"SET", "k", "v", "PX", "30"}, func(*testing.T, *rawConn) {}},
		{"lazy expiry", false, []string{"SET", "k", "v", "PX", "30"}, func(t *testing.T, other *rawConn) {
			time.Sleep(40 * time.Millisecond) // the TTL runs out: only the clock can do that
			if r := other.Do("GET", "k"); r != "$-1\r\n" {
				t.Fatalf("GET of an expired key: %q", r)
			}
		}},
		{"eviction", false, []string{"SET", "k", "v", "EX", "1000"}, func(t *testing.T, other *rawConn) {
			// Only k has a TTL, so volatile-ttl can evict only k.
			other.Do("CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
			other.Do("CONFIG", "SET", "maxmemory", "1")
			other.Do("SET", "filler", strings.Repeat("x", 100))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			so := store.Options{}
			if !tc.active {
				so.ActiveExpireInterval = -1
			}
			srv := shoaltest.Start(t, shoaltest.Options{Store: so, Loop: eventloop.Options{Engine: testEngine(t)}})
			cache, other := dialRaw(t, srv.Addr), dialRaw(t, srv.Addr)
			cache.Do("HELLO", "3")
			if r := cache.Do("CLIENT", "TRACKING", "ON"); r != "+OK\r\n" {
				t.Fatalf("CLIENT TRACKING ON: %q", r)
			}
			cache.Do(tc.setup...)
			if r := cache.Do("GET", "k"); r != "$1\r\nv\r\n" {
				t.Fatalf("GET k: %q", r)
			}
			tc.remove(t, other)
			push, err := cache.Read()
			if err != nil {
				t.Fatalf("waiting for the invalidation: %v", err)
			}
			if want := ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"; push != want {
				t.Fatalf("push %q, want %q", push, want)
			}
		})
	}
}

// TestGoRedisHearsExpired: a go-redis client listening for expired events,
// as job schedulers do, is told of a key whose TTL ran out.
func TestGoRedisHearsExpired(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Engine: testEngine(t), Loops: 2})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer rdb.Close()
	if err := rdb.ConfigSet(ctx, "notify-keyspace-events", "Ex").Err(); err != nil {
		t.Fatal(err)
	}
	if v := rdb.ConfigGet(ctx, "notify-keyspace-events").Val()["notify-keyspace-events"]; v != "xE" {
		t.Fatalf("CONFIG GET notify-keyspace-events = %q, want xE", v)
	}
	sub := rdb.PSubscribe(ctx, "__keyevent@*__:expired")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := rdb.Set(ctx, fmt.Sprint("job:", i), "payload", 50*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	timeout := time.After(10 * time.Second)
	for len(got) < 3 {
		select {
		case m := <-sub.Channel():
			if m.Channel != "__keyevent@0__:expired" || m.Pattern != "__keyevent@*__:expired" {
				t.Fatalf("message on %q (pattern %q)", m.Channel, m.Pattern)
			}
			got[m.Payload] = true
		case <-timeout:
			t.Fatalf("after 10s only %v expired", got)
		}
	}
	for i := 0; i < 3; i++ {
		if !got[fmt.Sprint("job:", i)] {
			t.Errorf("no expired event for job:%d: %v", i, got)
		}
	}
}

// TestNotifyFrontWrites: a write over the HTTP or frame front, reported
// with Wrote, publishes what the RESP command publishes.
func TestNotifyFrontWrites(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Engine: testEngine(t)})
	l := listenEvents(t, srv.addr, "__key*__:*")
	l.cmd.Do("CONFIG", "SET", "notify-keyspace-events", "KEA")
	h := srv.handler
	h.Wrote(kv.FrontCommandOf("set"), []byte("k"), true)
	h.Wrote(kv.FrontCommandOf("incrby"), []byte("n"), false)
	h.Wrote(kv.FrontCommandOf("del"), []byte("k"), false)
	h.Wrote(kv.FrontCommandOf("get"), []byte("k"), false) // a read: nothing
	got := l.until("__keyevent@0__:mark")
	want := []string{"__keyspace@0__:k set", "__keyevent@0__:set k", "__keyspace@0__:k expire", "__keyevent@0__:expire k",
		"__keyspace@0__:n incrby", "__keyevent@0__:incrby n", "__keyspace@0__:k del", "__keyevent@0__:del k"}
	if !slices.Equal(got, want) {
		t.Errorf("front writes published %q, want %q", got, want)
	}
}
