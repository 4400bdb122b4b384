package kv_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// cmdstat parses one cmdstat_<name> line of INFO commandstats.
func cmdstat(t *testing.T, info, name string) map[string]float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^cmdstat_` + regexp.QuoteMeta(name) + `:(.*)\r$`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no cmdstat_%s in %q", name, info)
	}
	out := map[string]float64{}
	for _, kv := range strings.Split(m[1], ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[k], _ = strconv.ParseFloat(v, 64)
	}
	return out
}

// TestInfoCommandStatsCountEveryFront: calls, failed and rejected calls
// per command, from RESP and from the fronts, and latency percentiles;
// CONFIG RESETSTAT clears them.
func TestInfoCommandStatsCountEveryFront(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialRaw(t, f.resp)
	r.do("SET", "a", "x")
	for i := 0; i < 40; i++ {
		r.do("GET", "a")
	}
	r.do("INCR", "a") // failed: not an integer
	r.do("GET")       // rejected: arity
	r.do("GET", "a", "b")
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
	info := r.do("INFO", "commandstats")
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
	lat := r.do("INFO", "latencystats")
	m := regexp.MustCompile(`latency_percentiles_usec_get:p50=([0-9.]+),p99=([0-9.]+),p99.9=([0-9.]+)`).FindStringSubmatch(lat)
	if m == nil {
		t.Fatalf("no GET latency in %q", lat)
	}
	p50, _ := strconv.ParseFloat(m[1], 64)
	p999, _ := strconv.ParseFloat(m[3], 64)
	if p50 <= 0 || p999 < p50 {
		t.Fatalf("GET percentiles p50 %v p99.9 %v", p50, p999)
	}
	r.do("CONFIG", "RESETSTAT")
	if info := r.do("INFO", "commandstats"); strings.Contains(info, "cmdstat_get:") {
		t.Fatalf("after RESETSTAT: %q", info)
	}
}
