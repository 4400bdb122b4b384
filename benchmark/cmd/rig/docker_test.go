package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

// needDocker skips the test when docker cannot run the rig here, or fails it when
// SHOAL_REQUIRE_DOCKER=1 (set by .ci/run when `docker info` works).
func needDocker(t *testing.T) {
	t.Helper()
	err := dockerUsable()
	if err == nil {
		_, err = findCompose()
	}
	if err == nil {
		return
	}
	if os.Getenv("SHOAL_REQUIRE_DOCKER") == "1" {
		t.Fatalf("docker is required (SHOAL_REQUIRE_DOCKER=1) but not usable: %v", err)
	}
	t.Skipf("docker not usable (set SHOAL_REQUIRE_DOCKER=1 to make this a failure): %v", err)
}

func assertNothingLeft(t *testing.T, project string) {
	t.Helper()
	left, err := leftovers(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left behind by project %s: %v", project, left)
		_ = sweep(context.Background(), project)
	}
	// Also by name, whatever the labels say.
	for _, args := range [][]string{
		{"ps", "-a", "--format", "{{.Names}}"},
		{"network", "ls", "--format", "{{.Name}}"},
		{"images", "--format", "{{.Repository}}"},
	} {
		out, err := exec.Command("docker", args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range strings.Fields(string(out)) {
			if strings.HasPrefix(name, project) {
				t.Errorf("docker %s still lists %s", args[0], name)
			}
		}
	}
}

// A small rig against shoal with redis-server beside it: two server replicas, two
// clients, every connection held and loaded, the report complete, nothing left.
func TestTinyRigReports(t *testing.T) {
	needDocker(t)
	redistest.Binary(t, "redis-server")
	project := fmt.Sprintf("shoalrig-test-%d", os.Getpid())
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "rig.json")
	var stdout, stderr bytes.Buffer
	// 400 connections × 2 requests: 400 req/s for 2 s.
	code, err := mainErr([]string{"-conns", "400", "-duration", "2s", "-rate", "400", "-servers", "2", "-clients", "2",
		"-peer", "redis", "-project", project, "-json", jsonFile, "-out", dir}, &stdout, &stderr)
	assertNothingLeft(t, project)
	if code != 0 || err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr.String())
	}
	var raw map[string]any
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"target", "connected", "errors", "errors_by_kind", "connect_seconds", "servers", "clients",
		"mode", "server_rss_bytes", "server_rss_bytes_per_conn", "throughput_rps", "latency_us", "timeline", "peer", "cpu"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Report{&rep, rep.Peer} {
		if x == nil {
			t.Fatal("no peer report")
		}
		l := x.LatencyUs
		if x.Target != 400 || x.Connected != 400 || x.Errors != 0 || x.Silent != 0 || x.Servers != 2 || x.Clients != 2 ||
			x.Mode != "replicas" || x.ConnectSeconds <= 0 || x.ServerRSSBytes <= x.ServerRSSIdleBytes || x.ServerRSSBytesPerConn <= 0 ||
			!(l.P50 > 0 && l.P50 <= l.P99 && l.P99 <= l.Max) {
			t.Errorf("%s: %+v", x.Server, *x)
		}
		// The host was busy during the load, and nothing was charged negative time.
		if c := x.CPU; c.HostBusySeconds <= 0 || c.HostCPUs <= 0 || c.ServerSeconds < 0 || c.ClientSeconds < 0 || c.HostIRQSeconds < 0 {
			t.Errorf("%s: CPU %+v", x.Server, c)
		}
		// Every connection carried its two requests (give or take the edges of the interval).
		if x.Requests < 700 || x.Requests > 900 {
			t.Errorf("%s: %d requests, want about 800", x.Server, x.Requests)
		}
		phases := map[string]bool{}
		for _, p := range x.Timeline {
			phases[p.Phase] = true
		}
		if !phases["ready"] || !phases["load"] {
			t.Errorf("%s: timeline phases %v lack ready or load", x.Server, phases)
		}
	}
	if rep.Server != "shoal" || rep.Peer.Server != "redis" {
		t.Errorf("servers %q and %q", rep.Server, rep.Peer.Server)
	}
	if !strings.Contains(stdout.String(), "shoal: 400/400 connected, 0 errors") || !strings.Contains(stdout.String(), "redis-server: 400/400 connected") {
		t.Errorf("summary:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "load ") || !strings.Contains(stderr.String(), "connections 400") {
		t.Errorf("no progress line in:\n%s", stderr.String())
	}
	png, err := os.ReadFile(filepath.Join(dir, "report.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("report.png: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !bytes.Contains(md, []byte("| | shoal | redis-server |")) {
		t.Errorf("report.md: %v\n%s", err, md)
	}
}

// Ctrl-C in the middle of the load: the driver tears down and nothing of its project is
// left: no container, network or image.
func TestInterruptedRigLeavesNothing(t *testing.T) {
	needDocker(t)
	bin := filepath.Join(t.TempDir(), "rig")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the driver: %v\n%s", err, out)
	}
	project := fmt.Sprintf("shoalrig-int-%d", os.Getpid())
	// A load long enough that only the interrupt can end it within the test.
	cmd := exec.Command(bin, "-conns", "300", "-duration", "10m", "-rate", "300", "-servers", "2", "-clients", "1", "-project", project)
	cmd.Dir = "../../.."
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		assertNothingLeft(t, project)
	}()
	log := &progressLog{start: time.Now()}
	loading := make(chan bool, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			log.add(sc.Text())
			if !sent && strings.HasPrefix(sc.Text(), "load ") {
				loading <- true
				sent = true
			}
		}
		close(loading)
	}()
	// Before its first load line the driver compiles shoal and the rig client static,
	// builds the images and runs docker-compose three times: over a minute on a loaded
	// 2-core machine when the build cache is cold, most of it compiling, none of it what
	// this test is about. So it waits for that line, the driver's own signal that the
	// load runs, or for the driver to end; only the test's deadline bounds the wait,
	// less the time the teardown may take.
	select {
	case ok := <-loading:
		if !ok {
			t.Fatalf("the driver ended before the load:\n%s", log)
		}
	case <-time.After(timeLeft(t, teardownBound)):
		t.Fatalf("no load yet, and the test's deadline is near:\n%s", log)
	}
	// Containers of the project exist now.
	if out, _ := exec.Command("docker", "ps", "-q", "--filter", "label=com.docker.compose.project="+project).Output(); len(bytes.Fields(out)) != 3 {
		t.Errorf("%d containers running mid-load, want 3 (2 servers, 1 client)", len(bytes.Fields(out)))
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { <-scanned; done <- cmd.Wait() }() // Wait only once stderr is read to its end
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !asExit(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("exit after SIGINT: %v, want status 130", err)
		}
	case <-time.After(teardownBound):
		t.Fatalf("the driver did not exit within %v of SIGINT:\n%s", teardownBound, log)
	}
	if !strings.Contains(log.String(), "tearing down project "+project) {
		t.Errorf("no teardown in:\n%s", log)
	}
}

// teardownBound is how long the driver may take to exit after SIGINT: its teardown's own
// bound (docker.teardown), and a minute for the commands cut short before it.
const teardownBound = 3*time.Minute + time.Minute

// timeLeft is the time until t's deadline less reserve, or 15 minutes without one.
func timeLeft(t *testing.T, reserve time.Duration) time.Duration {
	deadline, ok := t.Deadline()
	if !ok {
		return 15 * time.Minute
	}
	return max(time.Until(deadline)-reserve, 0)
}

// progressLog is the driver's stderr, each line with the seconds since start: when a
// wait fails, it shows which step took the time.
type progressLog struct {
	start time.Time
	mu    sync.Mutex
	b     strings.Builder
}

func (l *progressLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, "%6.1fs %s\n", time.Since(l.start).Seconds(), line)
}

func (l *progressLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}
