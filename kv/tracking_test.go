package kv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// TestRueidisDefaultCachingIsInvalidated is issue 23's done-when for
// client-side caching: rueidis with its default options (RESP3, CLIENT
// TRACKING ON OPTIN, CLIENT CACHING YES before each cached read) caches a
// key; another client changes it on another loop; the next cached read
// sees the new value because the server sent an invalidation.
func TestRueidisDefaultCachingIsInvalidated(t *testing.T) {
	srv := startLoops(t, 2)
	ctx := context.Background()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.addr}})
	if err != nil {
		t.Fatalf("rueidis with default options: %v", err)
	}
	defer c.Close()
	other := oneConn(t, srv.addr, 2)
	if err := other.Set(ctx, "cached", "v1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	read := func() (string, bool) {
		r := c.DoCache(ctx, c.B().Get().Key("cached").Cache(), time.Minute)
		v, err := r.ToString()
		if err != nil {
			t.Fatalf("DoCache GET: %v", err)
		}
		return v, r.IsCacheHit()
	}
	if v, hit := read(); v != "v1" || hit {
		t.Fatalf("first read: %q (cache hit %v), want v1 from the server", v, hit)
	}
	if v, hit := read(); v != "v1" || !hit {
		t.Fatalf("second read: %q (cache hit %v), want v1 from rueidis's cache", v, hit)
	}
	if err := other.Set(ctx, "cached", "v2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, _ := read()
		if v == "v2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rueidis still reads %q from its cache 5 s after another client changed the key: no invalidation", v)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// And the cache is used again after the invalidation.
	if v, hit := read(); v != "v2" || !hit {
		t.Fatalf("read after re-caching: %q (cache hit %v)", v, hit)
	}
	info := other.Info(ctx, "clients", "stats").Val()
	if !strings.Contains(info, "tracking_clients:1") || !strings.Contains(info, "tracking_total_keys:1") {
		t.Fatalf("INFO does not count rueidis's tracking:\n%s", info)
	}
}

// TestTrackingMessagesMatchRedis runs one scenario on redis-server and on
// Shoal and compares, byte for byte, what the clients receive: a RESP2
// client redirecting its invalidations to a connection subscribed to
// __redis__:invalidate (NOLOOP: its own writes send nothing; a key is
// forgotten after its first invalidation; FLUSHALL sends a null), and a
// RESP3 client in OPTIN mode, which gets pushes on its own connection,
// after the reply, for keys read after CLIENT CACHING yes only.
func TestTrackingMessagesMatchRedis(t *testing.T) {
	bothServers(t, 2, nil, func(t *testing.T, addr string) []string {
		var got []string
		listener := dialRaw(t, addr)
		id := strings.TrimSuffix(strings.TrimPrefix(listener.Do("CLIENT", "ID"), ":"), "\r\n")
		got = append(got, listener.Do("SUBSCRIBE", "__redis__:invalidate"))
		reader, writer, r3 := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
		got = append(got,
			reader.Do("CLIENT", "TRACKING", "ON", "REDIRECT", id, "NOLOOP"),
			reader.Do("GET", "a"), reader.Do("GET", "b"), reader.Do("SET", "b", "own"),
			writer.Do("SET", "a", "x"), writer.Do("SET", "a", "y"), writer.Do("SET", "b", "z"))
		// [a] only: the second SET a finds a forgotten, and b was
		// forgotten by the reader's own write (NOLOOP sends nothing).
		for i := 0; i < 1; i++ {
			m, err := listener.Read()
			if err != nil {
				t.Fatalf("%s: invalidation %d: %v", addr, i, err)
			}
			got = append(got, m)
		}
		got = append(got, r3.Do("HELLO", "3")[:1],
			r3.Do("CLIENT", "TRACKING", "ON", "OPTIN"),
			r3.Do("GET", "notcached"),
			r3.Do("CLIENT", "CACHING", "yes"), r3.Do("GET", "c"),
			r3.Do("CLIENT", "TRACKINGINFO"),
			writer.Do("SET", "notcached", "1"), writer.Do("SET", "c", "1"))
		m, err := r3.Read() // the push for c; none for notcached
		if err != nil {
			t.Fatalf("%s: RESP3 push: %v", addr, err)
		}
		got = append(got, m, r3.Do("CLIENT", "CACHING", "yes"), r3.Do("MULTI"), r3.Do("GET", "c"), r3.Do("EXEC"),
			r3.Do("SET", "c", "self")) // its own write: the push follows the reply
		m, err = r3.Read()
		if err != nil {
			t.Fatalf("%s: own push: %v", addr, err)
		}
		got = append(got, m, writer.Do("FLUSHALL"))
		for _, c := range []*rawConn{listener, r3} {
			m, err := c.Read()
			if err != nil {
				t.Fatalf("%s: flush invalidation: %v", addr, err)
			}
			got = append(got, m)
		}
		got = append(got, reader.Do("CLIENT", "TRACKING", "OFF"), r3.Do("CLIENT", "TRACKING", "OFF"), r3.Do("CLIENT", "GETREDIR"))
		return got
	})
}

func init() {
	diffCases["client-tracking"] = []step{
		c("CLIENT GETREDIR"), c("CLIENT TRACKINGINFO"), c("CLIENT CACHING yes"), c("CLIENT TRACKING ON OPTIN OPTOUT"),
		c("CLIENT TRACKING ON BCAST PREFIX a PREFIX ab"), c("CLIENT TRACKING ON PREFIX a"), c("CLIENT TRACKING ON REDIRECT 999999"),
		c("CLIENT TRACKING ON REDIRECT x"), c("CLIENT TRACKING maybe"), c("CLIENT TRACKING ON FOO"), c("CLIENT TRACKING"),
		c("CLIENT TRACKING ON BCAST OPTIN"), c("CLIENT TRACKING ON OPTIN"), c("CLIENT CACHING maybe"), c("CLIENT CACHING no"),
		c("CLIENT CACHING yes"), c("CLIENT TRACKINGINFO"), c("CLIENT GETREDIR"), c("CLIENT TRACKING ON OPTOUT"),
		c("CLIENT TRACKING ON"), c("CLIENT TRACKING ON OPTOUT"), c("CLIENT CACHING no"), c("CLIENT TRACKINGINFO"),
		c("CLIENT TRACKING ON BCAST"), c("CLIENT TRACKING OFF"), c("CLIENT TRACKING ON BCAST PREFIX x PREFIX y NOLOOP"),
		c("CLIENT TRACKINGINFO"), c("CLIENT TRACKING ON BCAST PREFIX xa"), c("CLIENT TRACKING ON BCAST PREFIX z"),
		c("CLIENT TRACKINGINFO"), c("CLIENT TRACKING OFF"), c("CLIENT TRACKINGINFO"), c("CLIENT TRACKING off"),
		c("CLIENT CACHING"), c("CLIENT GETREDIR x"), c("CLIENT TRACKINGINFO x"),
		c("CONFIG GET tracking-table-max-keys"), c("CONFIG SET tracking-table-max-keys 10"),
		c("CONFIG GET tracking-table-max-keys"), c("CONFIG SET tracking-table-max-keys -1"),
		c("CONFIG SET tracking-table-max-keys 1000000"),
	}
}

// TestTrackingTableIsBounded: past tracking-table-max-keys the server
// invalidates remembered keys (the reader is told, so its cache stays
// right) until the table is back at the limit.
func TestTrackingTableIsBounded(t *testing.T) {
	srv := startLoops(t, 2)
	ctl := dialRaw(t, srv.addr)
	configure(t, ctl, "tracking-table-max-keys", "2", "1000000")
	r3 := dialRaw(t, srv.addr)
	r3.Do("HELLO", "3")
	if r := r3.Do("CLIENT", "TRACKING", "ON"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		if r := r3.Do("GET", k); r != "_\r\n" {
			t.Fatalf("GET %s: %q", k, r)
		}
	}
	// The third key pushed one of the three out, with an invalidation.
	push, err := r3.Read()
	if err != nil || !strings.HasPrefix(push, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nk") {
		t.Fatalf("no invalidation for the key the full table dropped: %q %v", push, err)
	}
	if info := ctl.Do("INFO", "stats"); !strings.Contains(info, "tracking_total_keys:2\r\n") {
		t.Fatalf("the table holds more than its 2 keys:\n%s", info)
	}
}
