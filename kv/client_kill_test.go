package kv_test

import "testing"

// TestClientKillCountsAClientOnce: a client killed on another loop is gone
// at once for the killer, as Redis frees it at once: a second CLIENT KILL
// in the same transaction does not count it again, and CLIENT LIST and
// connected_clients no longer show it, though its loop may not have closed
// it yet. Before, the second kill counted it in about one try of six.
func TestClientKillCountsAClientOnce(t *testing.T) {
	s := startLoops(t, 2)
	c := dialRaw(t, s.addr)
	for try := range 50 {
		other := dialRaw(t, s.addr)
		other.Do("PING")
		c.Do("MULTI")
		c.Do("CLIENT", "KILL", "TYPE", "normal")
		c.Do("CLIENT", "KILL", "TYPE", "normal")
		c.Do("CLIENT", "LIST")
		got := c.Do("EXEC")
		want := "*3\r\n:1\r\n:0\r\n"
		if len(got) < len(want) || got[:len(want)] != want {
			t.Fatalf("try %d: EXEC %q, want the first kill to count 1 and the second 0", try, got)
		}
		if n := countLines(got[len(want):]); n != 1 {
			t.Fatalf("try %d: CLIENT LIST right after the kill lists %d clients, want only the killer: %q", try, n, got)
		}
	}
}

// countLines counts the '\n's of a CLIENT LIST bulk reply.
func countLines(bulk string) int {
	n := 0
	for i := 0; i < len(bulk); i++ {
		if bulk[i] == '\n' {
			n++
		}
	}
	return n - 2 // the bulk header's line and the CRLF after the bulk
}
