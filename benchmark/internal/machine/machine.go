// Package machine describes the machine benchmark figures were taken on, for
// the reports of the benchmark commands.
package machine

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Info is where and when figures were taken. Fields Linux does not tell
// (elsewhere, or without redis-server) are empty.
type Info struct {
	Date        string `json:"date"`
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpu_model"`
	Kernel      string `json:"kernel"`
	GoVersion   string `json:"go_version"`
	Redis       string `json:"redis_version"`
	LoadAverage string `json:"load_average_at_start"`
}

// Describe reads the machine now: /proc for the kernel, CPU model and load
// average, redis-server --version for Redis.
func Describe() Info {
	m := Info{Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	} else {
		m.Kernel = runtime.GOOS
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAverage = strings.Join(f[:3], " ")
		}
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if v, ok := strings.CutPrefix(f, "v="); ok {
				m.Redis = v
			}
		}
	}
	return m
}

// String is m in one line for a report.
func (m Info) String() string {
	return fmt.Sprintf("%d CPUs (%s), %s, %s, redis-server %s; date %s; load average at start %s",
		m.CPUs, m.CPUModel, m.Kernel, m.GoVersion, m.Redis, m.Date, m.LoadAverage)
}
