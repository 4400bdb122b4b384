package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Spec says how to start one server under test on a loopback port.
type Spec struct {
	Name string                  // short name for tables and charts
	Desc string                  // one line for the report
	Argv func(port int) []string // the command line, listening on 127.0.0.1:port
}

// ShoalArgv is the command line of the shoal binary bin on port without
// snapshots (as RedisArgv: the default save policy would BGSAVE in the
// middle of a measurement), quiet but for warnings, followed by extra options.
func ShoalArgv(bin string, port int, extra ...string) []string {
	return append([]string{bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--loglevel", "warning"}, extra...)
}

// RedisArgv is the command line of redis-server bin on port without
// persistence, quiet but for warnings, followed by extra options.
func RedisArgv(bin string, port int, extra ...string) []string {
	return append([]string{bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"}, extra...)
}

// Server is a started server. Log collects its standard output and error.
type Server struct {
	Spec Spec
	Port int
	Addr string // 127.0.0.1:Port
	Cmd  *exec.Cmd
	Log  *bytes.Buffer
	done chan struct{} // closed when Cmd.Wait returns
}

// Start runs spec on a free loopback port and waits for it to answer PING,
// trying another port if the first was taken meanwhile.
func Start(spec Spec) (*Server, error) {
	var lastErr error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		argv := spec.Argv(port)
		s := &Server{Spec: spec, Port: port, Addr: fmt.Sprintf("127.0.0.1:%d", port), Cmd: exec.Command(argv[0], argv[1:]...),
			Log: &bytes.Buffer{}, done: make(chan struct{})}
		s.Cmd.Stdout, s.Cmd.Stderr = s.Log, s.Log
		if err := s.Cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
		go func() { _ = s.Cmd.Wait(); close(s.done) }()
		err = WaitPong(s.Addr, 15*time.Second)
		if err == nil {
			return s, nil
		}
		s.Stop()
		lastErr = fmt.Errorf("%s (%s) did not answer PING: %v; output: %.500s", spec.Name, strings.Join(argv, " "), err, s.Log.String())
	}
	return nil, lastErr
}

// PID is the server's process ID.
func (s *Server) PID() int { return s.Cmd.Process.Pid }

// Stop sends SIGTERM to the server, and SIGKILL if it has not exited 10 s
// later. It returns once the process is gone; calling it again does nothing.
func (s *Server) Stop() {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-s.done
	}
}

// WaitPong waits until addr answers PING with PONG, for at most limit. The
// error is the last failure seen.
func WaitPong(addr string, limit time.Duration) error {
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
			if err == nil {
				err = fmt.Errorf("reply %q", line)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
