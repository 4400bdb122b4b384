// Package proc reads what the benchmark commands measure of other processes
// (CPU time and resident memory from /proc, Linux only) and finds the
// repository the commands build shoal from. compare, clientbench and rig
// share it.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// CPUTicks returns utime+stime of all of pid's threads in clock ticks
// (USER_HZ), /proc/PID/stat fields 14 and 15.
func CPUTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')' in %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name, want 13+", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return ut + st, nil
}

// RSS returns pid's resident set in bytes (VmRSS in /proc/PID/status).
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: VmRSS %q: %w", pid, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

// ModuleRoot returns the repository root, where ./cmd/shoal and
// ./cmd/shoal-load build: the directory of go.work (the workspace that ties
// the shoal module and the benchmark module together), or else the parent of
// the benchmark module's go.mod. cmd names the caller in the error.
func ModuleRoot(cmd string) (string, error) {
	for _, v := range []string{"GOWORK", "GOMOD"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			return "", fmt.Errorf("go env %s: %v", v, err)
		}
		path := strings.TrimSpace(string(out))
		if path == "" || path == os.DevNull || path == "off" {
			continue
		}
		dir := filepath.Dir(path)
		if v == "GOMOD" && filepath.Base(dir) == "benchmark" {
			dir = filepath.Dir(dir)
		}
		return dir, nil
	}
	return "", fmt.Errorf("run %s inside the shoal repository", cmd)
}
