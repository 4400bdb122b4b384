package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/shoalkv/shoal/internal/loadgen"
)

func TestBadFlagsNameValueAndLimit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-conns", "0"}, "-conns 0: want 1 to 1000000"},
		{[]string{"-duration", "100ms"}, "-duration 100ms: want 1s to 1h"},
		{[]string{"-conns", "6000", "-duration", "10s", "-rate", "600"}, "is 1.00 requests per connection for 6000 connections: every connection must carry at least 2; raise -rate or -duration"},
		{[]string{"-conns", "100000", "-duration", "1h", "-rate", "1000"}, "one request every 100 s per connection; want at most 20 s"},
		{[]string{"-server", "memcached"}, `-server "memcached": want shoal or redis`},
		{[]string{"-peer", "shoal"}, `-peer "shoal"`},
		{[]string{"-project", "Bad_Name"}, `-project "Bad_Name"`},
		{[]string{"-servers", "65"}, "-servers 65: want 0 (automatic) to 64"},
		{[]string{"-dial-rate", "0"}, "-dial-rate 0: must be positive"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var stderr bytes.Buffer
		code, err := mainErr(tc.args, &stderr, &stderr)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, err %v; want exit 2 and an error containing %q", tc.args, code, err, tc.want)
		}
	}
}

// The default rate gives every connection a request every 10 s, or two over a short
// run, so the issue's `-conns 6000 -duration 10s` passes the check with two requests each.
func TestDefaultRateCarriesEveryConnection(t *testing.T) {
	for _, tc := range []struct {
		args []string
		rate float64
	}{
		{[]string{"-conns", "6000", "-duration", "10s"}, 1200},
		{[]string{"-conns", "100000", "-duration", "30s"}, 10000},
		{[]string{"-conns", "2000", "-duration", "10s"}, 400},
	} {
		o, err := parseFlags(tc.args, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if o.rate != tc.rate {
			t.Errorf("%v: default rate %v, want %v", tc.args, o.rate, tc.rate)
		}
	}
}

func TestPlanFollowsTheDescriptorLimit(t *testing.T) {
	base := options{conns: 100000, rate: 20000, dialRate: 5000, duration: 30 * time.Second}
	for _, tc := range []struct {
		o                 func(o options) options
		nofile            int
		servers, clients  int
		mode, wantErrPart string
	}{
		{func(o options) options { return o }, 20000, 6, 6, "replicas", ""},
		{func(o options) options { return o }, 1048576, 1, 1, "single", ""},
		{func(o options) options { o.conns = 2000; return o }, 20000, 1, 1, "single", ""},
		{func(o options) options { o.servers = 2; return o }, 20000, 0, 0, "", "-servers 2: 50000 connections each, but a container's descriptor limit 20000 holds at most 19900"},
		{func(o options) options { o.clients = 3; return o }, 20000, 0, 0, "", "-clients 3: 33334 connections each"},
		{func(o options) options { o.servers, o.clients = 10, 8; return o }, 20000, 10, 8, "replicas", ""},
	} {
		p, err := makePlan(tc.o(base), "shoal", tc.nofile)
		if tc.wantErrPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErrPart) {
				t.Errorf("want error %q, got %v", tc.wantErrPart, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.servers != tc.servers || p.clients != tc.clients || p.mode != tc.mode || p.modeReason == "" {
			t.Errorf("nofile %d: %d servers, %d clients, mode %q; want %d, %d, %q", tc.nofile, p.servers, p.clients, p.mode, tc.servers, tc.clients, tc.mode)
		}
	}
}

func TestLddPaths(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n" +
		"\tlibssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x00007f1)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2)\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007f3)\n"
	got, err := lddPaths(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/lib/x86_64-linux-gnu/libssl.so.3", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := lddPaths("\tlibfoo.so.1 => not found\n"); err == nil || !strings.Contains(err.Error(), "libfoo.so.1") {
		t.Errorf("a missing library: err %v", err)
	}
}

// The interval histogram is the exact difference of two cumulative ones, and merging
// clients' histograms equals recording all their samples in one.
func TestHistogramsMergeAndDifferenceExactly(t *testing.T) {
	a, b, all := newHist(), newHist(), newHist()
	for i := int64(1); i <= 1000; i++ {
		a.RecordValue(i * 1000)
		all.RecordValue(i * 1000)
	}
	earlier := a.Export()
	for i := int64(1); i <= 500; i++ {
		b.RecordValue(i * 7919)
		all.RecordValue(i * 7919)
		a.RecordValue(5_000_000)
		all.RecordValue(5_000_000)
	}
	encA, _ := a.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	encB, _ := b.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	merged, err := loadgen.MergeHistograms(string(encA), string(encB))
	if err != nil {
		t.Fatal(err)
	}
	if !merged.Equals(all) {
		t.Error("merged histogram differs from the histogram of all samples")
	}
	d := diffHistogram(a, hdrhistogram.Import(earlier))
	if d.TotalCount() != 500 || d.Min() < 4_990_000 || d.Max() > 5_010_000 {
		t.Errorf("interval: %d samples in %d..%d, want 500 at 5 ms", d.TotalCount(), d.Min(), d.Max())
	}
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(time.Minute), 3) }

func TestMarkdownShowsBothServers(t *testing.T) {
	peer := &Report{Server: "redis", Target: 10, Connected: 10, ServerRSSBytesPerConn: 4363}
	r := &Report{Server: "shoal", Target: 10, Connected: 10, ServerRSSBytesPerConn: 1559, Peer: peer,
		Mode: "replicas", ModeReason: "why", Command: "go run ./benchmark/cmd/rig"}
	var b bytes.Buffer
	if err := writeMarkdown(&b, r, "report.png"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| | shoal | redis-server |", "**1,559 B**", "**4,363 B**", "10 / 10", "![connections"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}

func TestParseSoftnetDrops(t *testing.T) {
	in := "049d3b38 00018c2c 00000012 00000000\n04484ac9 0001dd17 00000009 00000000\n"
	if got := parseSoftnetDrops(in); got != 0x18c2c+0x1dd17 {
		t.Errorf("drops %d, want %d", got, 0x18c2c+0x1dd17)
	}
	if got := parseSoftnetDrops("zz qq\n"); got != -1 {
		t.Errorf("garbage: %d, want -1", got)
	}
}
