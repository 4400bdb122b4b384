package server

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/shoalkv/shoal/proto/http1"
)

// /metrics: the counters the eventloop Server, the command layer and the
// store already keep, read at scrape time by prometheus.Collectors, so
// serving traffic costs nothing extra for them. The command layer's
// collector is kv.Handler.MetricsCollector; the loops' is here.

var promContentType = http1.Header{Name: []byte("Content-Type"), Value: []byte(string(expfmt.NewFormat(expfmt.TypeTextPlain)))}

// metricsRegistry is the edge's Prometheus registry, made at the first
// scrape: the loops' and the command layer's collectors plus the process
// (RSS, CPU, descriptors) and Go runtime (GC pauses, heap) collectors.
type metricsRegistry struct {
	once sync.Once
	reg  *prometheus.Registry
	mu   sync.Mutex // one scrape at a time: the encoder's buffer is shared
	buf  bytes.Buffer
}

// MetricsCollector returns a prometheus.Collector of the event loops'
// counters (connections, bytes, system calls, replies per write,
// backpressure and limit closes, connections refused), for a program that
// serves its own registry beside kv.Handler.MetricsCollector; the HTTP
// front's /metrics serves both with the process and Go runtime collectors.
func (h *Handler) MetricsCollector() prometheus.Collector { return loopCollector{h: h} }

// appendMetrics appends the Prometheus text exposition of every metric.
func (h *Handler) appendMetrics(dst []byte) []byte {
	m := &h.metrics
	m.once.Do(func() {
		m.reg = prometheus.NewRegistry()
		m.reg.MustRegister(h.MetricsCollector(), h.kv.MetricsCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
			collectors.NewGoCollector())
	})
	families, err := m.reg.Gather()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buf.Reset()
	enc := expfmt.NewEncoder(&m.buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if e := enc.Encode(f); e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		h.log.Warn("metrics: gathering failed in part", "err", err)
	}
	return append(dst, m.buf.Bytes()...)
}

// loopCollector reads the eventloop Server's counters when Prometheus
// scrapes.
type loopCollector struct{ h *Handler }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("shoal_"+name, help, labels, nil)
}

var (
	descLoopConns      = desc("loop_connections", "Open connections owned by the event loop.", "loop")
	descLoopAccepted   = desc("loop_accepted_connections_total", "Connections the event loop adopted.", "loop")
	descLoopLoad       = desc("loop_load", "The loop's recent busy fraction, as the LoadAware balancer sees it.", "loop")
	descLoopReads      = desc("loop_reads_total", "Read system calls that returned data.", "loop")
	descLoopReadBytes  = desc("loop_read_bytes_total", "Bytes read from client sockets.", "loop")
	descLoopWrites     = desc("loop_writes_total", "Write system calls.", "loop")
	descLoopWriteBytes = desc("loop_written_bytes_total", "Bytes written to client sockets.", "loop")
	descLoopReplies    = desc("loop_replies_total", "Requests answered on the loop, over every front.", "loop")
	descLoopPerWrite   = desc("loop_replies_per_write", "Replies per write system call since start: how well smart flush batches pipelined replies.", "loop")
	descLoopPauses     = desc("loop_backpressure_pauses_total", "Times a connection stopped being read because its pending output passed the high-water mark.", "loop")
	descLoopHardLimit  = desc("loop_output_limit_closes_total", "Connections closed because their unsent output passed the hard limit (a client not reading).", "loop")
	descLoopInbound    = desc("loop_inbound_limit_closes_total", "Connections closed because their unparsed input passed the query buffer limit.", "loop")
	descLoopIdle       = desc("loop_idle_timeout_closes_total", "Connections closed after the idle timeout.", "loop")
	descRejected       = desc("rejected_connections_total", "Connections refused over maxclients.")
)

// Describe implements prometheus.Collector.
func (loopCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLoopConns, descLoopAccepted, descLoopLoad, descLoopReads, descLoopReadBytes,
		descLoopWrites, descLoopWriteBytes, descLoopReplies, descLoopPerWrite, descLoopPauses, descLoopHardLimit,
		descLoopInbound, descLoopIdle, descRejected} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c loopCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.h
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	s := h.server.Load()
	if s == nil {
		return
	}
	replies := h.kv.LoopReplies()
	loads := s.LoopStats()
	for i, k := range s.Counters() {
		loop := strconv.Itoa(i)
		gauge(descLoopConns, float64(k.Conns), loop)
		counter(descLoopAccepted, k.Accepted, loop)
		if i < len(loads) {
			gauge(descLoopLoad, loads[i].Load, loop)
		}
		counter(descLoopReads, k.Reads, loop)
		counter(descLoopReadBytes, k.BytesRead, loop)
		counter(descLoopWrites, k.Writes, loop)
		counter(descLoopWriteBytes, k.BytesWritten, loop)
		counter(descLoopReplies, replies[i], loop)
		perWrite := 0.0
		if k.Writes > 0 {
			perWrite = float64(replies[i]) / float64(k.Writes)
		}
		gauge(descLoopPerWrite, perWrite, loop)
		counter(descLoopPauses, k.Pauses, loop)
		counter(descLoopHardLimit, k.OutputLimitCloses, loop)
		counter(descLoopInbound, k.InboundLimitCloses, loop)
		counter(descLoopIdle, k.IdleCloses, loop)
	}
	counter(descRejected, uint64(s.Rejected()))
}
