package kv_test

import (
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// TestMaxMemoryIsReadFromTheStore: CONFIG GET and INFO report the limits
// the store was created with, with nothing told to the Handler (it used to
// keep its own copy, which an embedder had to set by hand), and a CONFIG
// SET reaches the store.
func TestMaxMemoryIsReadFromTheStore(t *testing.T) {
	s := startOneLoop(t, store.Options{MaxMemory: 10 << 20, Policy: store.AllKeysLRU})
	st := s.Store
	c := dialRaw(t, s.Addr)
	if r := c.Do("CONFIG", "GET", "maxmemory*"); r != "*8\r\n$9\r\nmaxmemory\r\n$8\r\n10485760\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n$17\r\nmaxmemory-samples\r\n$1\r\n5\r\n$17\r\nmaxmemory-clients\r\n$1\r\n0\r\n" {
		t.Fatalf("CONFIG GET maxmemory*: %q", r)
	}
	if r := c.Do("INFO", "memory"); !strings.Contains(r, "maxmemory:10485760\r\n") || !strings.Contains(r, "maxmemory_policy:allkeys-lru\r\n") {
		t.Fatalf("INFO memory: %q", r)
	}
	if r := c.Do("CONFIG", "SET", "maxmemory", "1mb"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", r)
	}
	if st.MaxMemory() != 1<<20 {
		t.Fatalf("store maxmemory %d after CONFIG SET 1mb", st.MaxMemory())
	}
}

// startOneLoop serves a Shoal on one loop over a store made with o.
func startOneLoop(t *testing.T, o store.Options) *shoaltest.Server {
	t.Helper()
	return shoaltest.Start(t, shoaltest.Options{Store: o, Loop: eventloop.Options{Loops: 1}})
}

// TestListenerSettingsAreReadFromTheServer: port, bind, maxclients and
// timeout come from the eventloop Server the Handler runs on (the port it
// really bound for ":0"), not from copies the embedder must keep in step.
func TestListenerSettingsAreReadFromTheServer(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{MaxConns: 77, IdleTimeout: 90 * time.Second})
	_, port, _ := net.SplitHostPort(srv.addr)
	c := dialRaw(t, srv.addr)
	for param, want := range map[string]string{"port": port, "bind": "127.0.0.1", "maxclients": "77", "timeout": "90"} {
		wantReply := "*2\r\n$" + strconv.Itoa(len(param)) + "\r\n" + param + "\r\n$" + strconv.Itoa(len(want)) + "\r\n" + want + "\r\n"
		if r := c.Do("CONFIG", "GET", param); r != wantReply {
			t.Errorf("CONFIG GET %s: %q, want %q", param, r, wantReply)
		}
	}
	info := c.Do("INFO")
	for _, field := range []string{"tcp_port:" + port + "\r\n", "maxclients:77\r\n"} {
		if !strings.Contains(info, field) {
			t.Errorf("INFO lacks %q", field)
		}
	}
}

// TestRelativeExpiryUsesTheStoreClock: EX/EXPIRE are measured on the
// store's clock, the one that expires keys; kv keeps no clock of its own
// that could disagree with it.
func TestRelativeExpiryUsesTheStoreClock(t *testing.T) {
	const at = 1_000_000_000_000 // 2001, far from the wall clock
	c := dialRaw(t, startOneLoop(t, store.Options{Now: func() int64 { return at }}).Addr)
	c.Do("SET", "k", "v", "EX", "10")
	c.Do("SET", "j", "v")
	c.Do("EXPIRE", "j", "20")
	for key, want := range map[string]string{"k": ":10000\r\n", "j": ":20000\r\n"} {
		if r := c.Do("PTTL", key); r != want {
			t.Errorf("PTTL %s = %q, want %q", key, r, want)
		}
	}
	if r := c.Do("PEXPIRETIME", "k"); r != ":1000000010000\r\n" {
		t.Errorf("PEXPIRETIME k = %q", r)
	}
}

func TestParseLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "VERBOSE": slog.LevelInfo, "notice": slog.LevelInfo,
		"Warning": slog.LevelWarn, "nothing": slog.LevelError + 4,
	} {
		if got, err := kv.ParseLogLevel(in); err != nil || got != want {
			t.Errorf("ParseLogLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "info", "loud", "debug "} {
		if _, err := kv.ParseLogLevel(bad); err == nil || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("ParseLogLevel(%q) error %v; want one naming the value", bad, err)
		}
	}
}
