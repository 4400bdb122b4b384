package kv

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"
)

// Per-command counters for INFO commandstats and latencystats and for
// /metrics: calls, failed and rejected calls, and a latency histogram.
// Each loop has its own block, written only by that loop's goroutine, so a
// command costs uncontended atomic adds and no shared cache line; readers
// sum the blocks. Reading the clock costs about 85 ns here, as much as half
// a pipelined GET, so one command in timedEvery (per connection, the first
// included) is timed and the histogram is of that sample; calls and errors
// are exact.

// timedEvery is the sampling stride of command timing; a power of two.
const timedEvery = 16

// latencyBuckets are the histogram's finite buckets: bucket i counts
// durations up to 1024·2^i ns (about 1 µs to 1.07 s); one more is +Inf.
const latencyBuckets = 21

// bucketBound returns the upper bound of bucket i in nanoseconds.
func bucketBound(i int) int64 { return 1024 << i }

// commandCounters are one command's counters in one loop.
type commandCounters struct {
	calls, failed, rejected atomic.Uint64
	timed, timedNanos       atomic.Uint64
	buckets                 [latencyBuckets + 1]atomic.Uint64
}

func (c *commandCounters) count(failed bool) {
	c.calls.Add(1)
	if failed {
		c.failed.Add(1)
	}
}

// observe records a timed call of d nanoseconds; its histogram bucket
// too when hist (latency-tracking is on: off, the histograms keep what
// they have, as Redis's).
func (c *commandCounters) observe(d int64, hist bool) {
	if d < 0 {
		d = 0
	}
	c.timed.Add(1)
	c.timedNanos.Add(uint64(d))
	if !hist {
		return
	}
	i := bits.Len64(uint64(d-1) >> 10)
	if d == 0 {
		i = 0
	}
	if i > latencyBuckets {
		i = latencyBuckets
	}
	c.buckets[i].Add(1)
}

// forLoop returns the block of loop i (-1: no loop).
func (s *commandStats) forLoop(i int) *loopState {
	i++
	if p := s.loops.Load(); p != nil && i < len(*p) && (*p)[i] != nil {
		return (*p)[i]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur []*loopState
	if p := s.loops.Load(); p != nil {
		cur = *p
	}
	if i < len(cur) && cur[i] != nil {
		return cur[i]
	}
	next := make([]*loopState, max(len(cur), i+1))
	copy(next, cur)
	next[i] = &loopState{cmds: make([]commandCounters, len(commandsByID))}
	s.loops.Store(&next)
	return next[i]
}

// commandTotals is one command's counters summed over the loops.
type commandTotals struct {
	calls, failed, rejected, timed, timedNanos uint64
	buckets                                    [latencyBuckets + 1]uint64
}

// totals sums every loop's counters, by statsID.
func (s *commandStats) totals() []commandTotals {
	out := make([]commandTotals, len(commandsByID))
	p := s.loops.Load()
	if p == nil {
		return out
	}
	for _, ls := range *p {
		if ls == nil {
			continue
		}
		for id := range ls.cmds {
			c, t := &ls.cmds[id], &out[id]
			t.calls += c.calls.Load()
			t.failed += c.failed.Load()
			t.rejected += c.rejected.Load()
			t.timed += c.timed.Load()
			t.timedNanos += c.timedNanos.Load()
			for b := range c.buckets {
				t.buckets[b] += c.buckets[b].Load()
			}
		}
	}
	return out
}

// perLoopReplies returns the commands each loop answered (calls and
// rejections), by loop index.
func (s *commandStats) perLoopReplies() map[int]uint64 {
	out := map[int]uint64{}
	p := s.loops.Load()
	if p == nil {
		return out
	}
	for i, ls := range (*p)[1:] {
		if ls == nil {
			continue
		}
		var n uint64
		for id := range ls.cmds {
			n += ls.cmds[id].calls.Load() + ls.cmds[id].rejected.Load()
		}
		out[i] = n
	}
	return out
}

// reset zeroes every counter, for CONFIG RESETSTAT.
func (s *commandStats) reset() {
	p := s.loops.Load()
	if p == nil {
		return
	}
	for _, ls := range *p {
		if ls == nil {
			continue
		}
		for id := range ls.cmds {
			c := &ls.cmds[id]
			c.calls.Store(0)
			c.failed.Store(0)
			c.rejected.Store(0)
			c.timed.Store(0)
			c.timedNanos.Store(0)
			for b := range c.buckets {
				c.buckets[b].Store(0)
			}
		}
	}
}

// estimatedNanos is the total time of all calls, scaled up from the timed
// sample.
func (t *commandTotals) estimatedNanos() float64 {
	if t.timed == 0 {
		return 0
	}
	return float64(t.timedNanos) * float64(t.calls) / float64(t.timed)
}

// percentileMicros returns the upper bound, in µs, of the bucket holding
// the q-quantile of the timed calls.
func (t *commandTotals) percentileMicros(q float64) float64 {
	var total uint64
	for _, n := range t.buckets {
		total += n
	}
	rank := uint64(q*float64(total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, n := range t.buckets {
		seen += n
		if seen >= rank {
			if i == latencyBuckets {
				i--
			}
			return float64(bucketBound(i)) / 1e3
		}
	}
	return float64(bucketBound(latencyBuckets-1)) / 1e3
}

var processStart = time.Now()

// monotonicNanos reads only the monotonic clock.
func monotonicNanos() int64 { return int64(time.Since(processStart)) }

// noID marks a front request that ran no command (a /healthz, a 404).
const noID = -1

// frontTimer times one in timedEvery of a loop's front operations, which
// the fronts charge to the Redis command that does the same (GET, SET,
// DEL, INCRBY, PING), so commandstats and /metrics cover every front.
type frontTimer struct {
	ls    *loopState
	start int64 // 0: this operation is not timed
	hist  bool  // latency-tracking was on when it started
}

func (ls *loopState) begin(h *Handler) frontTimer {
	t := frontTimer{ls: ls}
	if ls.tick%timedEvery == 0 {
		t.start = monotonicNanos()
		t.hist = h.latencyTracking.on.Load()
	}
	ls.tick++
	return t
}

// end charges the operation to command id, if it ran one.
func (t frontTimer) end(id int, failed bool) {
	if id == noID {
		return
	}
	c := &t.ls.cmds[id]
	c.count(failed)
	if t.start != 0 {
		c.observe(monotonicNanos()-t.start, t.hist)
	}
}

// appendCommandStats appends INFO's Commandstats lines, as Redis writes
// them, for each command that was called or rejected: usec is estimated
// from the timed sample.
func (h *Handler) appendCommandStats(b []byte) []byte {
	for id, t := range h.cmdStats.totals() {
		if t.calls == 0 && t.rejected == 0 {
			continue
		}
		usec := t.estimatedNanos() / 1e3
		perCall := 0.0
		if t.calls > 0 {
			perCall = usec / float64(t.calls)
		}
		b = fmt.Appendf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			commandsByID[id].name, t.calls, int64(usec), perCall, t.rejected, t.failed)
	}
	return b
}
