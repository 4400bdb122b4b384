package kv

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/repl"
)

// Replication, primary side: Shoal serves replicas (redis-server or Shoal)
// with Redis's PSYNC protocol.
//
// The stream is the records the append-only file gets (callLogged: what
// each write did, as Redis propagates it), preceded by a SELECT whenever
// the database changes, whether or not a file is attached. Nothing is
// produced until the first replica connects: then the stream starts, and
// with it the backlog, as Redis creates its backlog at the first replica.
// The replication offset (master_repl_offset, h.repl.offset) counts the
// stream's bytes.
//
// A replica is a client whose connection gets the stream through its
// subscriber mailbox, the path pub/sub and MONITOR use to write to a
// connection from any loop, bounded by the replica class of
// client-output-buffer-limit. A full sync takes its snapshot at one
// instant: the loops are stopped between batches (stopWorld) and every
// stripe locked, the replica registered at the stream's offset, and all
// resumed; the shards are then encoded while writes go on, each before
// the first write after the instant touches it (primary_snapshot.go), and
// the stream since that instant follows the snapshot.
//
// Concurrency: primarySide.mu guards the stream's appends, the backlog
// and the replica list; it is taken under the stripes of a write (after
// them), so records of one key enter the stream in the order the store
// applied them.
type primarySide struct {
	feeding atomic.Bool // a replica connected once: callLogged feeds the stream

	// min-replicas-to-write, min-replicas-max-lag, and whether writes are
	// refused for want of replicas (dispatch's test).
	minReplicas, maxLag atomic.Int64
	noReplicas          atomic.Bool
	confed              atomic.Bool // confs was made: closing clients must be looked up
	start               sync.Once   // the stripes and the cron, at the first replica

	syncMu   sync.Mutex                   // one full sync's snapshot at a time
	snapshot atomic.Pointer[syncSnapshot] // the snapshot being made (primary_snapshot.go)

	mu          sync.Mutex
	backlog     *repl.Backlog            // nil until a replica connects, and after repl-backlog-ttl without any
	backlogSize int64                    // repl-backlog-size
	db          int                      // database of the stream's last record; -1: a SELECT must come first
	replicas    []*replica               // in the order they connected
	confs       map[*client]*replicaConf // REPLCONF before SYNC/PSYNC
	emptySince  time.Time                // when the last replica left (repl-backlog-ttl)
	lastPing    time.Time
	waits       []*replWait // WAIT calls parked
	// syncQueue: replicas waiting for a full sync, the first since
	// syncQueuedAt (repl-diskless-sync-delay; primary_sync.go).
	syncQueue    []pendingSync
	syncQueuedAt time.Time

	syncFull       atomic.Int64 // INFO stats: sync_full
	syncPartialOK  atomic.Int64 // sync_partial_ok
	syncPartialErr atomic.Int64 // sync_partial_err
}

// replicaConf is what a replica said of itself with REPLCONF.
type replicaConf struct {
	port       int    // listening-port
	ip         string // ip-address; the connection's address if not given
	capaEOF    bool   // takes the $EOF:<mark> snapshot
	capaPSYNC2 bool   // takes +CONTINUE <new id>
}

// replica is one connected replica.
type replica struct {
	cl   *client
	sub  *subscriber
	conf replicaConf

	// Guarded by primarySide.mu.
	online   bool   // the snapshot is handed over: the stream goes to the connection
	awaitAck bool   // a diskless snapshot was sent: the stream starts at the first ACK
	sendBulk bool   // the snapshot is being sent in the disk form ($<length>)
	pending  []byte // the stream since the snapshot's instant, until online
	gone     bool

	ack   atomic.Int64 // offset the replica acknowledged (REPLCONF ACK); 0 before its first, as Redis's repl_ack_off
	ackAt atomic.Int64 // unix ms of its last ACK, or of when it went online
}

// stateWord is the replica's state as Redis's INFO replication names it:
// wait_bgsave while it waits for its snapshot, and while a diskless one
// streams (Redis's child writes it); send_bulk while the disk form is
// sent; online once the snapshot is handed over, a diskless one included
// (Redis puts such a replica online at once and starts its stream at its
// first ACK). primarySide.mu is held.
func (r *replica) stateWord() string {
	switch {
	case r.online || r.awaitAck:
		return "online"
	case r.sendBulk:
		return "send_bulk"
	}
	return "wait_bgsave"
}

// Redis's texts.
const (
	errNoMasterLink = "NOMASTERLINK Can't SYNC while not connected with my master"
	errWaitReplica  = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."
)

var _ = registerFamily(family{commands: []*command{
	{
		name: "psync", arity: -3, fn: cmdPSync,
		flags: "admin noscript no_async_loading no_multi", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Internal command used for replication", "2.8.0", "server", noComplexity},
	},
	{
		name: "sync", arity: 1, fn: cmdPSync,
		flags: "admin noscript no_async_loading no_multi", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Internal command used for replication", "1.0.0", "server", noComplexity},
	},
	{
		name: "replconf", arity: -1, fn: cmdReplConf,
		flags: "admin noscript loading stale allow_busy", acl: "@admin @slow @dangerous",
		doc: commandDoc{"An internal command for configuring the replication stream", "3.0.0", "server", "O(1)"},
	},
	{
		name: "wait", arity: 3, fn: cmdWait,
		flags: "noscript", acl: "@slow @connection", tips: "request_policy:all_shards response_policy:agg_min",
		doc: commandDoc{"Wait for the synchronous replication of all the write commands sent in the context of the current connection", "3.0.0", "generic", "O(1)"},
	},
}})

// startFeeding makes every write from now on enter the stream: once, at
// the first replica. The full sync that follows stops the world before
// its snapshot, so the batches already running, which may hold writes
// that chose the unlogged path, finish first: no write the snapshot
// misses is missing from the stream.
func (h *Handler) startFeeding() {
	p := &h.primary
	p.start.Do(func() {
		if h.stripes == nil {
			h.stripes = make([]sync.Mutex, h.shared.ShardCount())
		}
		p.db = -1
		p.feeding.Store(true)
		go h.primaryCron()
	})
}

// feedStream appends a write's record of database db to the stream:
// callLogged calls it under the write's stripes. db -1 is a record of no
// database (EXEC). A server that is itself a replica does not feed its own
// writes (those of a writable replica stay local, as in Redis 4+): its
// stream is its primary's (masterLink.forward).
func (h *Handler) feedStream(db int, rec []byte) { h.feedRecords(db, nil, rec) }

// feedRecords is feedStream with multi (MULTI, or nothing) before rec.
func (h *Handler) feedRecords(db int, multi, rec []byte) {
	if h.repl.state.Load() != linkNone {
		return
	}
	p := &h.primary
	p.mu.Lock()
	if p.backlog != nil || len(p.replicas) > 0 {
		if db >= 0 && p.db != db {
			var n [20]byte
			p.appendLocked(h, aof.AppendCommand(nil, []byte("SELECT"), strconv.AppendInt(n[:0], int64(db), 10)))
			p.db = db
		}
		if len(multi) > 0 {
			p.appendLocked(h, multi)
		}
		p.appendLocked(h, rec)
	}
	p.mu.Unlock()
}

// appendLocked adds b to the stream: the offset, the backlog, every
// replica. p.mu is held.
func (p *primarySide) appendLocked(h *Handler, b []byte) {
	h.repl.offset.Add(int64(len(b)))
	if p.backlog != nil {
		p.backlog.Write(b)
	}
	limit := h.outLimits.replicaHard.Load()
	for _, r := range p.replicas {
		switch {
		case r.gone:
		case r.online:
			r.sub.deliverRaw(b, limit)
		case limit > 0 && int64(len(r.pending)+len(b)) > limit:
			r.gone = true
			r.pending = nil
			h.opts.Logger.Warn("replica dropped while its snapshot was made: the stream since passed the replica output limit", "addr", r.cl.addr, "limit", limit)
			r.cl.abort(ErrOutputLimit)
		default:
			r.pending = append(r.pending, b...)
		}
	}
}

// dropReplicas disconnects every replica of h, with why in the log: when h
// is promoted, or as a replica follows a new history (a new ID with
// +CONTINUE, or a full sync), as Redis 7.0's disconnectSlaves, so that
// they reconnect and learn it. Becoming a replica does not drop them
// (setMaster).
func (h *Handler) dropReplicas(why error) {
	p := &h.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.replicas) == 0 {
		return
	}
	for _, r := range p.replicas {
		r.gone = true
		h.opts.Logger.Info("replica dropped", "addr", replicaName(r), "reason", why)
		r.cl.abort(why)
	}
	p.replicas = nil
	p.emptySince = time.Now()
}

// newMark returns the 40 characters that end a diskless snapshot.
func newMark() string {
	var b [repl.EOFMarkLen / 2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// cmdReplConf takes a replica's REPLCONF: listening-port, ip-address,
// capa before it syncs; ACK and GETACK after.
func cmdReplConf(h *Handler, cl *client, args [][]byte) {
	if len(args)%2 == 0 {
		cl.writeError(errSyntax)
		return
	}
	p := &h.primary
	for i := 1; i < len(args); i += 2 {
		opt, val := string(args[i]), string(args[i+1])
		switch lower(opt) {
		case "ack", "fack":
			off, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return
			}
			if r := p.replicaOf(cl); r != nil {
				p.mu.Lock()
				if r.awaitAck {
					r.goOnline()
				}
				p.mu.Unlock()
				if off > r.ack.Load() {
					r.ack.Store(off)
				}
				r.ackAt.Store(time.Now().UnixMilli())
				h.checkWaits()
				h.updateGoodReplicas()
				h.failoverAcked()
			}
			return // no reply, as Redis
		case "getack":
			// A replica of ours is asked by its own primary: Shoal's
			// replica side answers it (repl_apply.go).
			return
		case "listening-port":
			port, err := strconv.Atoi(val)
			if err != nil || port < 0 || port > 65535 {
				cl.writeError("ERR Invalid listening-port " + strconv.Quote(val))
				return
			}
			p.confOf(cl).port = port
		case "ip-address":
			if len(val) >= 46 {
				cl.writeError("ERR REPLCONF ip-address provided by replica instance is too long: " + strconv.Itoa(len(val)) + " bytes")
				return
			}
			p.confOf(cl).ip = val
		case "capa":
			switch lower(val) {
			case "eof":
				p.confOf(cl).capaEOF = true
			case "psync2":
				p.confOf(cl).capaPSYNC2 = true
			}
		case "rdb-only", "rdb-filter-only":
		default:
			cl.writeError("ERR Unrecognized REPLCONF option: " + opt)
			return
		}
	}
	cl.writeOK()
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// confOf returns cl's REPLCONF settings, creating them.
func (p *primarySide) confOf(cl *client) *replicaConf {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.confs == nil {
		p.confs = make(map[*client]*replicaConf)
		p.confed.Store(true)
	}
	c := p.confs[cl]
	if c == nil {
		c = &replicaConf{}
		p.confs[cl] = c
	}
	return c
}

// replicaOf returns the replica cl is, or nil.
func (p *primarySide) replicaOf(cl *client) *replica {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.replicas {
		if r.cl == cl {
			return r
		}
	}
	return nil
}

// isReplica reports whether cl is a replica of this server (CLIENT LIST's
// S flag, CLIENT KILL TYPE replica).
func (h *Handler) isReplica(cl *client) bool {
	if !h.primary.feeding.Load() {
		return false
	}
	return h.primary.replicaOf(cl) != nil
}

// forgetReplica drops what the primary side keeps of a closing client.
func (h *Handler) forgetReplica(cl *client) {
	p := &h.primary
	if !p.feeding.Load() && !p.confed.Load() {
		return // no client ever said REPLCONF: nothing to forget
	}
	p.mu.Lock()
	delete(p.confs, cl)
	for _, ps := range p.syncQueue {
		if ps.r.cl == cl {
			ps.r.gone = true
		}
	}
	for i, r := range p.replicas {
		if r.cl == cl {
			r.gone = true
			p.replicas = append(p.replicas[:i], p.replicas[i+1:]...)
			if len(p.replicas) == 0 {
				p.emptySince = time.Now()
			}
			h.opts.Logger.Info("connection with replica lost", "addr", replicaName(r))
			break
		}
	}
	p.mu.Unlock()
}

func replicaName(r *replica) string {
	return r.conf.ip + ":" + strconv.Itoa(r.conf.port)
}

// cmdPSync serves SYNC and PSYNC replid offset: +CONTINUE and the missing
// bytes when the history and the offset allow, else +FULLRESYNC, the
// snapshot and the stream from its instant.
func cmdPSync(h *Handler, cl *client, args [][]byte) {
	if cl.conn == nil {
		cl.writeError("ERR SYNC needs a connection")
		return
	}
	if h.primary.replicaOf(cl) != nil {
		return // as Redis: a second SYNC on a replica's connection is ignored
	}
	if len(args) > 3 && ascii.EqualFold(args[0], "psync") && ascii.EqualFold(args[3], "failover") {
		if !h.psyncFailover(cl, args[1]) { // failover.go
			return
		}
	}
	if h.failover.state.Load() != failoverNone {
		cl.writeError(errSyncFailingOver)
		return
	}
	if st := h.repl.state.Load(); st != linkNone && st != linkConnected {
		cl.writeError(errNoMasterLink)
		return
	}
	if cl.inExec() {
		cl.writeError("ERR Command not allowed inside a transaction")
		return
	}
	h.startFeeding()
	p := &h.primary
	p.mu.Lock()
	conf := replicaConf{}
	if c := p.confs[cl]; c != nil {
		conf = *c
		delete(p.confs, cl)
	}
	p.mu.Unlock()
	if conf.ip == "" {
		conf.ip = hostOf(cl.addr)
	}
	sub := cl.subscriberOf()
	r := &replica{cl: cl, sub: sub, conf: conf}
	cl.conn.SetOutputClass(config.ClassReplica)
	sub.class = config.ClassReplica
	if len(args) >= 3 && h.tryPartial(r, string(args[1]), args[2]) {
		return
	}
	if len(args) >= 3 && string(args[1]) != "?" {
		p.syncPartialErr.Add(1)
	}
	p.syncFull.Add(1)
	go h.fullSync(r, len(args) == 1)
}

// hostOf is the host part of a "host:port" address.
func hostOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i]
		}
	}
	return addr
}

// tryPartial answers +CONTINUE and sends the backlog from offset, if the
// history named is ours (or our previous one, up to where it ended) and
// the backlog still holds it.
func (h *Handler) tryPartial(r *replica, id string, offsetArg []byte) bool {
	from, err := strconv.ParseInt(string(offsetArg), 10, 64)
	if err != nil {
		return false
	}
	cur, id2, second := h.replIDs()
	if id != cur && (id != id2 || from > second) {
		return false
	}
	p := &h.primary
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.backlog == nil || !p.backlog.Covers(from) {
		return false
	}
	line := "+CONTINUE\r\n"
	if r.conf.capaPSYNC2 {
		line = "+CONTINUE " + cur + "\r\n"
	}
	r.online = true
	r.ackAt.Store(time.Now().UnixMilli())
	p.replicas = append(p.replicas, r)
	r.sub.deliverRaw([]byte(line), 0)
	r.sub.deliverRaw(p.backlog.AppendFrom(nil, from), 0)
	p.syncPartialOK.Add(1)
	h.opts.Logger.Info("partial resynchronization accepted", "addr", replicaName(r), "from", from, "bytes", p.backlog.End()-from+1)
	return true
}
