package slowconsumer

import "time"

// Result is what one Run measured. RSS values are the server's VmRSS in bytes.
type Result struct {
	// Subscribers is how many slow subscribers were opened.
	Subscribers int
	// MessageSize is the payload of each PUBLISH in bytes.
	MessageSize int
	// PubsubLimit is the pubsub hard limit the server reported (0: none, or
	// it did not say).
	PubsubLimit int64
	// BaselineRSS is read before any subscriber connects; PeakRSS is the
	// largest sample from then until AfterRSS, which is read Settle after
	// the subscribers were closed client-side.
	BaselineRSS, PeakRSS, AfterRSS int64
	// Closed is how many subscribers the server closed (or unsubscribed)
	// while they were not reading.
	Closed int
	// ClosedAtBytes holds, per closed subscriber in the order seen, the
	// payload bytes the server had acknowledged publishing when the close
	// was observed: about what that subscriber had pending, in the server's
	// buffers and the kernel's socket buffers together.
	ClosedAtBytes []int64
	// ClosedAfter holds, in the same order, when each close was observed,
	// measured from the first PUBLISH.
	ClosedAfter []time.Duration
	// PublishedBytes is the payload bytes the server acknowledged publishing.
	PublishedBytes int64
	// PublishMaxLatency is the longest time from starting to write one
	// PUBLISH to reading its reply: a server that blocks its publisher on a
	// slow subscriber shows it here.
	PublishMaxLatency time.Duration
	// Elapsed is how long publishing took, from the first PUBLISH to the
	// last reply.
	Elapsed time.Duration
}

// GrowthPerSubscriber returns how far the server's RSS rose above its
// baseline at the peak, divided by the number of subscribers.
func (r Result) GrowthPerSubscriber() int64 {
	if r.Subscribers == 0 {
		return 0
	}
	return (r.PeakRSS - r.BaselineRSS) / int64(r.Subscribers)
}

// MeanClosedAtBytes returns the mean of ClosedAtBytes, 0 if none was closed.
func (r Result) MeanClosedAtBytes() int64 {
	if len(r.ClosedAtBytes) == 0 {
		return 0
	}
	var sum int64
	for _, b := range r.ClosedAtBytes {
		sum += b
	}
	return sum / int64(len(r.ClosedAtBytes))
}

// Throughput returns the published payload bytes per second.
func (r Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.PublishedBytes) / r.Elapsed.Seconds()
}
