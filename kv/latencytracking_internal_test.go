package kv

import "testing"

// TestHistogramsKeepStillWhileTrackingIsOff: a timed call counts toward
// commandstats either way, but reaches the histogram only while
// latency-tracking is on.
func TestHistogramsKeepStillWhileTrackingIsOff(t *testing.T) {
	var c commandCounters
	c.observe(3000, true)
	c.observe(3000, false)
	c.observe(1<<20, false)
	var inBuckets uint64
	for i := range c.buckets {
		inBuckets += c.buckets[i].Load()
	}
	if c.timed.Load() != 3 || inBuckets != 1 || c.buckets[2].Load() != 1 {
		t.Fatalf("timed %d, in buckets %d (bucket 2: %d); want 3, 1, 1", c.timed.Load(), inBuckets, c.buckets[2].Load())
	}
	var tot commandTotals
	for i := range c.buckets {
		tot.buckets[i] = c.buckets[i].Load()
	}
	tot.timed = 3
	if p := tot.percentileMicros(0.999); p != 4.096 {
		t.Fatalf("p99.9 = %v µs, want 4.096: the percentiles rank within the histogram, not all timed calls", p)
	}
}
