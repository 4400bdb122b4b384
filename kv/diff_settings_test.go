package kv_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/shoaltest"
)

// Settings against redis-server: latency-tracking and
// latency-tracking-info-percentiles (the values, their canonical forms,
// the refusals, an empty Latencystats section while tracking is off), hz
// (clamped to 1..500, as Redis) and active-expire-effort.
func init() {
	diffCases["active-expiry"] = []step{
		c("CONFIG GET hz"), c("CONFIG GET active-expire-effort"), c("CONFIG SET hz 0"), c("CONFIG GET hz"),
		c("CONFIG SET hz 600"), c("CONFIG GET hz"), c("CONFIG SET hz -1"), c("CONFIG SET hz abc"), c("CONFIG SET hz 2147483648"),
		c("CONFIG SET hz 100"), c("CONFIG GET hz"), c("CONFIG SET active-expire-effort 0"), c("CONFIG SET active-expire-effort 11"),
		c("CONFIG SET active-expire-effort 10"), c("CONFIG GET active-expire-effort"),
		c("CONFIG SET active-expire-effort 1"), c("CONFIG SET hz 10"),
	}
	diffCases["latency-tracking"] = []step{
		c("CONFIG GET latency-tracking-info-percentiles"), c("CONFIG GET latency-tracking"),
		s(exact, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.0 100 0.5"), c("CONFIG GET latency-tracking-info-percentiles"),
		c("CONFIG SET latency-tracking-info-percentiles 101"), c("CONFIG SET latency-tracking-info-percentiles -1"),
		c("CONFIG SET latency-tracking-info-percentiles abc"), c("CONFIG SET latency-tracking-info-percentiles nan"),
		s(exact, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 x"), c("CONFIG GET latency-tracking-info-percentiles"),
		c("CONFIG SET latency-tracking-info-percentiles 1e1"), c("CONFIG GET latency-tracking-info-percentiles"),
		c("CONFIG SET latency-tracking-info-percentiles 1e400"), c("CONFIG SET latency-tracking-info-percentiles 1e-400"),
		c("CONFIG SET latency-tracking-info-percentiles inf"), c("CONFIG SET latency-tracking-info-percentiles 0x1p3"),
		c("CONFIG GET latency-tracking-info-percentiles"), c("CONFIG SET latency-tracking-info-percentiles 0x10"),
		c("CONFIG GET latency-tracking-info-percentiles"),
		s(exact, "CONFIG", "SET", "latency-tracking-info-percentiles", ""), c("CONFIG GET latency-tracking-info-percentiles"),
		// An odd number of arguments, and a parameter twice.
		c("CONFIG SET latency-tracking no maxmemory"), c("CONFIG SET latency-tracking no latency-tracking yes"),
		s(exact, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9"),
		c("CONFIG SET latency-tracking maybe"), c("CONFIG SET latency-tracking no"), c("CONFIG GET latency-tracking"),
		c("GET k"), c("INFO latencystats"), c("CONFIG SET latency-tracking yes"),
	}
}

// TestLatencyStatsFollowTheSettings: INFO latencystats reports the
// configured percentiles of each command, in Redis's format, and nothing
// while latency-tracking is off.
func TestLatencyStatsFollowTheSettings(t *testing.T) {
	srv := shoaltest.Start(t, shoaltest.Options{})
	c := shoaltest.Dial(t, srv.Addr)
	c.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.0 100 0.5")
	for range 64 { // one call in 16 is timed
		c.Do("GET", "k")
	}
	info := c.Do("INFO", "latencystats")
	line := regexp.MustCompile(`(?m)^latency_percentiles_usec_get:p50=[0-9]+\.[0-9]{3},p99=[0-9]+\.[0-9]{3},p100=[0-9]+\.[0-9]{3},p0\.5=[0-9]+\.[0-9]{3}\r$`)
	if !line.MatchString(info) {
		t.Fatalf("INFO latencystats lacks GET's four percentiles:\n%s", info)
	}
	c.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "")
	if info := c.Do("INFO", "latencystats"); !strings.Contains(info, "latency_percentiles_usec_get:\r\n") {
		t.Fatalf("with no percentiles INFO latencystats = %q, want GET's line empty", info)
	}
	c.Do("CONFIG", "SET", "latency-tracking", "no")
	if info := c.Do("INFO", "latencystats"); strings.Contains(info, "latency_percentiles") {
		t.Fatalf("with latency-tracking off INFO latencystats = %q, want the header only", info)
	}
}
