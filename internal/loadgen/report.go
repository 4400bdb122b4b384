package loadgen

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Report is the result of one run; -json prints it as is.
type Report struct {
	Protocol    string  `json:"protocol"`
	Addr        string  `json:"addr"`
	Mode        string  `json:"mode"` // "closed" or "open"
	Connections int     `json:"connections"`
	Pipeline    int     `json:"pipeline"`
	Rate        float64 `json:"rate_rps,omitempty"` // open loop target
	Workload    string  `json:"workload"`           // e.g. "get:9,set:1"
	Keyspace    uint64  `json:"keyspace"`
	ValueSize   int     `json:"value_size"`
	Dist        string  `json:"dist"`
	WarmupSec   float64 `json:"warmup_s"`
	DurationSec float64 `json:"duration_s"` // measured interval
	Requests    int64   `json:"requests"`   // measured replies, error replies included
	Errors      int64   `json:"errors"`     // error replies + I/O and dial errors
	// Silent counts connections that got no measured reply: at low rates or short runs
	// some connections may carry no request at all.
	Silent       int              `json:"connections_without_reply"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	Throughput   float64          `json:"throughput_rps"`
	LatencyUs    Latency          `json:"latency_us"`
	// Histogram is the latency histogram in nanoseconds, HdrHistogram's base64 compressed
	// V2 encoding; only with Config.ExportHistogram.
	Histogram string `json:"histogram,omitempty"`
}

// Latency holds latency statistics in microseconds.
type Latency struct {
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	P9999 float64 `json:"p99_99"`
	Max   float64 `json:"max"`
}

func newReport(cfg *Config, st *runState, conns int) *Report {
	mode := "closed"
	if cfg.Rate > 0 {
		mode = "open"
	}
	return &Report{
		Protocol: cfg.Protocol, Addr: cfg.Addr, Mode: mode, Connections: conns,
		Pipeline: cfg.Pipeline, Rate: cfg.Rate, Workload: mixString(cfg.Mix),
		Keyspace: cfg.Keyspace, ValueSize: cfg.ValueSize, Dist: cfg.Dist,
		WarmupSec: cfg.Warmup.Seconds(), ErrorsByKind: map[string]int64{},
	}
}

func (r *Report) addError(kind string, n int64) {
	r.ErrorsByKind[kind] += n
	r.Errors += n
}

func (r *Report) finish(h *hdrhistogram.Histogram, measured time.Duration) {
	r.DurationSec = measured.Seconds()
	if r.DurationSec > 0 {
		r.Throughput = float64(r.Requests) / r.DurationSec
	}
	r.LatencyUs = latencyOf(h)
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return Latency{
		Mean:  h.Mean() / 1e3,
		P50:   us(h.ValueAtQuantile(50)),
		P90:   us(h.ValueAtQuantile(90)),
		P99:   us(h.ValueAtQuantile(99)),
		P999:  us(h.ValueAtQuantile(99.9)),
		P9999: us(h.ValueAtQuantile(99.99)),
		Max:   us(h.Max()),
	}
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	loop := fmt.Sprintf("closed loop, pipeline %d", r.Pipeline)
	if r.Mode == "open" {
		loop = fmt.Sprintf("open loop at %s req/s", Group(r.Rate))
	}
	fmt.Fprintf(&b, "%s %s: %s, %d connections, %s, keyspace %d (%s), value %d B\n\n",
		r.Protocol, r.Addr, loop, r.Connections, r.Workload, r.Keyspace, r.Dist, r.ValueSize)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "requests\tseconds\treq/s\terrors\t\n")
	fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t\n", Group(float64(r.Requests)), r.DurationSec, Group(r.Throughput), Group(float64(r.Errors)))
	tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	l := r.LatencyUs
	fmt.Fprintf(tw, "latency µs\tmean\tp50\tp90\tp99\tp99.9\tp99.99\tmax\t\n")
	fmt.Fprintf(tw, "\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", l.Mean, l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max)
	tw.Flush()
	if len(r.ErrorsByKind) > 0 {
		b.WriteString("\nerrors by kind:\n")
		for _, k := range slices.Sorted(maps.Keys(r.ErrorsByKind)) {
			fmt.Fprintf(&b, "  %-40s %d\n", k, r.ErrorsByKind[k])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Group formats f rounded to an integer with thousands separators.
func Group(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
