package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// What the fronts share with RESP through the command layer: its counters
// and WATCH.

// TestInfoCommandStatsCountEveryFront: calls, failed and rejected calls
// per command, from RESP and from the fronts, and latency percentiles;
// CONFIG RESETSTAT clears them.
func TestInfoCommandStatsCountEveryFront(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialRaw(t, f.resp)
	r.Do("SET", "a", "x")
	for i := 0; i < 40; i++ {
		r.Do("GET", "a")
	}
	r.Do("INCR", "a") // failed: not an integer
	r.Do("GET")       // rejected: arity
	r.Do("GET", "a", "b")
	c := &http.Client{Timeout: 5 * time.Second}
	for i := 0; i < 10; i++ {
		httpDo(t, c, "GET", "http://"+f.http+"/kv/a", "")
	}
	httpDo(t, c, "POST", "http://"+f.http+"/kv/a/incr", "") // failed: 409
	httpDo(t, c, "GET", "http://"+f.http+"/healthz", "")    // no command
	fc := dialFrame(t, f.frame)
	for i := 0; i < 5; i++ {
		fc.do(t, frameGet("a"))
	}
	info := r.Do("INFO", "commandstats")
	get := cmdstat(t, info, "get")
	if get["calls"] != 55 || get["rejected_calls"] != 2 || get["failed_calls"] != 0 {
		t.Fatalf("cmdstat_get %v: want 40 RESP + 10 HTTP + 5 frame calls, 2 rejected", get)
	}
	if get["usec"] <= 0 || get["usec_per_call"] <= 0 {
		t.Fatalf("cmdstat_get has no time: %v", get)
	}
	if incr := cmdstat(t, info, "incr"); incr["calls"] != 1 || incr["failed_calls"] != 1 {
		t.Fatalf("cmdstat_incr %v", incr)
	}
	if incrby := cmdstat(t, info, "incrby"); incrby["calls"] != 1 || incrby["failed_calls"] != 1 {
		t.Fatalf("cmdstat_incrby (the HTTP incr) %v", incrby)
	}
	lat := r.Do("INFO", "latencystats")
	m := regexp.MustCompile(`latency_percentiles_usec_get:p50=([0-9.]+),p99=([0-9.]+),p99.9=([0-9.]+)`).FindStringSubmatch(lat)
	if m == nil {
		t.Fatalf("no GET latency in %q", lat)
	}
	p50, _ := strconv.ParseFloat(m[1], 64)
	p999, _ := strconv.ParseFloat(m[3], 64)
	if p50 <= 0 || p999 < p50 {
		t.Fatalf("GET percentiles p50 %v p99.9 %v", p50, p999)
	}
	r.Do("CONFIG", "RESETSTAT")
	if info := r.Do("INFO", "commandstats"); strings.Contains(info, "cmdstat_get:") {
		t.Fatalf("after RESETSTAT: %q", info)
	}
}

// TestWatchSeesWritesOverEveryFront: a key watched over RESP and then
// written over the HTTP or the frame front fails the EXEC, as a RESP write
// does.
func TestWatchSeesWritesOverEveryFront(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	w := dialRaw(t, f.resp)
	c := &http.Client{Timeout: 5 * time.Second}
	fc := dialFrame(t, f.frame)
	writes := map[string]func(){
		"http PUT":    func() { httpDo(t, c, "PUT", "http://"+f.http+"/kv/k", "v") },
		"http DELETE": func() { httpDo(t, c, "DELETE", "http://"+f.http+"/kv/k", "") },
		"http incr":   func() { httpDo(t, c, "POST", "http://"+f.http+"/kv/n/incr", "") },
		"frame SET":   func() { fc.do(t, frameSet("k", "v")) },
		"frame DEL":   func() { fc.do(t, frameDel("k")) },
	}
	for name, write := range writes {
		w.Do("SET", "k", "x")
		key := "k"
		if strings.Contains(name, "incr") {
			key = "n"
		}
		w.Do("WATCH", key)
		write()
		w.Do("MULTI")
		w.Do("PING")
		if r := w.Do("EXEC"); r != "*-1\r\n" {
			t.Errorf("%s of a watched key, then EXEC = %q", name, r)
		}
	}
}

// TestKeyspaceEventsFromEveryFront: a write over the HTTP or frame front
// publishes the keyspace events the RESP command would (kv.Handler.Wrote).
func TestKeyspaceEventsFromEveryFront(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	ctl, sub := dialRaw(t, f.resp), dialRaw(t, f.resp)
	ctl.Do("CONFIG", "SET", "notify-keyspace-events", "KEA")
	sub.Do("PSUBSCRIBE", "__keyevent@0__:*")
	c := &http.Client{Timeout: 5 * time.Second}
	fc := dialFrame(t, f.frame)
	for _, tc := range []struct {
		name  string
		write func()
		want  []string // event, key
	}{
		{"http PUT", func() { httpDo(t, c, "PUT", "http://"+f.http+"/kv/k", "v") }, []string{"set", "k"}},
		{"http PUT ttl", func() { httpDo(t, c, "PUT", "http://"+f.http+"/kv/k?ttl=100", "v") }, []string{"set", "k", "expire", "k"}},
		{"http DELETE", func() { httpDo(t, c, "DELETE", "http://"+f.http+"/kv/k", "") }, []string{"del", "k"}},
		{"http incr", func() { httpDo(t, c, "POST", "http://"+f.http+"/kv/n/incr", "") }, []string{"incrby", "n"}},
		{"frame SET", func() { fc.do(t, frameSet("k", "v")) }, []string{"set", "k"}},
		{"frame DEL", func() { fc.do(t, frameDel("k")) }, []string{"del", "k"}},
	} {
		tc.write()
		for i := 0; i < len(tc.want); i += 2 {
			msg, err := sub.Read()
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			ev, key := tc.want[i], tc.want[i+1]
			want := fmt.Sprintf("*4\r\n$8\r\npmessage\r\n$16\r\n__keyevent@0__:*\r\n$%d\r\n__keyevent@0__:%s\r\n$%d\r\n%s\r\n", 15+len(ev), ev, len(key), key)
			if msg != want {
				t.Errorf("%s: event %q, want %q", tc.name, msg, want)
			}
		}
	}
}
