package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/redistest"
)

// TestRedisSampleConfigStarts: the redis.conf Debian's redis-server
// package installs (the sample configuration of 7.0 with Debian's paths)
// starts Shoal once daemonize is no: its bind list ("127.0.0.1 -::1"), its
// pidfile and logfile, and the directives Shoal takes only at the sample's
// values (config.inertParams). A different value of one of those is
// refused with the reason, at startup and by CONFIG SET.
func TestRedisSampleConfigStarts(t *testing.T) {
	sample, err := os.ReadFile("/etc/redis/redis.conf")
	if err != nil {
		if os.Getenv("SHOAL_REQUIRE_REDIS") != "" {
			t.Fatalf("SHOAL_REQUIRE_REDIS is set: %v", err)
		}
		t.Skipf("no sample configuration: %v", err)
	}
	dir := t.TempDir()
	port := freePort(t)
	conf := string(sample)
	for directive, value := range map[string]string{
		"daemonize": "no", "dir": dir, "pidfile": "shoal.pid", "logfile": "shoal.log", "port": strconv.Itoa(port),
	} {
		re := regexp.MustCompile(`(?m)^` + directive + ` .*$`)
		if !re.MatchString(conf) {
			t.Fatalf("the sample sets no %s", directive)
		}
		conf = re.ReplaceAllString(conf, directive+" "+value)
	}
	path := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shoalBin, path)
	stderr := new(logtest.Log)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if !redistest.WaitPing(addr, 10*time.Second) {
		log, _ := os.ReadFile(filepath.Join(dir, "shoal.log"))
		t.Fatalf("shoal did not start on the sample configuration; stderr:\n%s\nlog:\n%s", stderr, log)
	}
	pid, err := os.ReadFile(filepath.Join(dir, "shoal.pid"))
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("pidfile: %q %v, want %d", pid, err, cmd.Process.Pid)
	}
	// The optional ::1 is served where the host has IPv6 loopback, except on
	// the gnet engine, which serves one address and skips it with a warning.
	if l, err := net.Listen("tcp", "[::1]:0"); err == nil {
		l.Close()
		if os.Getenv("SHOAL_ENGINE") == "gnet" {
			if log, _ := os.ReadFile(filepath.Join(dir, "shoal.log")); !strings.Contains(string(log), "skipping an optional bind address") {
				t.Errorf("on gnet the optional ::1 was not skipped with a warning; log:\n%s", log)
			}
		} else if !redistest.WaitPing(net.JoinHostPort("::1", strconv.Itoa(port)), 5*time.Second) {
			t.Errorf("not listening on [::1]:%d, the sample's optional address", port)
		}
	}
	c := client(t, addr)
	for param, want := range map[string]string{"hz": "10", "lazyfree-lazy-user-del": "no", "daemonize": "no", "tcp-backlog": "511"} {
		if got := c.ConfigGet(t.Context(), param).Val()[param]; got != want {
			t.Errorf("CONFIG GET %s = %q, want %q", param, got, want)
		}
	}
	if err := c.ConfigSet(t.Context(), "tcp-backlog", "1024").Err(); err == nil || !strings.Contains(err.Error(), "somaxconn") {
		t.Errorf("CONFIG SET tcp-backlog 1024: %v, want the reason it is refused", err)
	}
	if err := c.ConfigSet(t.Context(), "hz", "100").Err(); err != nil {
		t.Errorf("CONFIG SET hz 100: %v", err)
	} else if got := c.ConfigGet(t.Context(), "hz").Val()["hz"]; got != "100" {
		t.Errorf("CONFIG GET hz after SET 100 = %q", got)
	}
	if err := c.ConfigSet(t.Context(), "lazyfree-lazy-user-del", "yes").Err(); err != nil {
		t.Errorf("CONFIG SET lazyfree-lazy-user-del yes: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	done <- nil
	if _, err := os.Stat(filepath.Join(dir, "shoal.pid")); !os.IsNotExist(err) {
		t.Errorf("the pidfile outlived the process: %v", err)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "shoal.log")); !strings.Contains(string(log), "ready to accept connections") {
		t.Errorf("logfile lacks the ready line:\n%s", log)
	}

	// As Debian ships it, daemonize yes: refused, with the line and why.
	out, err := runToExit(t, "--daemonize", "yes")
	if err == nil || !strings.Contains(out, "does not fork") {
		t.Errorf("--daemonize yes: %v, stderr %q", err, out)
	}
}
