package kv

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/config"
)

// Output limits by client class, as Redis's client-output-buffer-limit,
// and maxmemory-clients.
//
// kv owns both settings and knows each client's class (pubsub while it
// has a subscription, else normal); the edge enforces the limits on the
// connections (Edge.SetOutputLimit, Conn.SetOutputClass), because it holds
// the output. A subscriber's mailbox (pubsub.go) counts against the same
// pubsub limit, so that the messages it holds and those its connection
// holds stay under one limit together.

// Reasons kv gives Conn.Abort; the edge logs them.
var (
	// ErrOutputLimit: a subscriber's messages passed its class's limit.
	ErrOutputLimit = errors.New("client output over its class's limit")
	// ErrClientEvicted: all clients' buffers passed maxmemory-clients and
	// this client's were among the largest.
	ErrClientEvicted = errors.New("client evicted over maxmemory-clients")
)

// outputLimits is what kv keeps of the two settings.
type outputLimits struct {
	mu     sync.Mutex // serializes CONFIG SET's merges
	limits config.OutputLimits
	// pubsubHard is the pubsub class's hard limit, for the mailboxes;
	// replicaHard the replica class's, for MONITOR's (monitor.go).
	pubsubHard  atomic.Int64
	replicaHard atomic.Int64
	// clientsMax is maxmemory-clients as given ("0", bytes, or "10%").
	clientsMax atomic.Pointer[string]
	// evicted counts clients closed over maxmemory-clients.
	evicted atomic.Int64
	// freedAtRelease is the edge's freed output memory at the last
	// release (releaseClientMemory); cron only.
	freedAtRelease int64
}

// ownOutputLimits makes h the owner of client-output-buffer-limit and
// maxmemory-clients; Boot hands the limits to the edge.
func (h *Handler) ownOutputLimits() {
	o := &h.outLimits
	// The defaults, then (Own applies it) a value given at startup over them.
	def := config.DefaultOutputLimits()
	o.limits = def
	o.pubsubHard.Store(def.Limits[config.ClassPubsub].Hard)
	o.replicaHard.Store(def.Limits[config.ClassReplica].Hard)
	clientsMax := h.params.Get("maxmemory-clients")
	o.clientsMax.Store(&clientsMax)
	h.params.Own("client-output-buffer-limit", config.Owner{
		Get: func() string {
			o.mu.Lock()
			defer o.mu.Unlock()
			return o.limits.String()
		},
		Set: func(v string) {
			given, _ := config.ParseOutputLimits(v) // the table checked it
			o.mu.Lock()
			o.limits = o.limits.Merge(given)
			all := o.limits
			o.mu.Unlock()
			o.pubsubHard.Store(all.Limits[config.ClassPubsub].Hard)
			o.replicaHard.Store(all.Limits[config.ClassReplica].Hard)
			h.applyOutputLimits(all)
		},
	})
	h.params.Own("maxmemory-clients", config.Owner{
		Get: func() string { return *o.clientsMax.Load() },
		Set: func(v string) { o.clientsMax.Store(&v) },
	})
}

// applyOutputLimits hands every class's limits to the edge.
func (h *Handler) applyOutputLimits(all config.OutputLimits) {
	e := h.edge.Load()
	if e == nil {
		return
	}
	for class, l := range all.Limits {
		(*e).SetOutputLimit(class, l)
	}
}

// bootOutputLimits is Boot's part: the edge learns the limits.
func (h *Handler) bootOutputLimits() {
	o := &h.outLimits
	o.mu.Lock()
	all := o.limits
	o.mu.Unlock()
	h.applyOutputLimits(all)
}

// EvictedClients is how many clients were closed over maxmemory-clients.
func (h *Handler) EvictedClients() int64 { return h.outLimits.evicted.Load() }

// classOf is cl's class for the output limits.
func classOf(cl *client) int {
	if cl.monitoring() || (cl.h != nil && cl.h.isReplica(cl)) {
		return config.ClassReplica // as Redis, whose monitors are replicas
	}
	if cl.subscribed() {
		return config.ClassPubsub
	}
	return config.ClassNormal
}

// noteClass tells the edge when cl's class changed: on its first
// subscription and after its last. Loop goroutine only.
func (cl *client) noteClass(sub *subscriber) {
	class := classOf(cl)
	if sub.class == class || cl.conn == nil {
		return
	}
	sub.class = class
	cl.conn.SetOutputClass(class)
}

// outputBacklog is the output cl's connection holds for it: omem.
func (cl *client) outputBacklog() int64 {
	n := int64(0)
	if cl.conn != nil {
		n = int64(cl.conn.OutputBacklog())
	}
	if s := cl.sess.Load(); s != nil {
		if sub := s.sub.Load(); sub != nil {
			n += sub.boxLen.Load()
		}
	}
	return n
}

// clientMemory sums the output memory of the live clients by class, and
// finds the largest: INFO's mem_clients_normal and
// client_recent_max_output_buffer.
func (h *Handler) clientMemory() (byClass [config.NumClasses]int64, largest int64) {
	for _, cl := range h.clients.snapshot() {
		n := cl.outputBacklog()
		byClass[classOf(cl)] += n
		largest = max(largest, n)
	}
	return byClass, largest
}

// outputMemory is what the edge holds for slow readers, for used_memory,
// and what it has given back since it started.
func (h *Handler) outputMemory() (held, freed int64) {
	if e := h.edge.Load(); e != nil {
		return (*e).OutputMemory()
	}
	return 0, 0
}

// evictClients closes the clients whose output takes the most memory
// while all clients' together is over maxmemory-clients, as Redis 7's
// client eviction does. cron runs it; it costs a look at the registry only
// when the edge's output memory is over the limit.
func (h *Handler) evictClients() {
	limit := config.ResolveMemoryOrPercent(*h.outLimits.clientsMax.Load(), h.shared.MaxMemory())
	if limit <= 0 {
		return
	}
	total, _ := h.outputMemory()
	if total <= limit {
		return
	}
	type big struct {
		cl *client
		n  int64
	}
	var list []big
	for _, cl := range h.clients.snapshot() {
		if n := cl.outputBacklog(); n > 0 && !cl.noEvict() {
			list = append(list, big{cl, n})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].n > list[j].n })
	for _, b := range list {
		if total <= limit {
			break
		}
		reason := fmt.Errorf("%w: its buffers take %d bytes, all clients' %d, maxmemory-clients %d", ErrClientEvicted, b.n, total, limit)
		if b.cl.abort(reason) {
			h.outLimits.evicted.Add(1)
			total -= b.n
		}
	}
}

// releaseClientMemory gives memory back to the kernel once slow clients
// that held a lot of output are gone. Their backlogs were off the Go heap
// and went back as they were freed, but the mailbox chunks and buffers
// their messages passed through stay on the heap, and an idle server runs
// no garbage collection to free them: so once the edge has given back 8
// MiB or more since the last release and now holds less than a quarter of
// that, cron drops the mailbox chunks it keeps, collects and returns the
// free pages (a few milliseconds: the keyspace is off the Go heap too). A
// counter of memory given back, not a sampled peak: a subscriber can fill
// and be closed between two of cron's ticks.
func (h *Handler) releaseClientMemory() {
	o := &h.outLimits
	held, freed := h.outputMemory()
	if since := freed - o.freedAtRelease; since >= 8<<20 && held < since/4 {
		o.freedAtRelease = freed
		releaseChunks()
		runtime.GC()         // a first cycle moves pooled buffers to the victim cache,
		debug.FreeOSMemory() // the second frees them and returns the pages
	}
}

// abort closes cl's connection now, from any goroutine; it reports
// whether the close was handed to cl's loop.
func (cl *client) abort(reason error) bool {
	c := cl.conn
	if c == nil {
		return false
	}
	return c.Run(func() { c.Abort(reason) }) == nil
}

// appendOutputInfo appends CLIENT LIST's output fields, from obl to tot-mem.
func appendOutputInfo(b []byte, cl *client) []byte {
	omem := cl.outputBacklog()
	b = append(b, " obl=0 oll="...)
	oll := int64(0)
	if omem > 0 {
		oll = 1 + omem/(16<<10) // Redis's reply list holds 16 KiB nodes
	}
	b = strconv.AppendInt(b, oll, 10)
	b = append(b, " omem="...)
	b = strconv.AppendInt(b, omem, 10)
	b = append(b, " tot-mem="...)
	return strconv.AppendInt(b, omem+clientFixedSize, 10)
}

// clientFixedSize is what a connected client costs at least: the edge's
// session with the Client in it (server.TestSessionFitsItsSizeClass) and
// the eventloop's Conn.
const clientFixedSize = 240 + 160
