package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shoalkv/shoal/benchmark/internal/machine"
	"github.com/shoalkv/shoal/benchmark/internal/proc"
	"github.com/shoalkv/shoal/benchmark/internal/stats"
	"github.com/shoalkv/shoal/internal/procfs"
)

// clientCheck measures shoal-load and redis-benchmark as clients of one redis-server on
// the same work (GET over 50 connections at pipeline depths 1 and 16, the same request
// count and keyspace), alternating them, and writes client_check.md: throughput and each
// client's own CPU per request.
func clientCheck(ctx context.Context, o *options, bins *binaries, out string) error {
	srv, err := proc.Start(specs(bins)["redis"])
	if err != nil {
		return err
	}
	defer srv.Stop()
	tck := clockTicks()
	if err := preload(ctx, o, bins, srv, tck); err != nil {
		return err
	}
	type row struct {
		client               string
		pipeline             int
		rps, cpuUs, srvCPUUs float64
	}
	var rows []row
	for round := 1; round <= max(o.rounds, 3); round++ {
		for _, pc := range []struct{ pipeline, n int }{{1, 200_000}, {16, 2_000_000}} {
			if err := ctx.Err(); err != nil {
				return err
			}
			n, pipeline := pc.n, strconv.Itoa(pc.pipeline)
			for _, client := range rotate([]string{"shoal-load", "redis-benchmark"}, round) {
				var cmd *exec.Cmd
				if client == "shoal-load" {
					cmd = exec.CommandContext(ctx, bins.load, "-addr", srv.Addr, "-c", "50", "-P", pipeline, "-t", "get",
						"-n", strconv.Itoa(n), "-keyspace", strconv.Itoa(o.keyspace), "-json", "-progress", "0")
				} else {
					cmd = exec.CommandContext(ctx, "redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port), "-c", "50",
						"-P", pipeline, "-t", "get", "-n", strconv.Itoa(n), "-r", strconv.Itoa(o.keyspace), "--csv")
				}
				t0, _ := procfs.CPUTicks(srv.PID())
				outb, err := cmd.Output()
				if err != nil {
					return fmt.Errorf("%s: %v", client, err)
				}
				t1, _ := procfs.CPUTicks(srv.PID())
				rps, err := clientThroughput(client, outb)
				if err != nil {
					return err
				}
				st := cmd.ProcessState
				r := row{client, pc.pipeline, rps, float64(st.UserTime()+st.SystemTime()) / float64(time.Microsecond) / float64(n),
					float64(t1-t0) * 1e6 / float64(tck) / float64(n)}
				rows = append(rows, r)
				logf("client check round %d P=%d: %-15s %10.0f req/s  client %.2f µs CPU/req  redis %.2f µs CPU/req", round, pc.pipeline, client, r.rps, r.cpuUs, r.srvCPUUs)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# shoal-load vs redis-benchmark as clients of redis-server\n\n- Machine: %s.\n", machine.Describe())
	fmt.Fprintf(&b, "- Command: `go run ./benchmark/cmd/compare -client-check`; each client sends GETs over 50 connections (200,000 at -P 1, 2,000,000 at -P 16), keyspace %s, the two clients alternating, %d rounds.\n", group(float64(o.keyspace)), len(rows)/4)
	fmt.Fprintf(&b, "- Client CPU is the whole process's utime+stime (set-up included) per request; redis CPU is redis-server's over the same run.\n\n")
	fmt.Fprintf(&b, "| client | pipeline | median req/s | median client CPU µs/req | median redis CPU µs/req |\n|---|---:|---:|---:|---:|\n")
	for _, p := range []int{1, 16} {
		for _, c := range []string{"shoal-load", "redis-benchmark"} {
			var rps, cpu, scpu []float64
			for _, r := range rows {
				if r.client == c && r.pipeline == p {
					rps, cpu, scpu = append(rps, r.rps), append(cpu, r.cpuUs), append(scpu, r.srvCPUUs)
				}
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %.2f | %.2f |\n", c, p, group(stats.Median(rps)), stats.Median(cpu), stats.Median(scpu))
		}
	}
	return os.WriteFile(filepath.Join(out, "client_check.md"), []byte(b.String()), 0o644)
}

func clientThroughput(client string, out []byte) (float64, error) {
	if client == "shoal-load" {
		var rep loadReport
		if err := json.Unmarshal(out, &rep); err != nil {
			return 0, err
		}
		return rep.Throughput, nil
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(recs) < 2 || len(recs[1]) < 2 {
		return 0, fmt.Errorf("redis-benchmark --csv output %q: %v", out, err)
	}
	return strconv.ParseFloat(recs[1][1], 64)
}
