// Package waittest waits in tests for what happens elsewhere: a server's
// goroutines, another process, the kernel.
package waittest

import (
	"testing"
	"time"
)

// Until calls cond every few milliseconds until it returns true, and fails
// the test, naming what it waited for, if within passes first.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
