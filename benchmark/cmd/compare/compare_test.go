package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/benchmark/internal/proc"
	"github.com/shoalkv/shoal/internal/procfs"
	"github.com/shoalkv/shoal/internal/redistest"
)

func TestProcSamplesOfThisProcess(t *testing.T) {
	pid := os.Getpid()
	before, err := procfs.CPUTicks(pid)
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 150*time.Millisecond; {
		runtime.Gosched() // burn CPU so at least a few ticks pass
	}
	after, err := procfs.CPUTicks(pid)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU ticks %d then %d after 150 ms of work", before, after)
	}
	rss, err := procfs.RSS(pid)
	if err != nil || rss < 1<<20 {
		t.Errorf("VmRSS %d bytes, %v", rss, err)
	}
	if _, err := procfs.CPUTicks(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}

func TestRotateGivesEveryServerEveryPosition(t *testing.T) {
	names := []string{"a", "b", "c"}
	first := map[string]bool{}
	for k := range 3 {
		r := rotate(names, k)
		if len(r) != 3 || strings.Join(slices.Sorted(slices.Values(r)), "") != "abc" {
			t.Fatalf("rotate(%d) = %v", k, r)
		}
		first[r[0]] = true
	}
	if len(first) != 3 {
		t.Errorf("first positions %v: not every server went first", first)
	}
}

func TestParseOptionsRejectsBadValues(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"}, {"-pipelines", "1,x"}, {"-conns", "0"}, {"-ops", "del"},
		{"-servers", "redis,memcached"}, {"-duration", "1ms"}, {"-rate", "0"},
	} {
		if _, err := parseOptions(args); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	o, err := parseOptions(nil)
	if err != nil || o.rounds != 1 || len(o.servers) != 4 || len(o.pipelines) != 3 || len(workloads(o)) != 12 {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
}

// Synthetic records: the table must show each server's median and its ratio to redis,
// and the charts must be PNG files.
func TestReportTablesAndCharts(t *testing.T) {
	ws := []workload{{"get", 50, 1}, {"get", 50, 16}}
	r := &results{Servers: []string{"shoal", "redis"}, ServerDescs: []string{"s", "r"}, Workloads: ws,
		Rounds: 3, Rate: 1000, LatencyConns: 5, Options: "-keyspace 100"}
	add := func(server, kind string, w workload, rps, cpu, p99 float64) {
		rec := record{Server: server, Kind: kind, Workload: w}
		rec.Report.Throughput, rec.ServerCPUPerReq, rec.Report.LatencyUs.P99 = rps, cpu, p99
		rec.ServerRSS = 10 << 20
		r.Records = append(r.Records, rec)
	}
	for _, rps := range []float64{100, 300, 200} { // median 200
		add("shoal", "closed", ws[0], rps, 2, 0)
		add("redis", "closed", ws[0], rps/2, 4, 0) // median 100
		add("shoal", "closed", ws[1], rps*10, 0.5, 0)
		add("redis", "closed", ws[1], rps*10, 1, 0)
		add("shoal", "open", workload{"get", 5, 1}, 1000, 1, 300)
		add("redis", "open", workload{"get", 5, 1}, 1000, 1, 100)
	}
	dir := t.TempDir()
	if err := r.write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| GET c=50 P=1 | 200.0 (2.00×) ±50% | 100.0 ±50% |", // throughput: median, ratio, half range
		"| GET c=50 P=16 | 2,000 (1.00×) ±50% | 2,000 ±50% |",
		"| GET c=50 P=1 | 2.00 (0.50×) | 4.00 |", // CPU per request
		"| shoal | 1,000 | 0 | 0 | 300 | 0 | 0 | 0 | 3.00× |",
		"![throughput_get_c50.png](throughput_get_c50.png)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"throughput_get_c50.png", "cpu_per_request_get.png"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if img, err := png.Decode(bytes.NewReader(b)); err != nil || img.Bounds().Dx() < 300 {
			t.Errorf("%s: not a sizeable PNG: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err != nil {
		t.Error(err)
	}
}

// End to end on one real server: shoal-load runs, the markers arrive, the server's CPU
// and RSS are sampled.
func TestRunLoadAgainstRedis(t *testing.T) {
	redistest.Binary(t, "redis-server")
	root, err := proc.ModuleRoot("compare")
	if err != nil {
		t.Fatal(err)
	}
	load := filepath.Join(t.TempDir(), "shoal-load")
	if err := proc.GoBuild(root, "./cmd/shoal-load", load); err != nil {
		t.Fatal(err)
	}
	srv, err := proc.Start(specs(&binaries{})["redis"])
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var measuringSeen, doneSeen bool
	m, err := runLoad(context.Background(), load, srv, []string{"-c", "4", "-P", "16", "-t", "set", "-d", "400ms", "-warmup", "100ms"},
		clockTicks(), hooks{measuring: func() { measuringSeen = true }, done: func() { doneSeen = true }})
	if err != nil {
		t.Fatal(err)
	}
	if !measuringSeen || !doneSeen {
		t.Errorf("markers seen: measuring %v done %v", measuringSeen, doneSeen)
	}
	if m.Report.Requests == 0 || m.Report.Errors != 0 || m.ServerRSS < 1<<20 || m.ServerCPUTicks < 0 || m.ClientCPUPerReq <= 0 ||
		m.BackgroundCores < 0 || m.BackgroundCores > float64(runtime.NumCPU()) {
		t.Errorf("measured %+v", m)
	}
	if m.ServerCPUTicks > 0 && m.ServerCPUPerReq <= 0 {
		t.Errorf("CPU ticks %d but %v µs per request", m.ServerCPUTicks, m.ServerCPUPerReq)
	}
}
