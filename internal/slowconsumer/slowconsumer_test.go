package slowconsumer

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

// startRedis runs redis-server on a free port and returns its address and
// PID; the test's cleanup kills that PID.
func startRedis(t *testing.T) (string, int) {
	t.Helper()
	path := redistest.Binary(t, "redis-server") // skips, or fails under SHOAL_REQUIRE_REDIS=1
	port := redistest.FreePort(t)
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // this PID only
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if !redistest.WaitPing(addr, 5*time.Second) {
		t.Fatalf("redis-server on %s did not answer PING", addr)
	}
	return addr, cmd.Process.Pid
}

func TestRedisClosesASlowSubscriberOverItsLimit(t *testing.T) {
	addr, pid := startRedis(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := newRespConn(c).do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 4mb 2mb 60"); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Addr: addr, PID: pid, Subscribers: 1, Settle: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	const limit = 4 << 20
	if res.PubsubLimit != limit {
		t.Errorf("PubsubLimit = %d, want the %d just set", res.PubsubLimit, limit)
	}
	if res.Closed != 1 || len(res.ClosedAtBytes) != 1 {
		t.Fatalf("Closed = %d, ClosedAtBytes = %v; want the one subscriber closed", res.Closed, res.ClosedAtBytes)
	}
	// Closed once the server's buffer passed the limit, with the kernel's
	// socket buffers holding a few MiB more at most.
	if at := res.ClosedAtBytes[0]; at < limit || at > DefaultLimitMultiple*limit {
		t.Errorf("closed after %d bytes published, want between %d and %d", at, limit, DefaultLimitMultiple*limit)
	}
	if res.PeakRSS <= res.BaselineRSS {
		t.Errorf("PeakRSS %d not above BaselineRSS %d", res.PeakRSS, res.BaselineRSS)
	}
	if res.PublishedBytes >= DefaultLimitMultiple*limit {
		t.Errorf("published %d bytes: the publisher did not stop when every subscriber was gone", res.PublishedBytes)
	}
}

func TestRunRefusesIncompleteOptions(t *testing.T) {
	for _, o := range []Options{
		{PID: 1},
		{Addr: "127.0.0.1:1"},
		{Addr: "127.0.0.1:1", PID: 1, Subscribers: -1},
	} {
		if _, err := Run(context.Background(), o); err == nil {
			t.Errorf("Run(%+v): no error", o)
		}
	}
}

func TestParsePubsubHardLimit(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   int64
		ok     bool
	}{
		{"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", 33554432, true},
		{"pubsub 0 0 0", 0, true},
		{"normal 0 0 0", 0, false},
		{"pubsub x 0 0", 0, false},
	} {
		got, err := parsePubsubHardLimit(tc.config)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parsePubsubHardLimit(%q) = %d, %v; want %d, ok %v", tc.config, got, err, tc.want, tc.ok)
		}
	}
}
