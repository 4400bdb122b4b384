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

	"github.com/shoalkv/shoal/benchmark/internal/proc"
)

// server is one server under test: a name for the table and its command line
// on a port, with a working directory of its own.
type server struct {
	name string
	argv func(port int, dir string) []string
}

func shoalServer(path string) server {
	return server{name: "shoal", argv: func(port int, dir string) []string {
		return []string{path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--loglevel", "warning", "--dir", dir}
	}}
}

func redisServer(path string) server {
	return server{name: "redis", argv: func(port int, dir string) []string {
		return []string{path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--loglevel", "warning", "--dir", dir}
	}}
}

// running is a started server.
type running struct {
	addr string
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan struct{} // closed when cmd.Wait returns
}

func (r *running) pid() int { return r.cmd.Process.Pid }

// start runs s on a free loopback port and waits for it to answer PING,
// trying another port if the first was taken meanwhile.
func start(s server, dir string) (*running, error) {
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		argv := s.argv(port, dir)
		r := &running{addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: exec.Command(argv[0], argv[1:]...),
			log: &bytes.Buffer{}, done: make(chan struct{})}
		r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
		if err := r.cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", s.name, err)
		}
		go func() { _ = r.cmd.Wait(); close(r.done) }()
		if waitPing(r.addr, 10*time.Second) {
			return r, nil
		}
		r.stop()
		lastErr = fmt.Errorf("%s on %s did not answer PING; output: %.500s", s.name, r.addr, r.log.String())
	}
	return nil, lastErr
}

// stop sends SIGTERM to the server's PID, and SIGKILL if it has not exited
// 5 s later.
func (r *running) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// buildShoal builds ./cmd/shoal of this repository into dir.
func buildShoal(dir string) (string, error) {
	root, err := proc.ModuleRoot("slowconsumers")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "shoal")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/shoal")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/shoal in %s: %w", root, err)
	}
	return out, nil
}

// waitPing reports whether addr answers PING with PONG within the time given.
func waitPing(addr string, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			continue
		}
		_ = c.SetDeadline(time.Now().Add(time.Second))
		_, err = c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
		var line string
		if err == nil {
			line, err = bufio.NewReader(c).ReadString('\n')
		}
		c.Close()
		if err == nil && line == "+PONG\r\n" {
			return true
		}
	}
	return false
}
