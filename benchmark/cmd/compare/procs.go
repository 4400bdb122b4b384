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
