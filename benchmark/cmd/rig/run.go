package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shoalkv/shoal/benchmark/rig"
	"github.com/shoalkv/shoal/internal/loadgen"
	"github.com/shoalkv/shoal/internal/procfs"
)

// plan is the shape of one rig run, decided before anything starts.
type plan struct {
	server     string // "shoal" or "redis"
	conns      int
	servers    int
	clients    int
	rate       float64 // requests/s over all connections
	dialRate   float64 // new connections/s over all clients
	duration   time.Duration
	nofile     int
	mode       string
	modeReason string
}

// rigRun is one run in progress: the driver's view of the containers and the clients'
// status files.
type rigRun struct {
	p        plan
	d        *docker
	out      string // shared with the clients
	progress io.Writer
	tty      bool
	rep      *Report
	start    time.Time // clients started

	// CPU times when the load began, and the latest readable ones since
	// (a client's process is gone once it is done); cpu.go.
	cpuStart, cpuLast cpuSample
	cpuStartAt        time.Time
	cpuLastAt         time.Time
}

// noteCPU folds a sample taken during the load into cpuLast, side by side:
// a side that cannot be read now keeps its last reading.
func (r *rigRun) noteCPU(now time.Time, s cpuSample) {
	if s.serverOK {
		r.cpuLast.server, r.cpuLast.serverOK = s.server, true
	}
	if s.clientOK {
		r.cpuLast.client, r.cpuLast.clientOK = s.client, true
	}
	if s.host.ok {
		r.cpuLast.host, r.cpuLastAt = s.host, now
	}
}

// runRig brings the servers up, measures their idle RSS, starts the clients, follows
// them through ramp, check and load, and gathers the report. The caller tears down.
func runRig(ctx context.Context, d *docker, p plan, out string, progress io.Writer, tty bool) (*Report, error) {
	r := &rigRun{p: p, d: d, out: out, progress: progress, tty: tty, rep: &Report{
		Server: p.server, Target: p.conns, Servers: p.servers, Clients: p.clients, Mode: p.mode,
		ModeReason: p.modeReason, DescriptorLimit: p.nofile, RateRPS: p.rate,
		DialRate: p.dialRate, ErrorsByKind: map[string]int64{},
	}}
	r.logf("starting %d %s server(s)", p.servers, p.server)
	if _, err := d.composeRun(ctx, "up", "-d", "--scale", fmt.Sprintf("server=%d", p.servers), "--scale", "client=0"); err != nil {
		return nil, err
	}
	servers, err := d.containers(ctx, "server")
	if err != nil {
		return nil, err
	}
	if len(servers) != p.servers {
		return nil, fmt.Errorf("%d server containers, want %d", len(servers), p.servers)
	}
	if err := r.waitServers(ctx, servers); err != nil {
		return nil, err
	}
	serverPIDs, err := pids(ctx, servers)
	if err != nil {
		return nil, err
	}
	if r.rep.ServerRSSIdleBytes, err = sumRSS(serverPIDs); err != nil {
		return nil, err
	}
	r.logf("servers answer PING; RSS %s MB in all. Starting %d client(s): %d connections, ramp %.0f/s",
		mb(r.rep.ServerRSSIdleBytes), p.clients, p.conns, p.dialRate)
	r.start = time.Now()
	r.rep.NetdevMaxBacklog = netdevMaxBacklog()
	if p.conns >= 20000 && r.rep.NetdevMaxBacklog < 10000 {
		r.logf("net.core.netdev_max_backlog is %d: container traffic of this many connections may overflow it, and each drop stalls a connection for a retransmission timeout (sysctl -w net.core.netdev_max_backlog=16384 raises it)", r.rep.NetdevMaxBacklog)
	}
	drops0 := softnetDrops()
	defer func() {
		if drops1 := softnetDrops(); drops0 >= 0 && drops1 >= 0 {
			r.rep.SoftnetDrops = drops1 - drops0
		}
	}()
	if _, err := d.composeRun(ctx, "up", "-d", "--no-recreate", "--scale", fmt.Sprintf("server=%d", p.servers),
		"--scale", fmt.Sprintf("client=%d", p.clients)); err != nil {
		return nil, err
	}
	clients, err := d.containers(ctx, "client")
	if err != nil {
		return nil, err
	}
	clientPIDs, err := pids(ctx, clients)
	if err != nil {
		return nil, err
	}
	if err := r.follow(ctx, serverPIDs, clients, clientPIDs); err != nil {
		return nil, err
	}
	if err := r.gather(); err != nil {
		return nil, err
	}
	r.rep.ServerLog = maxclientsLine(ctx, servers[0])
	return r.rep, nil
}

func (r *rigRun) logf(format string, args ...any) {
	if r.progress == nil {
		return
	}
	if r.tty {
		fmt.Fprint(r.progress, "\r\x1b[K")
	}
	fmt.Fprintf(r.progress, "rig [%s] %s\n", r.p.server, fmt.Sprintf(format, args...))
}

// waitServers waits until every server container answers PING on its rig address. The
// host reaches the containers' addresses on the rig's own network.
func (r *rigRun) waitServers(ctx context.Context, ids []string) error {
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		ip, err := inspect(ctx, id, "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}")
		if err != nil {
			return err
		}
		addr := net.JoinHostPort(strings.Fields(ip + " ")[0], "6379")
		for !pingOK(addr) {
			if time.Now().After(deadline) || ctx.Err() != nil {
				logs, _ := run(context.Background(), nil, "docker", "logs", "--tail", "20", id)
				return fmt.Errorf("server %s did not answer PING within 60s: %v\n%s", addr, ctx.Err(), logs)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func pingOK(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	_, err = io.ReadFull(c, buf)
	return err == nil && string(buf) == "+PONG\r\n"
}

func pids(ctx context.Context, ids []string) ([]int, error) {
	out := make([]int, len(ids))
	for i, id := range ids {
		var err error
		if out[i], err = containerPID(ctx, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sumRSS(pids []int) (int64, error) {
	var sum int64
	for _, pid := range pids {
		v, err := procfs.RSS(pid)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// follow polls the clients' status files every second: it prints the progress line,
// samples the servers' RSS, starts the load once every client is connected and checked,
// and returns when every client is done.
func (r *rigRun) follow(ctx context.Context, serverPIDs []int, clients []string, clientPIDs []int) error {
	p := r.p
	ramp := time.Duration(float64(p.conns)/p.dialRate*float64(time.Second)) + 30*time.Second
	deadline := r.start.Add(2*ramp + p.duration + 60*time.Second)
	var loadStart time.Time
	var prevHist *hdrhistogram.Histogram
	var prevCompleted, prevConnected int64
	prevAt := r.start
	prevDrops := softnetDrops()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		now := time.Now()
		sts, err := r.statuses()
		if err != nil {
			return err
		}
		var agg rig.Status
		phases := map[string]int{}
		var hists []string
		for _, s := range sts {
			if s.Error != "" {
				return fmt.Errorf("client %s failed: %s", s.ID, s.Error)
			}
			phases[s.Phase]++
			agg.Connected += s.Connected
			agg.Failed += s.Failed
			agg.Completed += s.Completed
			if s.Histogram != "" {
				hists = append(hists, s.Histogram)
			}
		}
		if err := r.clientsAlive(ctx, clients, clientPIDs, phases[rig.PhaseDone]); err != nil {
			return err
		}
		rssNow, err := sumRSS(serverPIDs)
		if err != nil {
			return err
		}
		r.rep.ServerRSSBytes = max(r.rep.ServerRSSBytes, rssNow)
		pt := Point{T: now.Sub(r.start).Seconds(), Connected: agg.Connected, ServerRSSBytes: rssNow}
		dt := now.Sub(prevAt).Seconds()
		if dr := softnetDrops(); dr >= 0 && prevDrops >= 0 && dr > prevDrops {
			r.logf("the kernel dropped %d packets at a full input backlog in the last second (net.core.netdev_max_backlog): expect retransmission stalls", dr-prevDrops)
		}
		prevDrops = softnetDrops()
		allReady := len(sts) == p.clients && phases[rig.PhaseReady] == p.clients
		switch {
		case loadStart.IsZero() && allReady:
			r.rep.ConnectSeconds = now.Sub(r.start).Seconds()
			r.rep.ServerRSSConnectedBytes = rssNow
			pt.Phase = "ready"
			r.logf("all %d clients connected and checked: %d connections (%d failed) in %.1fs; servers' RSS %s MB. Load: %.0f req/s for %v",
				p.clients, agg.Connected, agg.Failed, r.rep.ConnectSeconds, mb(rssNow), p.rate, p.duration)
			r.cpuStart, r.cpuStartAt = sampleCPU(serverPIDs, clientPIDs), time.Now()
			if err := os.WriteFile(filepath.Join(r.out, rig.GoFile), nil, 0o644); err != nil {
				return err
			}
			loadStart = now
		case loadStart.IsZero():
			pt.Phase = "ramp"
			r.line(fmt.Sprintf("ramp %5.1fs  connections %s/%s  failed %d  %s/s  clients %s",
				pt.T, loadgen.Group(float64(agg.Connected)), loadgen.Group(float64(p.conns)), agg.Failed,
				loadgen.Group(float64(agg.Connected-prevConnected)/dt), phaseSummary(phases)))
		default:
			pt.Phase = "load"
			r.noteCPU(now, sampleCPU(serverPIDs, clientPIDs))
			pt.RPS = float64(agg.Completed-prevCompleted) / dt
			if h, err := loadgen.MergeHistograms(hists...); err == nil {
				interval := diffHistogram(h, prevHist)
				if interval.TotalCount() > 0 {
					pt.P50Us = float64(interval.ValueAtQuantile(50)) / 1e3
					pt.P99Us = float64(interval.ValueAtQuantile(99)) / 1e3
				}
				prevHist = h
			}
			r.line(fmt.Sprintf("load %5.1fs  connections %s  %s req/s  p99 %s  done %s  errors %d  clients %s",
				now.Sub(loadStart).Seconds(), loadgen.Group(float64(agg.Connected)), loadgen.Group(pt.RPS),
				fmtUs(pt.P99Us), loadgen.Group(float64(agg.Completed)), agg.Failed, phaseSummary(phases)))
		}
		r.rep.Timeline = append(r.rep.Timeline, pt)
		prevAt, prevCompleted, prevConnected = now, agg.Completed, agg.Connected
		if phases[rig.PhaseDone] == p.clients {
			r.endLine()
			return nil
		}
		if now.After(deadline) {
			return fmt.Errorf("the rig did not finish by %v (clients: %s)", deadline.Sub(r.start).Round(time.Second), phaseSummary(phases))
		}
	}
}

// line prints the progress line: redrawn in place on a terminal, one line a tick
// otherwise.
func (r *rigRun) line(s string) {
	if r.progress == nil {
		return
	}
	if r.tty {
		fmt.Fprintf(r.progress, "\r\x1b[K%s", s)
		return
	}
	fmt.Fprintln(r.progress, s)
}

func (r *rigRun) endLine() {
	if r.progress != nil && r.tty {
		fmt.Fprintln(r.progress)
	}
}

func phaseSummary(phases map[string]int) string {
	var parts []string
	for _, ph := range []string{rig.PhaseResolve, rig.PhaseDial, rig.PhaseCheck, rig.PhaseReady, rig.PhaseLoad, rig.PhaseDone} {
		if n := phases[ph]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, ph))
		}
	}
	if len(parts) == 0 {
		return "starting"
	}
	return strings.Join(parts, ", ")
}

// statuses reads every client's status file.
func (r *rigRun) statuses() ([]rig.Status, error) {
	names, err := filepath.Glob(filepath.Join(r.out, "*.status"))
	if err != nil {
		return nil, err
	}
	var out []rig.Status
	for _, n := range names {
		var s rig.Status
		if err := rig.ReadJSON(r.out, filepath.Base(n), &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slot < out[j].Slot })
	return out, nil
}

// clientsAlive fails when a client container exited with an error before writing a
// status that says why (a crash, a bad flag). It asks docker only once a client's process
// is gone and not every client reported done.
func (r *rigRun) clientsAlive(ctx context.Context, ids []string, pids []int, done int) error {
	if done == len(ids) {
		return nil
	}
	for i, id := range ids {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pids[i]))); err == nil {
			continue
		}
		state, err := inspect(ctx, id, "{{.State.Status}} {{.State.ExitCode}}")
		if err != nil {
			return err
		}
		if f := strings.Fields(state); len(f) == 2 && f[0] == "exited" && f[1] != "0" {
			logs, _ := run(ctx, nil, "docker", "logs", "--tail", "20", id)
			return fmt.Errorf("client container %.12s exited with status %s:\n%s", id, f[1], logs)
		}
	}
	return nil
}

// gather merges the clients' results: sums, errors by kind, and the exact merge of
// their latency histograms.
func (r *rigRun) gather() error {
	names, err := filepath.Glob(filepath.Join(r.out, "*.result"))
	if err != nil {
		return err
	}
	if len(names) != r.p.clients {
		return fmt.Errorf("%d client results, want %d", len(names), r.p.clients)
	}
	rep := r.rep
	var hists []string
	for _, n := range names {
		var res rig.Result
		if err := rig.ReadJSON(r.out, filepath.Base(n), &res); err != nil {
			return err
		}
		if res.Report == nil {
			return fmt.Errorf("%s has no report", n)
		}
		rep.Connected += res.Connected
		rep.Requests += res.Report.Requests
		rep.Silent += res.Report.Silent
		rep.DurationSec = max(rep.DurationSec, res.Report.DurationSec)
		for k, v := range res.Report.ErrorsByKind {
			rep.ErrorsByKind[k] += v
			rep.Errors += v
		}
		hists = append(hists, res.Report.Histogram)
	}
	h, err := loadgen.MergeHistograms(hists...)
	if err != nil {
		return err
	}
	if h.TotalCount() != rep.Requests {
		return fmt.Errorf("merged histogram holds %d samples for %d replies", h.TotalCount(), rep.Requests)
	}
	rep.LatencyUs = loadgen.LatencyOf(h)
	if rep.DurationSec > 0 {
		rep.ThroughputRPS = float64(rep.Requests) / rep.DurationSec
	}
	rep.CPU = cpuBetween(r.cpuStart, r.cpuLast, r.cpuLastAt.Sub(r.cpuStartAt).Seconds(), rep.Requests)
	if rep.Connected > 0 {
		rep.ServerRSSBytesPerConn = float64(rep.ServerRSSBytes-rep.ServerRSSIdleBytes) / float64(rep.Connected)
		rep.ServerRSSBytesPerIdleConn = float64(rep.ServerRSSConnectedBytes-rep.ServerRSSIdleBytes) / float64(rep.Connected)
	}
	return nil
}

// diffHistogram returns cur minus prev (both cumulative, same geometry): the samples of
// one interval, exactly.
func diffHistogram(cur, prev *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if prev == nil {
		return cur
	}
	a, b := cur.Export(), prev.Export()
	for i := range a.Counts {
		if i < len(b.Counts) {
			a.Counts[i] = max(a.Counts[i]-b.Counts[i], 0)
		}
	}
	return hdrhistogram.Import(a)
}

// maxclientsLine returns the server's log line about lowering maxclients, if any.
func maxclientsLine(ctx context.Context, id string) string {
	cmd := command(ctx, nil, "docker", "logs", id)
	out, _ := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "maxclients") && (strings.Contains(line, "reduced") || strings.Contains(line, "compensate")) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func mb(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) }

func fmtUs(us float64) string {
	switch {
	case us == 0:
		return "-"
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	default:
		return fmt.Sprintf("%.1fms", us/1000)
	}
}

var errInterrupted = errors.New("interrupted")
