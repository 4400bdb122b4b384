package main

import (
	"os"
	"strconv"
	"strings"
)

// softnetDrops sums the packets the kernel dropped because a CPU's input backlog
// (net.core.netdev_max_backlog) was full: the second column of /proc/net/softnet_stat.
// Container traffic crosses veth pairs through that backlog, and a drop costs the TCP
// connection a retransmission timeout, which shows as seconds of latency. It returns -1
// when the file cannot be read.
func softnetDrops() int64 {
	b, err := os.ReadFile("/proc/net/softnet_stat")
	if err != nil {
		return -1
	}
	return parseSoftnetDrops(string(b))
}

func parseSoftnetDrops(s string) int64 {
	var sum int64
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseUint(f[1], 16, 32)
		if err != nil {
			return -1
		}
		sum += int64(n)
	}
	return sum
}

// netdevMaxBacklog reads net.core.netdev_max_backlog; 0 when it cannot.
func netdevMaxBacklog() int {
	b, err := os.ReadFile("/proc/sys/net/core/netdev_max_backlog")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}
