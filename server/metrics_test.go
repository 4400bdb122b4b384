package server_test

import (
	"bytes"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/kv"
)

func scrape(t *testing.T, addr string, auth ...string) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, body := httpDo(t, &http.Client{Timeout: 5 * time.Second}, "GET", "http://"+addr+"/metrics", "", auth...)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %q", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return body, fams
}

// value returns the value of the sample of family name whose labels
// include want (label=value pairs), or -1 if there is none.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsPassPromtool: /metrics reports the loops, commands, keyspace,
// process and Go runtime from the live counters, and promtool check
// metrics accepts it.
func TestMetricsPassPromtool(t *testing.T) {
	tool := redistest.Tool(t, "promtool", "SHOAL_REQUIRE_PROMTOOL", "apt-get install prometheus")
	f := startFronts(t, kv.Options{}, eventloop.Options{IdleTimeout: time.Minute}, "")
	r := dialRaw(t, f.resp)
	r.Do("SET", "a", "1")
	r.Do("SET", "b", "2", "EX", "100")
	for i := 0; i < 32; i++ {
		r.Do("GET", "a")
	}
	r.Do("GET", "missing")
	r.Do("LPUSH-NOT-A-COMMAND")
	r.Do("INCR", "nonint-"+strings.Repeat("x", 1))
	r.Do("SET", "c", "x")
	r.Do("INCR", "c") // failed
	fc := dialFrame(t, f.frame)
	fc.do(t, frameGet("a"))

	body, fams := scrape(t, f.http)
	checks := []struct {
		name   string
		labels []string
		want   func(float64) bool
		desc   string
	}{
		{"shoal_commands_total", []string{"cmd", "get"}, eq(34), "33 RESP GETs + 1 frame GET"},
		{"shoal_command_failed_total", []string{"cmd", "incr"}, eq(1), "INCR of a non-integer"},
		{"shoal_command_duration_seconds", []string{"cmd", "get"}, gt(0), "timed GETs"},
		{"shoal_error_replies_total", []string{"prefix", "ERR"}, ge(2), "unknown command + INCR"},
		{"shoal_keys", nil, eq(4), "a b c nonint-x"},
		{"shoal_expiring_keys", nil, eq(1), "b"},
		{"shoal_keyspace_hits_total", nil, ge(33), ""},
		{"shoal_keyspace_misses_total", nil, ge(1), ""},
		{"shoal_used_memory_bytes", nil, gt(0), ""},
		{"shoal_loop_accepted_connections_total", []string{"loop", "0"}, ge(0), ""},
		{"shoal_loop_reads_total", nil, gt(0), ""},
		{"shoal_loop_written_bytes_total", nil, gt(0), ""},
		{"shoal_loop_replies_per_write", nil, gt(0), ""},
		{"shoal_loop_idle_timeout_closes_total", nil, eq(0), ""},
		{"shoal_loop_tls_handshakes_total", []string{"loop", "0", "result", "failed"}, eq(0), "no TLS port"},
		{"shoal_loop_tls_record_errors_total", []string{"loop", "0"}, eq(0), "no TLS port"},
		{"shoal_rejected_connections_total", nil, eq(0), ""},
		{"process_resident_memory_bytes", nil, gt(0), "RSS"},
		{"go_gc_duration_seconds", nil, ge(0), "GC pauses"},
	}
	for _, c := range checks {
		if v := value(fams, c.name, c.labels...); v < 0 || !c.want(v) {
			t.Errorf("%s%v = %v (%s)", c.name, c.labels, v, c.desc)
		}
	}
	var accepted, conns float64
	for _, loop := range []string{"0", "1"} {
		accepted += value(fams, "shoal_loop_accepted_connections_total", "loop", loop)
		conns += value(fams, "shoal_loop_connections", "loop", loop)
	}
	if accepted != 3 || conns != 3 { // RESP, frame, and this scrape's HTTP
		t.Errorf("loops accepted %v and hold %v connections, want 3 and 3", accepted, conns)
	}
	if t.Failed() {
		t.Logf("%s", body)
	}

	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out.String())
	}
}

func eq(w float64) func(float64) bool { return func(v float64) bool { return v == w } }
func ge(w float64) func(float64) bool { return func(v float64) bool { return v >= w } }
func gt(w float64) func(float64) bool { return func(v float64) bool { return v > w } }

// TestMetricsNeedThePassword: with requirepass, /metrics answers 401
// without it and the metrics with it.
func TestMetricsNeedThePassword(t *testing.T) {
	f := startFronts(t, kv.Options{RequirePass: "pw"}, eventloop.Options{}, "")
	resp, _ := httpDo(t, &http.Client{Timeout: 5 * time.Second}, "GET", "http://"+f.http+"/metrics", "")
	if resp.StatusCode != 401 {
		t.Fatalf("/metrics without the password: %d", resp.StatusCode)
	}
	if _, fams := scrape(t, f.http, "Authorization", "Bearer pw"); value(fams, "shoal_keys", nil...) != 0 {
		t.Fatalf("shoal_keys = %v", value(fams, "shoal_keys"))
	}
}
