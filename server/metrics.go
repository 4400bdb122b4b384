package server

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"

	"github.com/shoalkv/shoal/proto/http1"
)

// /metrics: the counters the eventloop Server, the command layer and the
// store already keep, read at scrape time by one prometheus.Collector, so
// serving traffic costs nothing extra for them.

var promContentType = http1.Header{Name: []byte("Content-Type"), Value: []byte(string(expfmt.NewFormat(expfmt.TypeTextPlain)))}

// metricsRegistry is the edge's Prometheus registry, made at the first
// scrape: the edge's collector plus the process
// (RSS, CPU, descriptors) and Go runtime (GC pauses, heap) collectors.
type metricsRegistry struct {
	once sync.Once
	reg  *prometheus.Registry
	mu   sync.Mutex // one scrape at a time: the encoder's buffer is shared
	buf  bytes.Buffer
}

// MetricsCollector returns a prometheus.Collector of the counters the
// event loops (connections, bytes, system calls, replies per write,
// backpressure and limit closes, connections refused), the command layer
// (calls, failures, rejections and sampled latency per command, error
// replies, clients) and the store (keys, expiries, evictions, memory)
// keep, for a program that serves its own registry; the HTTP front's
// /metrics serves it with the process and Go runtime collectors.
func (h *Handler) MetricsCollector() prometheus.Collector { return collector{h: h} }

// appendMetrics appends the Prometheus text exposition of every metric.
func (h *Handler) appendMetrics(dst []byte) []byte {
	m := &h.metrics
	m.once.Do(func() {
		m.reg = prometheus.NewRegistry()
		m.reg.MustRegister(h.MetricsCollector(),
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

// collector reads the loops', kv's and the store's counters when
// Prometheus scrapes.
type collector struct{ h *Handler }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("shoal_"+name, help, labels, nil)
}

var (
	descLoopConns       = desc("loop_connections", "Open connections owned by the event loop.", "loop")
	descLoopAccepted    = desc("loop_accepted_connections_total", "Connections the event loop adopted.", "loop")
	descLoopLoad        = desc("loop_load", "The loop's recent busy fraction, as the LoadAware balancer sees it.", "loop")
	descLoopReads       = desc("loop_reads_total", "Read system calls that returned data.", "loop")
	descLoopReadBytes   = desc("loop_read_bytes_total", "Bytes read from client sockets.", "loop")
	descLoopWrites      = desc("loop_writes_total", "Write system calls.", "loop")
	descLoopWriteBytes  = desc("loop_written_bytes_total", "Bytes written to client sockets.", "loop")
	descLoopReplies     = desc("loop_replies_total", "Requests answered on the loop, over every front.", "loop")
	descLoopPerWrite    = desc("loop_replies_per_write", "Replies per write system call since start: how well smart flush batches pipelined replies.", "loop")
	descLoopPauses      = desc("loop_backpressure_pauses_total", "Times a connection stopped being read because its pending output passed the high-water mark.", "loop")
	descLoopHardLimit   = desc("loop_output_limit_closes_total", "Connections closed because their unsent output passed the hard limit (a client not reading).", "loop")
	descLoopInbound     = desc("loop_inbound_limit_closes_total", "Connections closed because their unparsed input passed the query buffer limit.", "loop")
	descLoopIdle        = desc("loop_idle_timeout_closes_total", "Connections closed after the idle timeout.", "loop")
	descLoopTLS         = desc("loop_tls_handshakes_total", "TLS handshakes by result: ok (resumed ones too), resumed, failed (a connection closed before its handshake ended too), timeout (failed by the handshake timeout).", "loop", "result")
	descLoopTLSRecord   = desc("loop_tls_record_errors_total", "TLS connections closed for a record that does not decrypt, is oversized or an alert.", "loop")
	descLoopBacklog     = desc("loop_output_backlog_bytes", "Memory the loop holds for output its slow readers have not taken (off the Go heap on the native engine; in use or kept for reuse).", "loop")
	descLimitCloses     = desc("client_output_limit_closes_total", "Clients closed at their class's client-output-buffer-limit (hard, or soft for soft-seconds).", "class")
	descEvictedClients  = desc("evicted_clients_total", "Clients closed because all clients' buffers passed maxmemory-clients.")
	descRejected        = desc("rejected_connections_total", "Connections refused over maxclients.")
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
	descUsedMemory      = desc("used_memory_bytes", "Memory used by keys and values and by clients' output buffers, as INFO's used_memory.")
	descMaxMemory       = desc("maxmemory_bytes", "The maxmemory limit (0: none).")
	descConnectedClient = desc("connected_clients", "RESP clients connected.")
)

// Describe implements prometheus.Collector.
func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLoopConns, descLoopAccepted, descLoopLoad, descLoopReads, descLoopReadBytes,
		descLoopWrites, descLoopWriteBytes, descLoopReplies, descLoopPerWrite, descLoopPauses, descLoopHardLimit,
		descLoopInbound, descLoopIdle, descRejected, descCmdCalls, descCmdFailed, descCmdRejected, descCmdDuration,
		descErrorReplies, descKeys, descExpires, descExpired, descEvicted, descHits, descMisses, descUsedMemory,
		descMaxMemory, descConnectedClient, descLoopBacklog, descLimitCloses, descEvictedClients, descLoopTLS, descLoopTLSRecord} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	h := c.h
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if s := h.server.Load(); s != nil {
		c.collectLoops(s, counter, gauge)
	}
	bounds := make([]float64, kv.LatencyBuckets)
	for i := range bounds {
		bounds[i] = kv.LatencyBucketBound(i).Seconds()
	}
	for _, t := range h.kv.CommandStats() {
		counter(descCmdCalls, t.Calls, t.Name)
		counter(descCmdFailed, t.Failed, t.Name)
		counter(descCmdRejected, t.Rejected, t.Name)
		cumulative := make(map[float64]uint64, kv.LatencyBuckets)
		var sum uint64
		for i := 0; i < kv.LatencyBuckets; i++ {
			sum += t.Buckets[i]
			cumulative[bounds[i]] = sum
		}
		ch <- prometheus.MustNewConstHistogram(descCmdDuration, t.Timed, float64(t.TimedNanos)/1e9, cumulative, t.Name)
	}
	for _, e := range h.kv.ErrorStats() {
		counter(descErrorReplies, uint64(e.Count), e.Code)
	}
	stats := h.kv.KeyspaceStats()
	gauge(descKeys, float64(stats.Keys))
	gauge(descExpires, float64(stats.Expires))
	counter(descExpired, uint64(stats.ExpiredKeys))
	counter(descEvicted, uint64(stats.EvictedKeys))
	counter(descHits, uint64(stats.Hits))
	counter(descMisses, uint64(stats.Misses))
	held, _ := h.OutputMemory()
	gauge(descUsedMemory, float64(stats.UsedMemory+held))
	gauge(descMaxMemory, float64(h.kv.Store().MaxMemory()))
	gauge(descConnectedClient, float64(h.kv.ConnectedClients()))
	for class := range h.limitCloses {
		counter(descLimitCloses, uint64(h.limitCloses[class].Load()), config.ClassName(class))
	}
	counter(descEvictedClients, uint64(h.kv.EvictedClients()))
}

// collectLoops reports the eventloop Server's per-loop counters.
func (c collector) collectLoops(s *eventloop.Server, counter func(*prometheus.Desc, uint64, ...string), gauge func(*prometheus.Desc, float64, ...string)) {
	replies := c.h.kv.LoopReplies()
	for i, k := range s.Counters() {
		loop := strconv.Itoa(i)
		gauge(descLoopConns, float64(k.Conns), loop)
		counter(descLoopAccepted, k.Accepted, loop)
		gauge(descLoopLoad, k.Load, loop)
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
		counter(descLoopTLS, k.TLSHandshakes, loop, "ok")
		counter(descLoopTLS, k.TLSResumed, loop, "resumed")
		counter(descLoopTLS, k.TLSHandshakeFailures, loop, "failed")
		counter(descLoopTLS, k.TLSHandshakeTimeouts, loop, "timeout")
		counter(descLoopTLSRecord, k.TLSRecordErrors, loop)
		gauge(descLoopBacklog, float64(k.OutputBacklog), loop)
	}
	counter(descRejected, uint64(s.Rejected()))
}
