package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shoalkv/shoal/benchmark/internal/machine"
	"github.com/shoalkv/shoal/benchmark/internal/proc"
)

// workload is one closed-loop configuration.
type workload struct {
	Op       string `json:"op"`
	Conns    int    `json:"conns"`
	Pipeline int    `json:"pipeline"`
}

func (w workload) String() string {
	return fmt.Sprintf("%s c=%d P=%d", w.Op, w.Conns, w.Pipeline)
}

// record is one measured run.
type record struct {
	Round    int      `json:"round"`
	Server   string   `json:"server"`
	Kind     string   `json:"kind"` // "closed" or "open"
	Workload workload `json:"workload"`
	measured
}

func workloads(o *options) []workload {
	var ws []workload
	for _, op := range o.ops {
		for _, c := range o.conns {
			for _, p := range o.pipelines {
				ws = append(ws, workload{op, c, p})
			}
		}
	}
	return ws
}

func compare(ctx context.Context, o *options) error {
	root, err := proc.ModuleRoot("compare")
	if err != nil {
		return err
	}
	logf("building shoal-load, baseline and shoal")
	bins, err := build(root)
	if err != nil {
		return err
	}
	defer os.RemoveAll(bins.dir)
	out := o.out
	if !isAbs(out) {
		out = root + "/" + out
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if o.clientCheck {
		return clientCheck(ctx, o, bins, out)
	}
	all := specs(bins)
	if o.profileOnly {
		if bins.shoalMissing != "" {
			return fmt.Errorf("cannot profile shoal: %s", bins.shoalMissing)
		}
		for _, name := range o.profiled {
			note, err := profileShoal(ctx, o, bins, all[name], out, clockTicks())
			logf("profile: %s", note)
			if err != nil {
				return err
			}
		}
		return nil
	}
	var names []string
	var notes []string
	for _, s := range o.servers {
		if strings.HasPrefix(s, "shoal") && bins.shoalMissing != "" {
			notes = append(notes, s+" skipped: "+bins.shoalMissing)
			logf("%s skipped: %s", s, bins.shoalMissing)
			continue
		}
		names = append(names, s)
	}
	host := machine.Describe()
	tck := clockTicks()
	started := time.Now()
	var records []record
	ws := workloads(o)
	for round := 1; round <= o.rounds; round++ {
		rs, err := runRound(ctx, o, bins, all, names, ws, round, tck)
		records = append(records, rs...)
		if err != nil {
			return err
		}
	}
	var profileNote string
	if o.profile {
		if bins.shoalMissing != "" {
			profileNote = "not profiled: " + bins.shoalMissing
		} else {
			var notes []string
			for _, name := range o.profiled {
				note, err := profileShoal(ctx, o, bins, all[name], out, tck)
				if err != nil {
					return err
				}
				notes = append(notes, name+": "+note)
			}
			profileNote = strings.Join(notes, "; ")
		}
	}
	res := &results{
		Machine: host, Options: optionsLine(o), Notes: notes, Servers: names, Workloads: ws,
		Records: records, Rate: o.rate, LatencyConns: o.latencyConns, Rounds: o.rounds,
		Elapsed: time.Since(started).Round(time.Second).String(), Profile: profileNote,
	}
	for _, n := range names {
		res.ServerDescs = append(res.ServerDescs, all[n].Desc)
	}
	if err := res.write(out); err != nil {
		return err
	}
	logf("wrote %s/results.md, results.json and charts in %s", out, res.Elapsed)
	return nil
}

func isAbs(p string) bool { return len(p) > 0 && p[0] == '/' }

// runRound starts every server, loads the keyspace into each, and runs every workload on
// every server in an order rotated by round and workload, then the open-loop runs.
func runRound(ctx context.Context, o *options, bins *binaries, all map[string]proc.Spec, names []string, ws []workload, round int, tck int64) ([]record, error) {
	procs := map[string]*proc.Server{}
	defer func() {
		for _, p := range procs {
			p.Stop()
		}
	}()
	for _, n := range names {
		p, err := proc.Start(all[n])
		if err != nil {
			return nil, err
		}
		procs[n] = p
		if err := preload(ctx, o, bins, p, tck); err != nil {
			return nil, err
		}
	}
	var records []record
	total := len(ws) * len(names)
	for i, w := range ws {
		for j, n := range rotate(names, round-1+i) {
			if ctx.Err() != nil {
				return records, ctx.Err()
			}
			args := append(commonArgs(o, w.Op), "-c", strconv.Itoa(w.Conns), "-P", strconv.Itoa(w.Pipeline))
			m, err := runLoad(ctx, bins.load, procs[n], args, tck, hooks{})
			if err != nil {
				return records, fmt.Errorf("%s on %s: %w", w, n, err)
			}
			records = append(records, record{round, n, "closed", w, *m})
			logf("round %d/%d  %3d/%d  %-18s %-6s %11.0f req/s  %6.2f µs CPU/req  %6.1f MiB  errors %d",
				round, o.rounds, i*len(names)+j+1, total, w, n, m.Report.Throughput, m.ServerCPUPerReq,
				float64(m.ServerRSS)/(1<<20), m.Report.Errors)
		}
	}
	lw := workload{"get", o.latencyConns, 1}
	for _, n := range rotate(names, round-1) {
		args := append(commonArgs(o, "get"), "-c", strconv.Itoa(o.latencyConns), "-rate", fmt.Sprint(o.rate))
		m, err := runLoad(ctx, bins.load, procs[n], args, tck, hooks{})
		if err != nil {
			return records, fmt.Errorf("open loop on %s: %w", n, err)
		}
		records = append(records, record{round, n, "open", lw, *m})
		l := m.Report.LatencyUs
		logf("round %d/%d  open loop %.0f/s  %-6s p50 %.0f µs  p99 %.0f µs  p99.9 %.0f µs  max %.0f µs  (%.0f req/s achieved)",
			round, o.rounds, o.rate, n, l.P50, l.P99, l.P999, l.Max, m.Report.Throughput)
	}
	return records, nil
}

func commonArgs(o *options, op string) []string {
	return []string{"-t", op, "-d", o.duration.String(), "-warmup", o.warmup.String(),
		"-keyspace", strconv.Itoa(o.keyspace), "-value-size", strconv.Itoa(o.valueSize)}
}

// preload SETs the keyspace once (same seed, so the same keys on every server), so GETs
// hit about as often everywhere.
func preload(ctx context.Context, o *options, bins *binaries, p *proc.Server, tck int64) error {
	args := []string{"-t", "set", "-n", strconv.Itoa(2 * o.keyspace), "-c", "50", "-P", "64",
		"-keyspace", strconv.Itoa(o.keyspace), "-value-size", strconv.Itoa(o.valueSize)}
	m, err := runLoad(ctx, bins.load, p, args, tck, hooks{})
	if err != nil {
		return fmt.Errorf("preload %s: %w", p.Spec.Name, err)
	}
	if m.Report.Errors > 0 {
		return fmt.Errorf("preload %s: %d errors: %v", p.Spec.Name, m.Report.Errors, m.Report.ErrorsByKind)
	}
	return nil
}

// rotate returns names shifted left by k.
func rotate(names []string, k int) []string {
	k %= len(names)
	return append(append([]string(nil), names[k:]...), names[:k]...)
}

func optionsLine(o *options) string {
	return fmt.Sprintf("-rounds %d -duration %v -warmup %v -pipelines %s -conns %s -ops %s -rate %.0f -latency-conns %d -keyspace %d -value-size %d",
		o.rounds, o.duration, o.warmup, joinInts(o.pipelines), joinInts(o.conns), join(o.ops), o.rate, o.latencyConns, o.keyspace, o.valueSize)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return join(s)
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05")+" "+format+"\n", args...)
}
