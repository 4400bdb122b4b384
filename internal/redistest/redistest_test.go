package redistest

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestStartServerAnswersAndIsStoppedByPID(t *testing.T) {
	var addr string
	t.Run("start", func(t *testing.T) {
		addr = StartServer(t, "--databases", "1")
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("CONFIG GET databases\r\n"))
		buf := make([]byte, 64)
		n, _ := c.Read(buf)
		if !strings.Contains(string(buf[:n]), "databases\r\n$1\r\n1") {
			t.Fatalf("extra arguments not applied: %q", buf[:n])
		}
	})
	if addr == "" {
		t.Skip("redis-server not available")
	}
	if WaitPing(addr, 0) {
		t.Fatalf("redis-server on %s still answers after its test ended", addr)
	}
}

// TestMissingBinaryFailsWhenRequired runs this test binary again with an
// empty PATH: a missing tool must skip without SHOAL_REQUIRE_REDIS and fail
// with it.
func TestMissingBinaryFailsWhenRequired(t *testing.T) {
	if os.Getenv("REDISTEST_CHILD") == "1" {
		Binary(t, "redis-server")
		return
	}
	for _, tc := range []struct {
		require  string
		wantFail bool
	}{{"", false}, {"1", true}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMissingBinaryFailsWhenRequired$", "-test.v")
		cmd.Env = []string{"PATH=/nonexistent", "REDISTEST_CHILD=1", RequireEnv + "=" + tc.require}
		out, err := cmd.CombinedOutput()
		failed := err != nil
		if failed != tc.wantFail {
			t.Errorf("%s=%q: failed=%v, want %v\n%s", RequireEnv, tc.require, failed, tc.wantFail, out)
		}
		if !tc.wantFail && !strings.Contains(string(out), "SKIP") {
			t.Errorf("%s unset: want a skip\n%s", RequireEnv, out)
		}
	}
}

// TestFreePortNeverRepeats: ports taken before the servers that bind them
// start must all differ (the kernel happily offers a just-released port
// again, which made a three-port test collide).
func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 2000 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("FreePort returned %d twice", p)
		}
		seen[p] = true
	}
}
