package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shoalkv/shoal/internal/slowconsumer"
)

// report is everything one invocation measured; results.json holds it.
type report struct {
	Started      time.Time
	Load         string // uptime at the start
	RedisVersion string
	MessageSize  int
	Settle       time.Duration
	Warmup       bool // each server ran one unmeasured subscriber first
	Rows         []row
}

// row is one measurement of one server.
type row struct {
	Server string
	N      int
	Round  int
	slowconsumer.Result
	Err string `json:",omitempty"`
}

const mib = 1 << 20

func mibs(b int64) string { return fmt.Sprintf("%.1f", float64(b)/mib) }

func (r row) summary() string {
	if r.Err != "" {
		return "error: " + r.Err
	}
	return fmt.Sprintf("peak %s MiB, closed %d/%d, max PUBLISH %v", mibs(r.PeakRSS), r.Closed, r.N, r.PublishMaxLatency.Round(time.Microsecond))
}

// markdown renders the report as a heading, the machine's load and a table.
func (rep report) markdown(withRound bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Slow pub/sub subscribers\n\n")
	fmt.Fprintf(&b, "%s. Load: `%s`. %s.\n\n", rep.Started.Format(time.RFC3339), rep.Load, rep.RedisVersion)
	fmt.Fprintf(&b, "Subscribers never read (SO_RCVBUF %d); one publisher sends %d-byte messages, %d in flight, "+
		"up to %d× the server's pubsub hard limit per subscriber. Both servers run with their defaults "+
		"(client-output-buffer-limit pubsub 32mb 8mb 60). RSS in MiB; growth is (peak − baseline) / N; "+
		"bytes at close are the bytes published before the server stopped counting the subscriber, "+
		"its output buffer and the kernel's socket buffers together.\n\n",
		slowconsumer.DefaultRecvBuffer, rep.MessageSize, slowconsumer.PublishInFlight, slowconsumer.DefaultLimitMultiple)
	if rep.Warmup {
		fmt.Fprintf(&b, "Each fresh server first ran one such subscriber, unmeasured, and settled for %v: "+
			"the baseline is a warm process, not one whose code has never run.\n\n", rep.Settle)
	}
	head := []string{"server", "N", "baseline RSS", "peak RSS", "growth / subscriber", "closed / N",
		"mean MiB at close", "max PUBLISH latency", "publish MB/s", fmt.Sprintf("RSS %v after", rep.Settle)}
	if withRound {
		head = append([]string{"round"}, head...)
	}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, r := range rep.Rows {
		cells := []string{r.Server, fmt.Sprint(r.N)}
		if r.Err != "" {
			cells = append(cells, "error: "+strings.ReplaceAll(r.Err, "|", "/"))
			for len(cells) < len(head)-boolInt(withRound) {
				cells = append(cells, "")
			}
		} else {
			cells = append(cells, mibs(r.BaselineRSS), mibs(r.PeakRSS), mibs(r.GrowthPerSubscriber()),
				fmt.Sprintf("%d/%d", r.Closed, r.N), mibs(r.MeanClosedAtBytes()),
				r.PublishMaxLatency.Round(10*time.Microsecond).String(),
				fmt.Sprintf("%.0f", r.Throughput()/1e6), mibs(r.AfterRSS))
		}
		if withRound {
			cells = append([]string{fmt.Sprint(r.Round)}, cells...)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	return b.String()
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// write saves results.md and results.json in dir.
func (rep report) write(dir, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644)
}
