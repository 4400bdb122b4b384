package kv_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

// idleClientEnv makes the test binary act as the idle-client process of
// BenchmarkIdleClientMemory: "addr count". The clients must live in another
// process, since 10,000 of them plus the server's 10,000 descriptors would
// pass one process's descriptor limit.
const idleClientEnv = "SHOAL_IDLE_CLIENTS"

// TestMain lets the test binary double as the idle-client process.
func TestMain(m *testing.M) {
	if spec := os.Getenv(idleClientEnv); spec != "" {
		if err := runIdleClients(spec, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stdout, "error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runIdleClients opens count connections to addr, sends PING on each and
// reads the +PONG, prints "ready", and keeps them open until stdin closes.
func runIdleClients(spec string, stdin io.Reader, stdout io.Writer) error {
	addr, countText, _ := strings.Cut(spec, " ")
	count, err := strconv.Atoi(countText)
	if err != nil {
		return fmt.Errorf("%s %q: want \"addr count\"", idleClientEnv, spec)
	}
	conns := make([]net.Conn, 0, count)
	var reply [7]byte
	for i := 0; i < count; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return fmt.Errorf("connection %d of %d: %w", i+1, count, err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
			return fmt.Errorf("connection %d: %w", i+1, err)
		}
		if _, err := io.ReadFull(c, reply[:]); err != nil || string(reply[:]) != "+PONG\r\n" {
			return fmt.Errorf("connection %d: reply %q, %v", i+1, reply, err)
		}
	}
	fmt.Fprintln(stdout, "ready")
	_, _ = io.Copy(io.Discard, stdin)
	for _, c := range conns {
		c.Close()
	}
	return nil
}

// idleConns is how many idle clients BenchmarkIdleClientMemory opens;
// SHOAL_IDLE_CONNS overrides it.
func idleConns() int {
	if n, err := strconv.Atoi(os.Getenv("SHOAL_IDLE_CONNS")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// BenchmarkIdleClientMemory measures what one idle client costs the whole
// server process: the shoal binary and redis-server 7 each get count
// connections (from a child process, one server at a time) that sent one
// PING and read the PONG, and the server's VmRSS growth is divided by
// count, 0.5 s after the last PONG and again 3 s later. It runs once per
// call whatever b.N; use -benchtime 1x:
//
//	go test -run '^$' -bench IdleClientMemory -benchtime 1x ./kv/
func BenchmarkIdleClientMemory(b *testing.B) {
	redisServerPath := redistest.Binary(b, "redis-server")
	count := idleConns()
	b.Run("shoal", func(b *testing.B) {
		b.StopTimer() // the timer covers only connecting the clients
		bin := filepath.Join(b.TempDir(), "shoal")
		build := exec.Command("go", "build", "-o", bin, "../cmd/shoal")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("building shoal: %v\n%s", err, out)
		}
		port := freePort(b)
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--maxclients", "20000", "--loglevel", "warning")
		measureIdleClients(b, cmd, port, count)
	})
	b.Run("redis", func(b *testing.B) {
		port := freePort(b)
		cmd := exec.Command(redisServerPath, "--save", "", "--appendonly", "no", "--port", strconv.Itoa(port),
			"--bind", "127.0.0.1", "--maxclients", "20000", "--daemonize", "no")
		cmd.Dir = b.TempDir()
		measureIdleClients(b, cmd, port, count)
	})
}

// measureIdleClients starts server, connects count idle clients from a
// child process, and reports the server's RSS growth per client. It stops
// both processes by PID before returning.
func measureIdleClients(b *testing.B, server *exec.Cmd, port, count int) {
	b.StopTimer()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := server.Start(); err != nil {
		b.Fatal(err)
	}
	pid := server.Process.Pid
	defer func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = server.Wait()
	}()
	if !waitPing(addr, 10*time.Second) {
		b.Fatalf("server on %s did not answer PING", addr)
	}
	time.Sleep(200 * time.Millisecond) // let start-up allocation settle
	before := vmRSS(b, pid)

	child := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	child.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", idleClientEnv, addr, count))
	stdin, err := child.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	child.Stderr = os.Stderr
	b.StartTimer()
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = child.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	b.StopTimer()
	if strings.TrimSpace(line) != "ready" {
		b.Fatalf("idle clients: %q %v", line, err)
	}
	time.Sleep(500 * time.Millisecond) // let the server finish its accept work
	atConnect := vmRSS(b, pid)
	// Redis trims the query buffers of clients idle for 2 s in its
	// clientsCron; measure again once that has had time to run.
	time.Sleep(3 * time.Second)
	idle := vmRSS(b, pid)
	b.ReportMetric(float64(atConnect-before)/float64(count), "rss-bytes/conn-0.5s")
	b.ReportMetric(float64(idle-before)/float64(count), "rss-bytes/conn-3.5s")
	b.ReportMetric(float64(idle)/(1<<20), "rss-MiB")
}

// vmRSS returns a process's resident set size in bytes from /proc.
func vmRSS(b *testing.B, pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc status")
	return 0
}
