package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/shoalkv/shoal/internal/procfs"
)

// Where the CPU goes during the load: the servers' and the clients' own time
// (utime+stime of their processes, read on the host from /proc/PID/stat), and
// the host's system and softirq time from /proc/stat, which includes the kernel
// work of docker's bridge, NAT and conntrack that no process is charged with. A
// reader can then tell the server's cost per request from the rig's.

// userHZ is the unit of /proc's CPU times on Linux.
const userHZ = 100

// cpuSample is one reading of the CPU times the rig reports, in clock ticks.
type cpuSample struct {
	server, client     int64 // summed over the processes
	serverOK, clientOK bool
	host               hostCPU
}

// hostCPU is the aggregate "cpu" line of /proc/stat.
type hostCPU struct {
	system, irq int64 // system; irq + softirq
	busy        int64 // all but idle and iowait
	ok          bool
}

// sampleCPU reads the servers', the clients' and the host's CPU times. A
// process that cannot be read (it exited) makes its side's sample invalid
// rather than wrong.
func sampleCPU(serverPIDs, clientPIDs []int) cpuSample {
	var s cpuSample
	s.server, s.serverOK = sumTicks(serverPIDs)
	s.client, s.clientOK = sumTicks(clientPIDs)
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		s.host = parseProcStat(string(b))
	}
	return s
}

func sumTicks(pids []int) (int64, bool) {
	var sum int64
	for _, pid := range pids {
		t, err := procfs.CPUTicks(pid)
		if err != nil {
			return 0, false
		}
		sum += t
	}
	return sum, len(pids) > 0
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat: user nice system
// idle iowait irq softirq steal ...
func parseProcStat(s string) hostCPU {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[0] != "cpu" {
			continue
		}
		var v [8]int64
		var total int64
		for i := range v {
			n, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				return hostCPU{}
			}
			v[i] = n
			total += n
		}
		return hostCPU{system: v[2], irq: v[5] + v[6], busy: total - v[3] - v[4], ok: true}
	}
	return hostCPU{}
}

// CPU is where the CPU went between the moment every connection was up and
// the moment every client had finished its load, in seconds, and per
// measured request in µs. A side whose processes could not be read both
// times is left at zero.
type CPU struct {
	ServerSeconds        float64 `json:"server_s"`
	ServerUsPerRequest   float64 `json:"server_us_per_request"`
	ClientSeconds        float64 `json:"client_s"`
	ClientUsPerRequest   float64 `json:"client_us_per_request"`
	HostSystemSeconds    float64 `json:"host_system_s"`
	HostIRQSeconds       float64 `json:"host_irq_softirq_s"` // the network's kernel work lands here
	HostBusySeconds      float64 `json:"host_busy_s"`        // every CPU's non-idle time
	HostBusyUsPerRequest float64 `json:"host_busy_us_per_request"`
	HostCPUs             float64 `json:"host_cpus_busy"` // busy time / wall time: how many CPUs were kept busy
}

// cpuBetween turns two samples, wall seconds apart, into the report's CPU
// for requests measured replies.
func cpuBetween(a, b cpuSample, wall float64, requests int64) CPU {
	var c CPU
	per := func(sec float64) float64 {
		if requests <= 0 {
			return 0
		}
		return sec * 1e6 / float64(requests)
	}
	if a.serverOK && b.serverOK {
		c.ServerSeconds = float64(b.server-a.server) / userHZ
		c.ServerUsPerRequest = per(c.ServerSeconds)
	}
	if a.clientOK && b.clientOK {
		c.ClientSeconds = float64(b.client-a.client) / userHZ
		c.ClientUsPerRequest = per(c.ClientSeconds)
	}
	if a.host.ok && b.host.ok {
		c.HostSystemSeconds = float64(b.host.system-a.host.system) / userHZ
		c.HostIRQSeconds = float64(b.host.irq-a.host.irq) / userHZ
		c.HostBusySeconds = float64(b.host.busy-a.host.busy) / userHZ
		c.HostBusyUsPerRequest = per(c.HostBusySeconds)
		if wall > 0 {
			c.HostCPUs = c.HostBusySeconds / wall
		}
	}
	return c
}
