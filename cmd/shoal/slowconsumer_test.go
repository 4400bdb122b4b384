package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/slowconsumer"
)

// TestStalledSubscribersCostTheirLimit is issue 29's "done when": N
// stalled subscribers (N = 1, 4, 16) with a fast publisher on the shoal
// binary with Redis's default pubsub limit (32mb 8mb 60). Each subscriber
// is closed at its class limit; the server's RSS grows by at most 1.25 ×
// N × the limit; 10 s after the subscribers are gone RSS is back within
// 20% of where it was; the publisher is never held up (a publisher
// blocked behind a subscriber would wait for good).
//
// CI runs it on both engines (SHOAL_ENGINE=gnet): gnet's outbound buffer
// is its own, and the gnet engine keeps a stalled peer's output out of it
// as the native engine keeps it out of its write buffer.
//
// The first round warms the process (its code pages and runtime
// structures are faulted in once, and stay): the rounds after it measure
// what a slow consumer costs, not what the first PUBLISH costs.
func TestStalledSubscribersCostTheirLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes ~100 MB per round and waits 10 s after each")
	}
	p := startBinary(t)
	const limit = 32 << 20
	run := func(n int, settle time.Duration) slowconsumer.Result {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		r, err := slowconsumer.Run(ctx, slowconsumer.Options{Addr: p.addr(), PID: p.cmd.Process.Pid, Subscribers: n, Settle: settle})
		if err == slowconsumer.ErrUnsupported {
			t.Skip(err)
		}
		if err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		return r
	}
	run(1, 10*time.Second) // warm-up
	for _, n := range []int{1, 4, 16} {
		r := run(n, 10*time.Second)
		mib := func(b int64) float64 { return float64(b) / (1 << 20) }
		t.Logf("N=%d: RSS %.1f → peak %.1f → %.1f MiB 10 s after; %.1f MiB per subscriber; closed %d/%d at %.1f MiB published (mean); PUBLISH at most %v",
			n, mib(r.BaselineRSS), mib(r.PeakRSS), mib(r.AfterRSS), mib(r.GrowthPerSubscriber()), r.Closed, n, mib(r.MeanClosedAtBytes()), r.PublishMaxLatency)
		if r.PubsubLimit != limit {
			t.Fatalf("the server reports a pubsub hard limit of %d, want Redis's default %d", r.PubsubLimit, limit)
		}
		if r.Closed != n {
			t.Errorf("N=%d: the server closed %d of the stalled subscribers", n, r.Closed)
		}
		// A hang detector, not a speed target: a publisher blocked behind a
		// subscriber would wait for good, while on a loaded machine under
		// -race one PUBLISH to 16 subscribers took 5 s (quiet: 50-600 ms).
		if r.PublishMaxLatency > 30*time.Second {
			t.Errorf("N=%d: a PUBLISH took %v: the publisher was held up", n, r.PublishMaxLatency)
		}
		if grew := r.PeakRSS - r.BaselineRSS; float64(grew) > 1.25*float64(n)*limit {
			t.Errorf("N=%d: RSS grew %.1f MiB, over 1.25 × N × the %d MiB limit (%.1f MiB)", n, mib(grew), limit>>20, 1.25*float64(n)*mib(limit))
		}
		if float64(r.AfterRSS) > 1.2*float64(r.BaselineRSS) {
			t.Errorf("N=%d: RSS %.1f MiB 10 s after the subscribers left, more than 20%% over the %.1f MiB before", n, mib(r.AfterRSS), mib(r.BaselineRSS))
		}
	}
	if log := p.stderr.String(); !strings.Contains(log, "class=pubsub") {
		t.Errorf("the closes are not logged with the client's class:\n%s", log)
	}
}
