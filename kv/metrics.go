package kv

import (
	"sort"
	"time"
)

// The command layer's counters as values, for the edge's /metrics (package
// server) and for programs embedding kv: read at scrape time from the
// counters kv keeps anyway, so serving traffic costs nothing extra.

// LatencyBuckets is how many finite buckets CommandStat.Buckets has; one
// more counts the calls slower than the last bound.
const LatencyBuckets = latencyBuckets

// LatencyBucketBound is the upper bound of latency bucket i.
func LatencyBucketBound(i int) time.Duration { return time.Duration(bucketBound(i)) }

// CommandStat is one command's counters summed over the loops: calls,
// failed calls (an error reply), rejected calls (arity, NOAUTH: not run),
// and the sampled timings (one call in 16 per connection is timed).
type CommandStat struct {
	Name                    string
	Calls, Failed, Rejected uint64
	Timed                   uint64                     // calls timed
	TimedNanos              uint64                     // their total time
	Buckets                 [LatencyBuckets + 1]uint64 // timed calls by LatencyBucketBound; the last is +Inf
}

// CommandStats returns the counters of every command called or rejected
// since start (or CONFIG RESETSTAT), over every front and loop.
func (h *Handler) CommandStats() []CommandStat {
	var out []CommandStat
	for id, t := range h.cmdStats.totals() {
		if t.calls == 0 && t.rejected == 0 {
			continue
		}
		out = append(out, CommandStat{Name: commandsByID[id].name, Calls: t.calls, Failed: t.failed, Rejected: t.rejected,
			Timed: t.timed, TimedNanos: t.timedNanos, Buckets: t.buckets})
	}
	return out
}

// ErrorStat is how many error replies began with Code (Redis's errorstats).
type ErrorStat struct {
	Code  string
	Count int64
}

// ErrorStats returns the error reply counts by code, sorted by code.
func (h *Handler) ErrorStats() []ErrorStat { return h.errors.snapshot() }

// ConnectedClients is how many RESP clients are connected.
func (h *Handler) ConnectedClients() int { return h.clients.count() }

// LoopReplies returns, by loop index, how many requests each loop answered
// over every front: with the loop's write count, how well smart flush
// batches.
func (h *Handler) LoopReplies() map[int]uint64 { return h.cmdStats.perLoopReplies() }

// snapshot returns the error counts by code, sorted.
func (e *errorStats) snapshot() []ErrorStat {
	e.mu.Lock()
	out := make([]ErrorStat, 0, len(e.byCode))
	for c, n := range e.byCode {
		out = append(out, ErrorStat{c, n})
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
