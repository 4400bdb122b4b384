package kv_test

import (
	"testing"
	"time"
)

// Keys do not expire while the clients' writes are paused (CLIENT PAUSE
// WRITE here; a FAILOVER's hold of writes is the same pause, cmd/shoal's
// TestFailoverHoldsExpiry): a key whose TTL ran out reads as missing but
// stays counted, actively expired by nothing and deleted by no read, until
// the pause ends, as redis-server keeps its data set static.
func TestPauseHoldsExpiryAsRedis(t *testing.T) {
	bothServers(t, 1, nil, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		out := []string{c.Do("SET", "a", "1", "PX", "100"), c.Do("SET", "b", "1", "PX", "100"), c.Do("SET", "keep", "1"),
			c.Do("CLIENT", "PAUSE", "60000", "WRITE")}
		// Past the TTLs and five active expiry cycles (hz 10).
		time.Sleep(600 * time.Millisecond)
		out = append(out, c.Do("GET", "a"), c.Do("EXISTS", "a", "b"), c.Do("DBSIZE"), c.Do("CLIENT", "UNPAUSE"))
		deadline := time.Now().Add(30 * time.Second)
		for c.Do("DBSIZE") != ":1\r\n" {
			if time.Now().After(deadline) {
				t.Fatalf("the expired keys are not deleted after the pause: DBSIZE %q", c.Do("DBSIZE"))
			}
			time.Sleep(20 * time.Millisecond)
		}
		return out
	})
}
