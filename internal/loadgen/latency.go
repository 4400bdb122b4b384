package loadgen

import (
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in nanoseconds with 3 significant digits, up to a minute.
const (
	histLowest  = 1
	histHighest = int64(time.Minute)
	histSigFigs = 3
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histSigFigs)
}

// latencyShards holds a few locked histograms that connections flush samples into.
//
// A histogram per connection, as the textbook says, costs ~220 KB at this range and
// precision: 220 MB for 1,000 connections and far more for the 100k-connection rig. It also
// cannot be read while its connection runs, which the live p99 needs. Instead each
// connection buffers samples locally (sampleBuffer) and takes a shard's lock once per
// few hundred samples; the lock is uncontended in practice and costs nothing per request.
type latencyShards struct {
	shards []latencyShard
}

type latencyShard struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
	_  [40]byte // keep neighbouring shards' locks off one cache line
}

func newLatencyShards(n int) *latencyShards {
	s := &latencyShards{shards: make([]latencyShard, n)}
	for i := range s.shards {
		s.shards[i].h = newHistogram()
	}
	return s
}

// merged returns a snapshot of all samples so far; safe while connections run.
func (s *latencyShards) merged() *hdrhistogram.Histogram {
	out := newHistogram()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		out.Merge(sh.h)
		sh.mu.Unlock()
	}
	return out
}

// sampleBuffer is one connection's local batch of latency samples. Owned by the goroutine
// that reads the connection's replies.
type sampleBuffer struct {
	shard     *latencyShard
	flushedAt int64
	n         int
	vals      []int64 // a separate pointer-free array: the GC does not scan it
}

// Samples buffered per connection before a flush; far fewer with Config.LowMemory, where
// a connection sends a request every few seconds and the 250 ms flush empties it anyway.
const (
	sampleBufferLen          = 512
	lowMemorySampleBufferLen = 8
)

func (b *sampleBuffer) add(ns int64) {
	if ns < histLowest {
		ns = histLowest
	} else if ns > histHighest {
		ns = histHighest
	}
	b.vals[b.n] = ns
	b.n++
	if b.n == len(b.vals) {
		b.flush()
	}
}

func (b *sampleBuffer) flush() {
	if b.n == 0 {
		return
	}
	b.shard.mu.Lock()
	for _, v := range b.vals[:b.n] {
		_ = b.shard.h.RecordValue(v) // in range by construction
	}
	b.shard.mu.Unlock()
	b.n = 0
}

// MergeHistograms decodes the Histogram fields of several reports and merges them into
// the exact histogram of all their samples (not an average of their percentiles).
func MergeHistograms(encoded ...string) (*hdrhistogram.Histogram, error) {
	out := newHistogram()
	for i, e := range encoded {
		h, err := hdrhistogram.Decode([]byte(e))
		if err != nil {
			return nil, fmt.Errorf("histogram %d: %w", i, err)
		}
		if dropped := out.Merge(h); dropped != 0 {
			return nil, fmt.Errorf("histogram %d: %d samples outside %d..%d ns", i, dropped, histLowest, histHighest)
		}
	}
	return out, nil
}

// LatencyOf summarises a histogram of nanoseconds in microseconds.
func LatencyOf(h *hdrhistogram.Histogram) Latency { return latencyOf(h) }
