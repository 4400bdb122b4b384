// Package redistest starts the real Redis tools the tests compare Shoal
// with: redis-server as the differential reference, redis-cli and
// redis-benchmark as clients. One place decides what a missing tool means:
// a skip on a developer's machine, a failure when SHOAL_REQUIRE_REDIS=1 (CI
// sets it, so the differential suite can never be skipped silently there).
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireEnv names the environment variable that turns a missing tool from
// a skip into a failure.
const RequireEnv = "SHOAL_REQUIRE_REDIS"

// Binary returns the path of a Redis tool found on PATH ("redis-server",
// "redis-cli", "redis-benchmark"). If it is missing the test is skipped,
// or fails when SHOAL_REQUIRE_REDIS=1.
func Binary(t testing.TB, name string) string {
	t.Helper()
	return Tool(t, name, RequireEnv, "install redis-server and redis-tools")
}

// Tool returns the path of a program a test runs (curl, promtool, a Redis
// tool) found on PATH. If it is missing the test is skipped, or fails when
// the environment variable require is 1; install says how to get it.
func Tool(t testing.TB, name, require, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(require) == "1" {
		t.Fatalf("%s not found (%v) and %s=1: %s", name, err, require, install)
	}
	t.Skipf("%s not found: %v (%s; set %s=1 to make this a failure)", name, err, install, require)
	return ""
}

// CheckRDB runs redis-check-rdb on the snapshot at path and fails the test
// unless it says "RDB looks OK".
func CheckRDB(t testing.TB, path string) {
	t.Helper()
	out, err := exec.Command(Binary(t, "redis-check-rdb"), path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb %s: %v\n%s", path, err, out)
	}
}

// FreePort asks the kernel for an unused loopback TCP port, never one it
// has returned before in this test process: a port is free only until
// someone binds it, so a test that takes two or three ports before starting
// the servers that bind them (a RESP port and the HTTP and frame fronts'
// ports, say) must not be handed the same one twice.
func FreePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !portsGiven[port] {
			portsGiven[port] = true
			return port
		}
	}
	t.Fatal("redistest: the kernel kept offering ports already handed out")
	return 0
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// StartServer runs a throwaway redis-server on a free loopback port, without
// persistence, with extra arguments appended, and returns its address once
// it answers PING. The server is killed by its PID when the test ends.
func StartServer(t testing.TB, extra ...string) string {
	t.Helper()
	path := Binary(t, "redis-server")
	for attempt := 0; attempt < 3; attempt++ { // the free port may be taken meanwhile
		port := FreePort(t)
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
			"--dir", t.TempDir()}, extra...)
		cmd := exec.Command(path, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if WaitPing(addr, 5*time.Second) {
			t.Cleanup(func() {
				_ = cmd.Process.Kill() // this PID only
				_ = cmd.Wait()
			})
			return addr
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Fatal("redis-server did not start")
	return ""
}

// WaitPing reports whether addr answers an inline PING within the time
// given (any reply counts, NOAUTH too, except -LOADING: a server still
// loading its data set answers every command so, and a test that goes on
// then reads LOADING where it expects the data — CI failed so once on a
// redis-server restarted with an append-only file).
func WaitPing(addr string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte("PING\r\n"))
			line, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err == nil && len(line) > 0 && !strings.HasPrefix(line, "-LOADING") {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
