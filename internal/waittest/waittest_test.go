package waittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	Until(t, 10*time.Second, "the third call", func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Fatalf("cond called %d times, want 3", calls)
	}
}

// TestUntilFailsNamingWhatItWaitedFor runs itself again in a child, where
// the condition never holds: the child fails, and says what it waited for.
func TestUntilFailsNamingWhatItWaitedFor(t *testing.T) {
	if os.Getenv("WAITTEST_CHILD") == "1" {
		Until(t, 50*time.Millisecond, "a condition that never holds", func() bool { return false })
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestUntilFailsNamingWhatItWaitedFor$")
	cmd.Env = append(os.Environ(), "WAITTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "timed out after 50ms waiting for a condition that never holds") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
