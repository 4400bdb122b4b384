package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat times.
func clockTicks() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100 // USER_HZ on every Linux build in practice
}

// machineBusyTicks returns the busy clock ticks of all CPUs together from /proc/stat:
// user, nice, system, irq, softirq and steal (time the hypervisor gave to someone else).
func machineBusyTicks() (int64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: field %d %q", i, f[i])
		}
		busy += n
	}
	return busy, nil
}
