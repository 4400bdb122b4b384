package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// server is a server process under test.
type server struct {
	name string
	addr string
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

var serverDescs = map[string]string{
	"shoal": "./cmd/shoal, default options (GOMAXPROCS event loops)",
	"redis": "redis-server 7 from the system, no persistence",
}

// startServer starts name ("shoal" with the binary at shoalBin, or "redis")
// on a free loopback port.
func startServer(name, shoalBin string) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var argv []string
	switch name {
	case "shoal":
		argv = []string{shoalBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--loglevel", "warning"}
	case "redis":
		argv = []string{"redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"}
	default:
		return nil, fmt.Errorf("unknown server %q (want shoal or redis)", name)
	}
	s := &server{name: name, addr: fmt.Sprintf("127.0.0.1:%d", port), log: &bytes.Buffer{}}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := waitPong(s.addr, 15*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s did not answer PING: %v; output: %.500s", name, err, s.log.String())
	}
	return s, nil
}

// stop sends SIGTERM to the server's PID, and SIGKILL after 10 s.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

func waitPong(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	err := fmt.Errorf("no answer")
	for time.Now().Before(deadline) {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			var line string
			if _, err = c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err == nil {
				line, err = bufio.NewReader(c).ReadString('\n')
			}
			c.Close()
			if err == nil && line == "+PONG\r\n" {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// selfCPU returns this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// buildShoal builds ./cmd/shoal from the repository root into a temporary
// directory.
func buildShoal(root string) (string, error) {
	dir, err := os.MkdirTemp("", "clientbench-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "shoal")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/shoal")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/shoal: %v\n%s", err, msg)
	}
	return out, nil
}
