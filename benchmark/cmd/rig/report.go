package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/shoalkv/shoal/internal/loadgen"
)

// Report is one rig run against one server; the file written by -json is the first
// server's Report with the peer's (-peer) under "peer".
type Report struct {
	Server       string           `json:"server"` // shoal or redis
	Target       int              `json:"target"`
	Connected    int64            `json:"connected"` // open and checked when the load began
	Errors       int64            `json:"errors"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	// Silent counts connections that got no measured reply during the load.
	Silent          int     `json:"connections_without_reply"`
	ConnectSeconds  float64 `json:"connect_seconds"` // clients started → all connected and checked
	Servers         int     `json:"servers"`
	Clients         int     `json:"clients"`
	Mode            string  `json:"mode"`
	ModeReason      string  `json:"mode_reason"`
	DescriptorLimit int     `json:"descriptor_limit"` // per container, as the containers get it
	ServerLog       string  `json:"server_maxclients_log,omitempty"`
	// SoftnetDrops counts packets the host's kernel dropped during the run because a
	// CPU's input backlog was full (/proc/net/softnet_stat; any process's traffic).
	SoftnetDrops int64 `json:"softnet_drops"`
	// NetdevMaxBacklog is the host's net.core.netdev_max_backlog during the run.
	NetdevMaxBacklog int `json:"host_netdev_max_backlog"`

	// Server RSS, summed over the server processes: before any client, once every
	// connection is open and checked, and the highest sample of the run (load included).
	ServerRSSIdleBytes      int64 `json:"server_rss_idle_bytes"`
	ServerRSSConnectedBytes int64 `json:"server_rss_connected_bytes"`
	ServerRSSBytes          int64 `json:"server_rss_bytes"`
	// (peak − idle) / connected: what each connection costs under load.
	ServerRSSBytesPerConn float64 `json:"server_rss_bytes_per_conn"`
	// (connected − idle) / connected: what each connected, checked, idle connection costs.
	ServerRSSBytesPerIdleConn float64 `json:"server_rss_bytes_per_idle_conn"`

	RateRPS       float64         `json:"rate_rps"`   // open-loop target over all connections
	DialRate      float64         `json:"dial_rate"`  // connections/s ramp target
	DurationSec   float64         `json:"duration_s"` // measured load interval
	Requests      int64           `json:"requests"`   // measured replies
	ThroughputRPS float64         `json:"throughput_rps"`
	LatencyUs     loadgen.Latency `json:"latency_us"` // from the exact merge of every client's histogram
	// CPU is where the CPU went during the load (cpu.go).
	CPU      CPU     `json:"cpu"`
	Timeline []Point `json:"timeline"`

	Peer    *Report `json:"peer,omitempty"`
	Command string  `json:"command,omitempty"`
	Machine string  `json:"machine,omitempty"`
}

// Point is one second of the run, as the driver saw it.
type Point struct {
	T              float64 `json:"t_s"` // since the clients started
	Phase          string  `json:"phase"`
	Connected      int64   `json:"connected"`
	RPS            float64 `json:"rps,omitempty"`
	P50Us          float64 `json:"p50_us,omitempty"` // of this second's replies
	P99Us          float64 `json:"p99_us,omitempty"`
	ServerRSSBytes int64   `json:"server_rss_bytes"`
}

func writeJSON(file string, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// writeMarkdown writes the summary table, one column per server.
func writeMarkdown(w io.Writer, r *Report, chart string) error {
	runs := []*Report{r}
	if r.Peer != nil {
		runs = append(runs, r.Peer)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Stress rig: %s connections\n\n", loadgen.Group(float64(r.Target)))
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", r.Command)
	if r.Machine != "" {
		fmt.Fprintf(&b, "Machine: %s.\n\n", r.Machine)
	}
	fmt.Fprintf(&b, "Mode: **%s** — %s\n\n", r.Mode, r.ModeReason)
	b.WriteString("| |")
	for _, x := range runs {
		fmt.Fprintf(&b, " %s |", serverName(x.Server))
	}
	b.WriteString("\n|---|")
	for range runs {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	row := func(name string, f func(x *Report) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, x := range runs {
			fmt.Fprintf(&b, " %s |", f(x))
		}
		b.WriteString("\n")
	}
	row("connected / target", func(x *Report) string {
		return loadgen.Group(float64(x.Connected)) + " / " + loadgen.Group(float64(x.Target))
	})
	row("errors", func(x *Report) string { return loadgen.Group(float64(x.Errors)) })
	row("connections without a reply", func(x *Report) string { return loadgen.Group(float64(x.Silent)) })
	row("connect time (ramp + check)", func(x *Report) string { return fmt.Sprintf("%.1f s", x.ConnectSeconds) })
	row("packets dropped at a full backlog (host)", func(x *Report) string {
		return fmt.Sprintf("%s (netdev_max_backlog %d)", loadgen.Group(float64(x.SoftnetDrops)), x.NetdevMaxBacklog)
	})
	row("servers × clients", func(x *Report) string { return fmt.Sprintf("%d × %d", x.Servers, x.Clients) })
	row("server RSS idle → connected → peak", func(x *Report) string {
		return fmt.Sprintf("%s → %s → %s MB", mb(x.ServerRSSIdleBytes), mb(x.ServerRSSConnectedBytes), mb(x.ServerRSSBytes))
	})
	row("**server RSS per connection** (peak − idle)", func(x *Report) string {
		return fmt.Sprintf("**%s B**", loadgen.Group(x.ServerRSSBytesPerConn))
	})
	row("server RSS per idle connection (connected − idle)", func(x *Report) string {
		return fmt.Sprintf("%s B", loadgen.Group(x.ServerRSSBytesPerIdleConn))
	})
	row("open-loop rate / measured", func(x *Report) string {
		return fmt.Sprintf("%s / %s req/s", loadgen.Group(x.RateRPS), loadgen.Group(x.ThroughputRPS))
	})
	row("requests (duration)", func(x *Report) string {
		return fmt.Sprintf("%s (%.1f s)", loadgen.Group(float64(x.Requests)), x.DurationSec)
	})
	row("**server CPU per request** (all server processes)", func(x *Report) string {
		return fmt.Sprintf("**%.1f µs** (%.2f s)", x.CPU.ServerUsPerRequest, x.CPU.ServerSeconds)
	})
	row("client CPU per request (all client processes)", func(x *Report) string {
		return fmt.Sprintf("%.1f µs (%.2f s)", x.CPU.ClientUsPerRequest, x.CPU.ClientSeconds)
	})
	row("host CPU per request (busy, every process and the kernel)", func(x *Report) string {
		return fmt.Sprintf("%.1f µs (%.2f s busy, %.2f CPUs)", x.CPU.HostBusyUsPerRequest, x.CPU.HostBusySeconds, x.CPU.HostCPUs)
	})
	row("host system / irq+softirq time", func(x *Report) string {
		return fmt.Sprintf("%.2f s / %.2f s", x.CPU.HostSystemSeconds, x.CPU.HostIRQSeconds)
	})
	l := func(f func(l loadgen.Latency) float64) func(x *Report) string {
		return func(x *Report) string { return fmtUs(f(x.LatencyUs)) }
	}
	row("latency p50", l(func(l loadgen.Latency) float64 { return l.P50 }))
	row("latency p90", l(func(l loadgen.Latency) float64 { return l.P90 }))
	row("latency p99", l(func(l loadgen.Latency) float64 { return l.P99 }))
	row("latency p99.9", l(func(l loadgen.Latency) float64 { return l.P999 }))
	row("latency max", l(func(l loadgen.Latency) float64 { return l.Max }))
	b.WriteString("\nLatency is measured from each request's scheduled send time (open loop, coordinated-omission safe), " +
		"from the exact merge of every client's HdrHistogram. RSS is the servers' VmRSS summed, read from /proc on the host. " +
		"CPU is read on the host from /proc/PID/stat (processes) and /proc/stat (the whole host, whose system and softirq time " +
		"carries docker's bridge, NAT and conntrack) from the moment every connection is up until the clients finish their load.\n")
	for _, x := range runs {
		if len(x.ErrorsByKind) > 0 {
			fmt.Fprintf(&b, "\nErrors of %s by kind:\n\n", serverName(x.Server))
			for _, k := range slices.Sorted(maps.Keys(x.ErrorsByKind)) {
				fmt.Fprintf(&b, "- %s: %d\n", k, x.ErrorsByKind[k])
			}
		}
		if x.ServerLog != "" {
			fmt.Fprintf(&b, "\n%s's log on maxclients: `%s`\n", serverName(x.Server), x.ServerLog)
		}
	}
	if chart != "" {
		fmt.Fprintf(&b, "\n![connections and latency over time](%s)\n", chart)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func serverName(s string) string {
	if s == "redis" {
		return "redis-server"
	}
	return s
}
