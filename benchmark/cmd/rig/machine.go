package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// describeMachine says where the figures were taken: CPUs, kernel, Go, redis-server,
// the date and the load average when the report was written.
func describeMachine() string {
	model, kernel, load, redis := "?", runtime.GOOS, "?", "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if v, ok := strings.CutPrefix(f, "v="); ok {
				redis = v
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %s, %s, redis-server %s; %s; load average %s",
		runtime.NumCPU(), model, kernel, runtime.Version(), redis, time.Now().UTC().Format("2006-01-02 15:04 MST"), load)
}
