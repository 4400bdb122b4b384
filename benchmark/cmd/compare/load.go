package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/shoalkv/shoal/benchmark/internal/proc"
	"github.com/shoalkv/shoal/internal/loadgen"
	"github.com/shoalkv/shoal/internal/procfs"
)

// Marker lines printed by shoal-load on stderr around its measured interval.
const (
	markerMeasuring = loadgen.MarkerMeasuring
	markerDone      = loadgen.MarkerDone
)

// loadReport is shoal-load's -json report, which the harness reads.
type loadReport = loadgen.Report

// latency is the report's latency block, in microseconds.
type latency = loadgen.Latency

// measured is one load run with the server-side figures taken over its measured interval.
type measured struct {
	Report          loadReport `json:"report"`
	ServerCPUTicks  int64      `json:"server_cpu_ticks"`
	ServerCPUPerReq float64    `json:"server_cpu_us_per_request"`
	ServerRSS       int64      `json:"server_rss_bytes"`
	ClientCPUPerReq float64    `json:"client_cpu_us_per_request"` // shoal-load over the measured interval
	// BackgroundCores is the CPU used by everything but the server and shoal-load over the
	// measured interval, in cores: other jobs on a shared machine, and steal.
	BackgroundCores float64 `json:"background_cores"`
}

// sample is one reading at a marker.
type sample struct {
	at                      time.Time
	server, client, machine int64
}

func takeSample(serverPid, clientPid int) (sample, error) {
	s := sample{at: time.Now()}
	var err error
	if s.server, err = procfs.CPUTicks(serverPid); err != nil {
		return s, err
	}
	if s.client, err = procfs.CPUTicks(clientPid); err != nil {
		return s, err
	}
	s.machine, err = machineBusyTicks()
	return s, err
}

// hooks run at the markers, e.g. to start and stop perf.
type hooks struct {
	measuring func()
	done      func()
}

// runLoad runs shoal-load against srv and samples srv's CPU time at the measuring and
// done markers and its RSS at done, while the connections are still open.
func runLoad(ctx context.Context, loadBin string, srv *proc.Server, args []string, tck int64, h hooks) (*measured, error) {
	args = append([]string{"-addr", srv.Addr, "-json", "-progress", "0"}, args...)
	cmd := exec.CommandContext(ctx, loadBin, args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var t0, t1 sample
	var rss int64
	var sampleErr error
	keep := func(err error) {
		if err != nil && sampleErr == nil {
			sampleErr = err
		}
	}
	var tail []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		switch line {
		case markerMeasuring:
			t0, err = takeSample(srv.PID(), cmd.Process.Pid)
			keep(err)
			if h.measuring != nil {
				h.measuring()
			}
		case markerDone:
			t1, err = takeSample(srv.PID(), cmd.Process.Pid)
			keep(err)
			rss, err = procfs.RSS(srv.PID())
			keep(err)
			if h.done != nil {
				h.done()
			}
		default:
			tail = append(tail, line)
		}
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("shoal-load %s: %v: %s", strings.Join(args, " "), err, strings.Join(tail, "; "))
	}
	if sampleErr != nil {
		return nil, sampleErr
	}
	if t0.at.IsZero() || t1.at.IsZero() {
		return nil, fmt.Errorf("shoal-load %s printed no measuring/done markers", strings.Join(args, " "))
	}
	m := &measured{ServerCPUTicks: t1.server - t0.server, ServerRSS: rss}
	if secs := t1.at.Sub(t0.at).Seconds(); secs > 0 {
		other := (t1.machine - t0.machine) - m.ServerCPUTicks - (t1.client - t0.client)
		m.BackgroundCores = max(0, float64(other)/float64(tck)/secs)
	}
	if err := json.Unmarshal(stdout.Bytes(), &m.Report); err != nil {
		return nil, fmt.Errorf("shoal-load report: %v: %.300s", err, stdout.String())
	}
	if n := m.Report.Requests; n > 0 {
		m.ServerCPUPerReq = float64(m.ServerCPUTicks) * 1e6 / float64(tck) / float64(n)
		m.ClientCPUPerReq = float64(t1.client-t0.client) * 1e6 / float64(tck) / float64(n)
	}
	return m, nil
}
