package kv

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// The command layer's Prometheus metrics: the counters it already keeps
// (commands, error replies, keyspace, clients), read at scrape time by a
// prometheus.Collector, so serving traffic costs nothing extra for them.
// The edge (package server) adds the loops' counters and serves /metrics.

// MetricsCollector returns a prometheus.Collector of h's counters
// (commands, error replies, keyspace, clients), for a program that serves
// its own registry; the HTTP front's /metrics serves it with the loops',
// process and Go runtime collectors.
func (h *Handler) MetricsCollector() prometheus.Collector { return &kvCollector{h: h} }

// LoopReplies returns, by loop index, how many requests each loop answered
// over every front: with the loop's write count, how well smart flush
// batches.
func (h *Handler) LoopReplies() map[int]uint64 { return h.cmdStats.perLoopReplies() }

// kvCollector reads h's counters when Prometheus scrapes.
type kvCollector struct{ h *Handler }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("shoal_"+name, help, labels, nil)
}

var (
	descCmdCalls        = desc("commands_total", "Commands executed, by command (requests over HTTP and frames count as the Redis command that does the same).", "cmd")
	descCmdFailed       = desc("command_failed_total", "Commands that executed and replied with an error.", "cmd")
	descCmdRejected     = desc("command_rejected_total", "Commands refused before executing (wrong arity, NOAUTH).", "cmd")
	descCmdDuration     = desc("command_duration_seconds", "Command execution time, sampled: one command in 16 per connection (one in 16 per loop for HTTP and frames) is timed.", "cmd")
	descErrorReplies    = desc("error_replies_total", "Error replies, by their first word (Redis's errorstats).", "prefix")
	descKeys            = desc("keys", "Keys in the keyspace.")
	descExpires         = desc("expiring_keys", "Keys with a time to live.")
	descExpired         = desc("expired_keys_total", "Keys removed because their time to live ended.")
	descEvicted         = desc("evicted_keys_total", "Keys evicted under maxmemory.")
	descHits            = desc("keyspace_hits_total", "Lookups that found their key.")
	descMisses          = desc("keyspace_misses_total", "Lookups that did not find their key.")
	descUsedMemory      = desc("used_memory_bytes", "Memory used by keys and values, as INFO's used_memory.")
	descMaxMemory       = desc("maxmemory_bytes", "The maxmemory limit (0: none).")
	descConnectedClient = desc("connected_clients", "RESP clients connected.")
)

// Describe implements prometheus.Collector.
func (kvCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCmdCalls, descCmdFailed, descCmdRejected, descCmdDuration,
		descErrorReplies, descKeys, descExpires, descExpired, descEvicted, descHits, descMisses, descUsedMemory,
		descMaxMemory, descConnectedClient} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c kvCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.h
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	bounds := make([]float64, latencyBuckets)
	for i := range bounds {
		bounds[i] = float64(bucketBound(i)) / 1e9
	}
	for id, t := range h.cmdStats.totals() {
		if t.calls == 0 && t.rejected == 0 {
			continue
		}
		name := commandsByID[id].name
		counter(descCmdCalls, t.calls, name)
		counter(descCmdFailed, t.failed, name)
		counter(descCmdRejected, t.rejected, name)
		cumulative := make(map[float64]uint64, latencyBuckets)
		var sum uint64
		for i := 0; i < latencyBuckets; i++ {
			sum += t.buckets[i]
			cumulative[bounds[i]] = sum
		}
		ch <- prometheus.MustNewConstHistogram(descCmdDuration, t.timed, float64(t.timedNanos)/1e9, cumulative, name)
	}
	for _, e := range h.errors.snapshot() {
		counter(descErrorReplies, uint64(e.count), e.code)
	}
	st := h.store.Stats()
	gauge(descKeys, float64(st.Keys))
	gauge(descExpires, float64(st.Expires))
	counter(descExpired, uint64(st.ExpiredKeys))
	counter(descEvicted, uint64(st.EvictedKeys))
	counter(descHits, uint64(st.Hits))
	counter(descMisses, uint64(st.Misses))
	gauge(descUsedMemory, float64(st.UsedMemory))
	gauge(descMaxMemory, float64(h.store.MaxMemory()))
	gauge(descConnectedClient, float64(h.clients.count()))
}

// errorCount is one errorstats entry.
type errorCount struct {
	code  string
	count int64
}

// snapshot returns the error counts by code, sorted.
func (e *errorStats) snapshot() []errorCount {
	e.mu.Lock()
	out := make([]errorCount, 0, len(e.byCode))
	for c, n := range e.byCode {
		out = append(out, errorCount{c, n})
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].code < out[j].code })
	return out
}
