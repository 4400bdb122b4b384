package kv

import (
	"strings"
	"testing"

	"github.com/shoalkv/shoal/store"
)

// TestCommandTimingIsSampled: every command is counted, one in timedEvery
// (the first included) is timed, and the histogram holds exactly those.
func TestCommandTimingIsSampled(t *testing.T) {
	st := store.New(store.Options{})
	defer st.Close()
	h := New(st, Options{})
	defer h.Close()
	cl := &client{h: h, proto: 2, authed: true}
	cl.parser.Limits = &h.opts.Limits
	h.execute(cl, []byte(strings.Repeat("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 5*timedEvery+1)))
	tot := h.cmdStats.totals()[commands["get"].statsID]
	var inBuckets uint64
	for _, n := range tot.buckets {
		inBuckets += n
	}
	if tot.calls != 5*timedEvery+1 || tot.timed != 6 || inBuckets != 6 {
		t.Fatalf("calls %d timed %d in buckets %d; want %d, 6, 6", tot.calls, tot.timed, inBuckets, 5*timedEvery+1)
	}
}

// TestLatencyBuckets: bucket i holds durations up to 1024·2^i ns, the
// last one everything longer; percentiles report bucket upper bounds.
func TestLatencyBuckets(t *testing.T) {
	var c commandCounters
	for _, d := range []int64{0, 1, 1024, 1025, 2048, 2049, 1 << 40} {
		c.observe(d, true)
	}
	want := map[int]uint64{0: 3, 1: 2, 2: 1, latencyBuckets: 1}
	for i := range c.buckets {
		if got := c.buckets[i].Load(); got != want[i] {
			t.Errorf("bucket %d holds %d, want %d", i, got, want[i])
		}
	}
	var tot commandTotals
	tot.timed = 7
	for i := range c.buckets {
		tot.buckets[i] = c.buckets[i].Load()
	}
	if p := tot.percentileMicros(0.5); p != 2.048 {
		t.Errorf("p50 = %v µs, want 2.048", p)
	}
	if p := tot.percentileMicros(0.999); p != float64(bucketBound(latencyBuckets-1))/1e3 {
		t.Errorf("p99.9 = %v µs, want the last finite bound", p)
	}
}
