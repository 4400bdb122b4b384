package kv

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/config"
)

// latencyTracking is what latency-tracking and
// latency-tracking-info-percentiles set: whether timed commands feed the
// per-command histograms (LATENCY HISTOGRAM, INFO latencystats), and which
// percentiles INFO reports. on is read by every loop's timed commands.
type latencyTracking struct {
	on atomic.Bool

	mu          sync.Mutex
	percentiles []float64 // as given, in order
}

// ownLatencyTracking takes latency-tracking and
// latency-tracking-info-percentiles over from the settings table.
func (h *Handler) ownLatencyTracking() {
	lt, p := &h.latencyTracking, h.params
	lt.on.Store(p.Get("latency-tracking") == "yes")
	lt.setPercentiles(p.Get("latency-tracking-info-percentiles"))
	p.Own("latency-tracking", config.Owner{
		Get: func() string { return config.FormatYesNo(lt.on.Load()) },
		Set: func(v string) { lt.on.Store(v == "yes") },
	})
	p.Own("latency-tracking-info-percentiles", config.Owner{
		Get: lt.percentilesText,
		Set: lt.setPercentiles,
	})
}

// setPercentiles takes the setting's canonical form (numbers the kind
// checked, separated by one space).
func (lt *latencyTracking) setPercentiles(v string) {
	var ps []float64
	for _, f := range strings.Fields(v) {
		x, _ := strconv.ParseFloat(f, 64)
		ps = append(ps, x)
	}
	lt.mu.Lock()
	lt.percentiles = ps
	lt.mu.Unlock()
}

func (lt *latencyTracking) percentilesText() string {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return config.FormatPercentiles(lt.percentiles)
}

// appendLatencyStats appends INFO's Latencystats lines: for each command
// with a histogram, the configured percentiles in µs, as Redis writes
// them; nothing while latency-tracking is off. A percentile is the upper
// bound of its histogram bucket, from the timed sample.
func (h *Handler) appendLatencyStats(b []byte) []byte {
	lt := &h.latencyTracking
	if !lt.on.Load() {
		return b
	}
	lt.mu.Lock()
	ps := lt.percentiles
	lt.mu.Unlock()
	for id, t := range h.cmdStats.totals() {
		if !t.hasHistogram() {
			continue
		}
		b = fmt.Appendf(b, "latency_percentiles_usec_%s:", commandsByID[id].name)
		for i, q := range ps {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, "p%s=%.3f", config.FormatPercentile(q), t.percentileMicros(q/100))
		}
		b = append(b, "\r\n"...)
	}
	return b
}

// hasHistogram reports whether any timed call of the command reached its
// histogram.
func (t *commandTotals) hasHistogram() bool {
	for _, n := range t.buckets {
		if n > 0 {
			return true
		}
	}
	return false
}

// histogramCount is how many timed calls t's histogram holds: the timed
// sample, less the calls timed while latency-tracking was off.
func (t *commandTotals) histogramCount() uint64 {
	var n uint64
	for _, c := range t.buckets {
		n += c
	}
	return n
}

// scaled turns a count of timed calls into calls, by the ratio of all
// calls to timed ones (about 16).
func (t *commandTotals) scaled(n uint64) uint64 {
	if t.timed == 0 {
		return n
	}
	return n * t.calls / t.timed
}
