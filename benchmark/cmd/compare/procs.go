package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serverSpec says how to start one server under test on a port.
type serverSpec struct {
	name string // short name used in tables and charts
	desc string // one line for the report
	argv func(port int) []string
}

// serverProc is a running server.
type serverProc struct {
	spec serverSpec
	addr string
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

func startServer(spec serverSpec, port int) (*serverProc, error) {
	argv := spec.argv(port)
	cmd := exec.Command(argv[0], argv[1:]...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.name, err)
	}
	p := &serverProc{spec: spec, addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, log: &log}
	if err := waitPong(p.addr, 15*time.Second); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s (%s) did not answer PING: %v; output: %.500s", spec.name, strings.Join(argv, " "), err, log.String())
	}
	return p, nil
}

func (p *serverProc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM, and SIGKILL if the server has not exited after 10 s.
func (p *serverProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

func waitPong(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var err error
	for time.Now().Before(deadline) {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			var line string
			if _, err = c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err == nil {
				line, err = bufio.NewReader(c).ReadString('\n')
			}
			c.Close()
			if err == nil && line == "+PONG\r\n" {
				return nil
			}
			if err == nil {
				err = fmt.Errorf("reply %q", line)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cpuTicks returns utime+stime of every thread of pid, in clock ticks (/proc/PID/stat
// fields 14 and 15).
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after it follow the last ')'.
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

// rssBytes returns VmRSS from /proc/PID/status.
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

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
