package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shoalkv/shoal/benchmark/internal/machine"
	"github.com/shoalkv/shoal/benchmark/internal/stats"
)

// results is everything one compare run produced; results.json holds it as is.
type results struct {
	Machine      machine.Info `json:"machine"`
	Options      string       `json:"options"`
	Notes        []string     `json:"notes,omitempty"`
	Servers      []string     `json:"servers"`
	ServerDescs  []string     `json:"server_descriptions"`
	Workloads    []workload   `json:"workloads"`
	Rate         float64      `json:"open_loop_rate"`
	LatencyConns int          `json:"open_loop_conns"`
	Rounds       int          `json:"rounds"`
	Elapsed      string       `json:"elapsed"`
	Profile      string       `json:"profile,omitempty"`
	Records      []record     `json:"records"`
}

// summary is the median of one server's runs of one workload.
type summary struct {
	Throughput, CPUPerReq, ClientCPUPerReq, RSSMiB float64
	Spread                                         float64 // (max-min)/median of throughput over rounds
	Errors                                         int64
	Latency                                        latency
	Runs                                           int
}

func (r *results) summarize(server, kind string, w *workload) summary {
	var thr, cpu, ccpu, rss, p50, p90, p99, p999, p9999, mx, mean []float64
	var s summary
	for _, rec := range r.Records {
		if rec.Server != server || rec.Kind != kind || (w != nil && rec.Workload != *w) {
			continue
		}
		rep := rec.Report
		thr = append(thr, rep.Throughput)
		cpu = append(cpu, rec.ServerCPUPerReq)
		ccpu = append(ccpu, rec.ClientCPUPerReq)
		rss = append(rss, float64(rec.ServerRSS)/(1<<20))
		l := rep.LatencyUs
		p50, p90, p99 = append(p50, l.P50), append(p90, l.P90), append(p99, l.P99)
		p999, p9999, mx, mean = append(p999, l.P999), append(p9999, l.P9999), append(mx, l.Max), append(mean, l.Mean)
		s.Errors += rep.Errors
		s.Runs++
	}
	s.Throughput, s.CPUPerReq, s.ClientCPUPerReq, s.RSSMiB = stats.Median(thr), stats.Median(cpu), stats.Median(ccpu), stats.Median(rss)
	if len(thr) > 1 && s.Throughput > 0 {
		s.Spread = (slices.Max(thr) - slices.Min(thr)) / s.Throughput
	}
	s.Latency = latency{Mean: stats.Median(mean), P50: stats.Median(p50), P90: stats.Median(p90), P99: stats.Median(p99), P999: stats.Median(p999), P9999: stats.Median(p9999), Max: stats.Median(mx)}
	return s
}

func (r *results) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	charts, err := r.charts(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(r.markdown(charts)), 0o644)
}

// ratio formats a against base, e.g. "1.42×"; "–" when there is no base.
func ratio(a, base float64) string {
	if base <= 0 || a <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/base)
}

func (r *results) markdown(charts []string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Shoal side by side: %s\n\n", strings.Join(r.Servers, ", "))
	p("- Machine: %s.\n", r.Machine)
	p("- Shared machine: other jobs ran at the same time; nothing is pinned, and the load generator (shoal-load) runs on the same cores as the server, so absolute figures are low and noisy. Compare ratios within one table.\n")
	p("- Command: `go run ./benchmark/cmd/compare %s` (%s).\n", r.Options, r.Elapsed)
	p("- Figures are medians of %d round(s). Every round starts each server afresh, SETs the same %s keys into each, then runs every workload on every server, rotating the server order from one workload and round to the next.\n", r.Rounds, keyspaceOf(r.Options))
	for i, s := range r.Servers {
		p("- `%s`: %s\n", s, r.ServerDescs[i])
	}
	for _, n := range r.Notes {
		p("- **Note:** %s\n", n)
	}
	if r.Profile != "" {
		p("- Profile: %s\n", r.Profile)
	}
	if bg := r.background(); len(bg) > 0 {
		p("- Other load during the measured intervals (CPU used by everything but the server and shoal-load, steal included, from /proc/stat): median %.2f cores, highest %.2f, of %d.\n", stats.Median(bg), slices.Max(bg), r.Machine.CPUs)
	}
	base := "redis"
	hasBase := slices.Contains(r.Servers, base)

	section := func(title, unit string, value func(summary) float64, lowerBetter, spread bool) {
		p("\n## %s\n\n", title)
		if hasBase {
			if lowerBetter {
				p("%s; in brackets the ratio to redis-server (below 1× is better).\n\n", unit)
			} else {
				p("%s; in brackets the ratio to redis-server (above 1× is better).\n\n", unit)
			}
		} else {
			p("%s.\n\n", unit)
		}
		p("| workload |")
		for _, s := range r.Servers {
			p(" %s |", s)
		}
		p("\n|---|")
		for range r.Servers {
			p("---:|")
		}
		p("\n")
		for _, w := range r.Workloads {
			p("| %s c=%d P=%d |", strings.ToUpper(w.Op), w.Conns, w.Pipeline)
			var bv float64
			if hasBase {
				bv = value(r.summarize(base, "closed", &w))
			}
			for _, s := range r.Servers {
				sm := r.summarize(s, "closed", &w)
				v := value(sm)
				cell := formatValue(v)
				if hasBase && s != base {
					cell += " (" + ratio(v, bv) + ")"
				}
				if spread && sm.Runs > 1 {
					cell += fmt.Sprintf(" ±%.0f%%", 50*sm.Spread)
				}
				if sm.Errors > 0 {
					cell += fmt.Sprintf(" ⚠%d errors", sm.Errors)
				}
				p(" %s |", cell)
			}
			p("\n")
		}
	}
	section("Throughput (closed loop)", "Requests per second, higher is better; with several rounds ±x% is half the range between the lowest and highest round, relative to the median", func(s summary) float64 { return s.Throughput }, false, true)
	section("Server CPU per request", "Server CPU time (utime+stime of all its threads, /proc/PID/stat) over the measured interval, divided by the requests answered: µs per request, lower is better", func(s summary) float64 { return s.CPUPerReq }, true, false)
	section("Server memory", "VmRSS (/proc/PID/status) in MiB at the end of the measured interval, connections still open; it includes the round's earlier workloads (the server is not restarted between workloads)", func(s summary) float64 { return s.RSSMiB }, true, false)

	p("\n## Latency (open loop)\n\n")
	p("GET at a fixed %s requests/s over %d connections, the same schedule for every server; latencies in µs from each request's scheduled send time (see benchmark/README.md), medians over rounds.\n\n", group(r.Rate), r.LatencyConns)
	p("| server | achieved req/s | p50 | p90 | p99 | p99.9 | p99.99 | max | p99 vs redis |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var bp99 float64
	if hasBase {
		bp99 = r.summarize(base, "open", nil).Latency.P99
	}
	for _, s := range r.Servers {
		sm := r.summarize(s, "open", nil)
		l := sm.Latency
		rel := "–"
		if hasBase && s != base {
			rel = ratio(l.P99, bp99)
		}
		errs := ""
		if sm.Errors > 0 {
			errs = fmt.Sprintf(" ⚠%d errors", sm.Errors)
		}
		p("| %s | %s%s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %s |\n", s, group(sm.Throughput), errs, l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max, rel)
	}
	p("\n## Load generator cost\n\nshoal-load's own CPU per request over the measured interval, median over servers, commands, connection counts and rounds:")
	_, _, pipes := r.axes()
	for i, d := range pipes {
		if i > 0 {
			p(",")
		}
		p(" P=%d %.2f µs", d, r.clientCPU(d))
	}
	p(". The client shares the two cores with the server, so every µs it spends is a µs the server cannot use.\n")
	if len(charts) > 0 {
		p("\n## Charts\n\n")
		for _, c := range charts {
			p("![%s](%s)\n\n", c, c)
		}
	}
	return b.String()
}

func (r *results) background() []float64 {
	var v []float64
	for _, rec := range r.Records {
		v = append(v, rec.BackgroundCores)
	}
	return v
}

func (r *results) clientCPU(pipeline int) float64 {
	var v []float64
	for _, rec := range r.Records {
		if rec.Kind == "closed" && rec.Workload.Pipeline == pipeline {
			v = append(v, rec.ClientCPUPerReq)
		}
	}
	return stats.Median(v)
}

func keyspaceOf(opts string) string {
	f := strings.Fields(opts)
	for i := range f {
		if f[i] == "-keyspace" && i+1 < len(f) {
			return group(float64(atoiOr(f[i+1], 0)))
		}
	}
	return "?"
}

func atoiOr(s string, def int) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		return def
	}
	return n
}

func formatValue(v float64) string {
	switch {
	case v >= 1000:
		return group(v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// group formats f rounded to an integer with thousands separators.
func group(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
