package kv

import (
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/internal/ascii"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/cluster"
	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/store"
)

// Version is the Redis version Shoal reports in INFO and HELLO: the
// redis-server release whose commands and replies it reproduces, so clients
// that gate features on redis_version behave as with that server.
const Version = "7.0.15"

// Options configures a Handler. The zero value serves without a password.
type Options struct {
	// RequirePass, if set, makes every command except AUTH, HELLO, QUIT and
	// RESET answer NOAUTH until the client authenticates.
	RequirePass string
	// DisableProtectedMode turns off Redis's protected mode, which is on by
	// default: without a password, clients from other hosts are refused.
	DisableProtectedMode bool
	// Limits bounds request sizes; the zero value means resp.DefaultLimits.
	Limits resp.Limits
	// Logger receives connection-level errors; default slog.Default().
	Logger *slog.Logger
	// LogLevel, if set, is adjusted by CONFIG SET loglevel.
	LogLevel *slog.LevelVar
	// ConfigFile is the absolute path of the configuration file the
	// server was started with, for INFO's config_file ("" for none).
	ConfigFile string
	// Params is the settings table CONFIG GET and SET serve; the Handler
	// takes over the rows it, the store and the edge own (Table.Own), and
	// applies to them what the command line set. It must hold every row of
	// config.Params. Nil: a table of config.Params with their defaults.
	Params *config.Table
}

// Handler executes Redis commands against a store for the clients the
// serving edge (package server) hands it: the edge calls OpenClient when
// a connection opens, Serve with each read's bytes, and CloseClient when
// it closes. All methods are safe for concurrent use by the loops.
type Handler struct {
	// dbs are the databases SELECT picks from, made on first use
	// (databases.go); SWAPDB swaps two. shared is the one New was given,
	// for what they all share: maxmemory, the policy, the clock, the
	// shard layout. Keys are always read through dbs.
	dbs     []atomic.Pointer[store.Store]
	made    atomic.Pointer[[]int] // indexes of the databases made, ascending (madeIndexes)
	dbMu    sync.Mutex
	shared  *store.Store
	opts    Options
	params  *config.Table // Options.Params: CONFIG GET/SET and INFO read settings here
	bind    string        // the bind setting as configured: CONFIG GET's while the edge serves a Unix socket alone
	cfg     settings      // the settings kv owns
	clients registry
	start   time.Time

	authRequired  atomic.Bool // the default user is off or has passwords (acl_users.go)
	acl           aclState    // users and the ACL log (acl*.go)
	protectedMode atomic.Bool // CONFIG protected-mode; the edge reads ProtectedMode

	// edge answers for the listener (set by Boot): port, maxclients,
	// connections refused over maxclients.
	edge atomic.Pointer[Edge]

	// clock is the wall clock in unix ms, advanced every 100 ms by cron:
	// activity times need no more, and reading the clock per request cost
	// a tenth of a non-pipelined GET.
	clock atomic.Int64

	// commandsBase is what total_commands_processed read at the last
	// CONFIG RESETSTAT; the counts themselves are per client (registry).
	commandsBase     atomic.Int64
	totalConnections atomic.Int64
	peakMemory       atomic.Int64
	ops              opsSampler
	errors           errorStats
	cmdStats         commandStats

	// flushBytes is the reply size after which execute hands replies to the
	// Conn mid-batch: the edge's flush threshold, set by Boot.
	flushBytes atomic.Int64

	// aof, if set (AttachAOF, before serving), logs every write;
	// stripes orders the logging of writes to one shard (aof.go).
	aof      *aof.Writer
	stripes  []sync.Mutex
	dels     deletionLog // the store's own deletions, logged (expiry_log.go)
	rw       rewriter
	blocking blockingState // clients parked by blocking commands (blocking.go)

	// execMu lets one EXEC at a time stop the loops; watches are the
	// WATCHed keys; pubsub the channels and patterns (multi.go, pubsub.go).
	execMu  sync.Mutex
	stopped []*loopState // the loops whose gates stopWorld locked; under execMu
	watches watchTable
	pubsub  pubsubRegistry
	// busy is the running script as other loops see it: past
	// busy-reply-threshold they answer -BUSY (script_busy.go).
	busy busyState
	// scripting is the Lua engine: scripts, functions and their state
	// (script.go), made on first use.
	scripting atomic.Pointer[scriptEngine]

	outLimits       outputLimits              // client-output-buffer-limit, maxmemory-clients (outlimits.go)
	tracking        trackingTable             // CLIENT TRACKING: who may cache which keys (tracking.go)
	monitors        monitors                  // MONITOR clients (monitor.go)
	slowlog         slowlog                   // SLOWLOG (slowlog.go)
	latencyTracking latencyTracking           // latency-tracking and its percentiles (latencytracking.go)
	pause           pauseState                // CLIENT PAUSE (pause.go)
	snap            atomic.Pointer[snapshots] // SAVE, BGSAVE, the save policy's cron (save.go)
	repl            replication               // REPLICAOF, the link to a primary, the history's ID and offset (repl.go)
	primary         primarySide               // replicas, the stream and its backlog (primary.go)
	failover        failoverState             // FAILOVER (failover.go)
	// cluster is the Redis Cluster node h is part of (AttachCluster,
	// before serving), nil outside cluster mode (cluster_check.go).
	cluster *cluster.State

	closeOnce sync.Once
	done      chan struct{}

	shutdownOnce sync.Once
	shutdown     chan struct{} // closed by SHUTDOWN (ShutdownRequested)
	shutdownSave int           // SHUTDOWN's SAVE or NOSAVE, set before shutdown closes
}

// Boot tells h about the serving edge once it starts: how many loops it
// runs (every loop's counters and exec gate exist from the start, so an
// EXEC's stopWorld sees them all), when to hand long batches of replies
// over, and who answers for the listener and applies the output limits.
func (h *Handler) Boot(b BootInfo) {
	if b.FlushThreshold > 0 {
		h.flushBytes.Store(int64(b.FlushThreshold))
	}
	if b.Edge != nil {
		h.edge.Store(&b.Edge)
		h.ownListener()
		h.bootOutputLimits()
	}
	for i := 0; i < b.Loops; i++ {
		h.cmdStats.forLoop(i)
	}
	h.bootReplication()
}

// New returns a Handler serving s. Call Close to stop its background
// sampler.
func New(s *store.Store, o Options) *Handler {
	if o.Params == nil {
		o.Params = config.New(config.Params())
	}
	if o.Limits == (resp.Limits{}) {
		o.Limits = resp.DefaultLimits
		o.Limits.MaxBulkLen = o.Params.Int("proto-max-bulk-len")
		// Redis 7 accepts up to INT_MAX arguments from authenticated
		// clients; the parser grows its slice only as arguments arrive.
		o.Limits.MaxMultibulkLen = math.MaxInt32
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	h := &Handler{shared: s, opts: o, params: o.Params, start: time.Now(), done: make(chan struct{}), shutdown: make(chan struct{})}
	h.dbs = make([]atomic.Pointer[store.Store], o.Params.Int("databases"))
	h.bind = o.Params.Get("bind")
	h.dbs[0].Store(s)
	h.flushBytes.Store(DefaultFlushThreshold)
	h.initACL()
	h.ownSettings(o)
	h.ownBusyThreshold()
	h.initReplication()
	h.initPrimary()
	h.clock.Store(nowMillis())
	go h.cron()
	return h
}

// Close stops the Handler's background work and the databases it made. It
// does not close connections (the edge owns them) or the store New was
// given.
func (h *Handler) Close() {
	h.closeOnce.Do(func() {
		close(h.done)
		h.closeReplication()
		h.closeDBs()
	})
}

// FlushThreshold is the reply size after which Serve hands replies to the
// Conn mid-batch (Boot's, or DefaultFlushThreshold).
func (h *Handler) FlushThreshold() int { return int(h.flushBytes.Load()) }

// Store is database 0, which the HTTP and frame fronts serve: the store
// New was given until a SWAPDB 0 swaps another in. Read it per request.
func (h *Handler) Store() *store.Store { return h.db(0) }

// Logger is where h and its edge log.
func (h *Handler) Logger() *slog.Logger { return h.opts.Logger }

// OpenClient sets up cl for a new connection served through conn. The
// edge calls it on the connection's loop before the first Serve.
func (h *Handler) OpenClient(cl *Client, conn Conn, info ConnInfo) {
	now := nowMillis()
	c := &cl.c
	*c = client{
		conn:        conn,
		h:           h,
		proto:       2,
		valueDigits: 1,
		authed:      !h.authRequired.Load(),
		id:          h.clients.nextID.Add(1),
		addr:        info.RemoteAddr,
		laddr:       info.LocalAddr,
		fd:          int32(info.Fd),
		unixSocket:  info.UnixSocket,
		createdAt:   now,
	}
	c.names.Store(h.acl.defaultNames)
	c.parser.Limits = &h.opts.Limits
	c.parser.Unauthenticated = !c.authed
	c.stats = h.cmdStats.forLoop(info.Loop)
	c.lastActive.Store(now)
	c.protoShown.Store(2)
	h.clients.add(c)
	h.totalConnections.Add(1)
}

// CloseClient ends cl's commands when its connection has closed: it leaves
// CLIENT LIST, its blocking wait, transaction and subscriptions end. The
// edge calls it on the connection's loop.
func (h *Handler) CloseClient(cl *Client) {
	c := &cl.c
	h.clients.remove(c)
	h.cancelWait(c)
	h.stopTracking(c)
	h.stopMonitor(c)
	h.forgetPaused(c)
	h.forgetReplica(c)
	if s := c.sess.Load(); s != nil {
		h.endSession(c, s)
	}
}

// Serve executes every complete command in `in`, appending the replies to
// the output buffer of cl's Conn, and returns how many bytes it consumed.
// A partial command is left for the next call. The edge calls it on the
// connection's loop with the bytes read (zero-copy: `in` is not kept).
func (h *Handler) Serve(clt *Client, in []byte) int {
	cl := &clt.c
	c := cl.conn
	if cl.closeAfterReply || (cl.aof != nil && cl.aof.closing) {
		return len(in)
	}
	if s := cl.sess.Load(); s != nil && (s.blocked != nil || s.paused) {
		// Parked: the input waits until a reply or the timeout
		// (blocking.go), or the end of a CLIENT PAUSE (pause.go).
		return 0
	}
	cl.out = c.OutputBuffer()
	base := len(cl.out)
	// The loop lends its argument slice for this call: an idle connection
	// keeps none (about 100 bytes each at 100k connections).
	cl.parser.SwapArgs(&cl.stats.args)
	consumed := h.gatedBatch(cl, in)
	cl.parser.SwapArgs(&cl.stats.args)
	if h.aof != nil {
		h.afterBatch(cl, base)
	}
	if cl.out != nil {
		c.SetOutputBuffer(cl.out)
		cl.out = nil
	}
	if cl.closeAfterReply {
		_ = c.Close()
	}
	return consumed
}

// gatedBatch runs onBatch holding the loop's exec gate: an EXEC on another
// loop waits until no loop is inside a batch (multi.go). The gate is left
// by a defer (endBatch, which also resumes a world that a script of the
// batch kept stopped), so a command that panics (the eventloop recovers it
// and closes the connection) does not keep every EXEC waiting forever. While
// the gate is taken the loop waits, unless a script turns busy: then it
// serves the batch without the gate (script_busy.go).
func (h *Handler) gatedBatch(cl *client, in []byte) int {
	gate := &cl.stats.gate
	if !gate.tryEnter() && !h.awaitGate(gate) {
		return h.busyBatch(cl, in)
	}
	gate.batchHold = true
	defer h.endBatch(cl)
	return h.onBatch(cl, in)
}

// onBatch is the per-read work of OnTraffic that does not touch the Conn:
// the client's activity time, its commands, and the statistics.
func (h *Handler) onBatch(cl *client, in []byte) int {
	if now := h.clock.Load(); cl.lastActive.Load() != now {
		cl.lastActive.Store(now)
	}
	consumed := h.execute(cl, in)
	if cl.batchCmds > 0 {
		// Only this loop writes the counter, so a load and a store
		// suffice; the atomics are for INFO reading it from other loops.
		// A shared counter here would bounce one cache line between the
		// loops on every read.
		cl.commands.Store(cl.commands.Load() + cl.batchCmds)
		cl.batchCmds = 0
	}
	return consumed
}

// totalCommands is INFO's total_commands_processed.
func (h *Handler) totalCommands() int64 {
	return h.clients.commands() - h.commandsBase.Load()
}

// execute runs every complete command at the front of in, appending the
// replies to cl.out, and returns how many bytes it consumed. It is
// OnTraffic without the Conn bookkeeping, so benchmarks can drive the
// parse-dispatch-reply path alone.
func (h *Handler) execute(cl *client, in []byte) int {
	consumed, window := 0, 0
	for consumed < len(in) {
		if consumed > 0 && consumed >= window && cl.authed && !noPrefetch {
			window = h.prefetchAhead(cl, in, consumed) // prefetch.go
		}
		if !cl.authed {
			// Redis decides per request whether the pre-AUTH limits apply:
			// another client may have cleared or set requirepass since.
			cl.parser.Unauthenticated = h.authRequired.Load()
		}
		args, n, err := cl.parser.Parse(in[consumed:])
		if err != nil {
			if errors.Is(err, resp.ErrIncomplete) {
				break
			}
			// Redis answers the commands before the bad one, then the
			// protocol error, then closes.
			cl.out = append(cl.out, '-')
			cl.out = append(cl.out, err.Error()...)
			cl.out = append(cl.out, '\r', '\n')
			cl.closeAfterReply = true
			h.opts.Logger.Debug("protocol error", "id", cl.id, "addr", cl.addr, "err", err)
			return len(in)
		}
		if h.pause.mode.Load() != pauseOff && len(args) > 0 && h.holdsCommand(cl, args) {
			return consumed // left in the input until the pause ends
		}
		consumed += n
		if len(args) == 0 {
			continue
		}
		h.dispatch(cl, args)
		// After a huge command (MSET with a million keys) the parser lets
		// its argument slice go, so an idle connection does not pin
		// megabytes; resp decides what counts as huge.
		cl.parser.Release()
		if cl.closeAfterReply {
			return len(in)
		}
		if cl.waiting() != nil {
			return consumed // the rest of the pipeline waits for the reply
		}
		if int64(len(cl.out)) >= h.flushBytes.Load() && cl.conn != nil && !cl.holdsReplies() {
			if !cl.flushMidBatch() {
				return len(in)
			}
			if cl.conn.OutputFull() {
				// The peer is not keeping up: stop here rather than
				// build the replies of a whole deep pipeline in memory.
				// The loop stops reading and presents the rest of in
				// again once the output has drained.
				return consumed
			}
		}
	}
	return consumed
}

// flushMidBatch hands the replies so far to the Conn to be written, so a
// long pipeline of large replies does not build one huge buffer. It reports
// false when the loop closed the connection (e.g. its output passed the
// hard limit): the remaining commands must not run.
func (cl *client) flushMidBatch() bool {
	cl.conn.SetOutputBuffer(cl.out)
	if err := cl.conn.Flush(); err != nil {
		cl.out = nil
		cl.closeAfterReply = true
		return false
	}
	cl.out = cl.conn.OutputBuffer()
	return true
}

// dispatch runs one command: lookup, arity, authentication, then the
// implementation, in the order redis-server checks them.
func (h *Handler) dispatch(cl *client, args [][]byte) {
	cl.batchCmds++
	cmd := dispatchIdx.find(args[0])
	if cmd == nil {
		if ascii.EqualFold(args[0], "POST") || ascii.EqualFold(args[0], "HOST:") {
			// An HTTP request sent to the Redis port (a cross-protocol
			// attack from a browser): Redis closes at once, dropping the
			// replies not yet written, so do the same.
			h.opts.Logger.Warn("possible security attack: HTTP request on the Redis port; closing", "id", cl.id, "addr", cl.addr)
			cl.out = cl.out[:0]
			cl.closeAfterReply = true
			return
		}
		cl.reject(nil, unknownCommandError(args))
		return
	}
	if cmd.subs != nil && len(args) >= 2 {
		sub := lookupName(cmd.subs, args[1])
		if sub == nil {
			cl.reject(cmd, unknownSubcommandError(cmd.name, args[1]))
			return
		}
		cmd = sub
	}
	if cl.stats == nil {
		cl.stats = h.cmdStats.forLoop(-1) // a client without a Conn: benchmarks
	}
	counters := &cl.stats.cmds[cmd.statsID]
	if !arityOK(cmd.arity, len(args)) {
		counters.rejected.Add(1)
		cl.reject(cmd, errWrongArgs(cmd.fullName()))
		return
	}
	if !cl.authed && !cmd.noAuth && h.authRequired.Load() {
		counters.rejected.Add(1)
		cl.reject(cmd, errNoAuth)
		return
	}
	if n := cl.names.Load(); n != nil && n.user != nil {
		if r := n.user.load(); !r.unrestricted && h.aclRefuses(cl, r, cmd, args, counters) {
			return // -NOPERM (acl_check.go)
		}
	}
	if h.cluster != nil && h.clusterRefuses(cl, cmd, args, counters) {
		return // -MOVED, -ASK, -CROSSSLOT, -CLUSTERDOWN (cluster_check.go)
	}
	if cl.lastCmd.Load() != cmd {
		cl.lastCmd.Store(cmd)
	}
	if cl.stats.gate.busy && h.refuseBusy(cl, cmd, counters) {
		return
	}
	if misconfHandlers.Load() != 0 && (cmd.logged || cmd.name == "ping") && h.misconf() {
		// After a failed save, as Redis: writes, and PING so that
		// monitors notice, are refused, also when queued in MULTI.
		counters.rejected.Add(1)
		cl.reject(cmd, errSaveMisconf)
		return
	}
	if g := h.repl.guard.Load(); g != 0 && h.replicaRefuses(cl, cmd, g, counters) {
		return // -READONLY, -MASTERDOWN (repl.go)
	}
	if h.primary.noReplicas.Load() && h.refusesForReplicas(cl, cmd, counters) {
		return // -NOREPLICAS (primary_info.go)
	}
	if s := cl.sess.Load(); s != nil && h.interceptSession(s, cl, cmd, args, counters) {
		return // queued in MULTI, or refused in the subscribed context (multi.go)
	}
	cl.failed = false
	timed := cl.sampleTick%timedEvery == 0
	cl.sampleTick++
	var start int64
	if timed || h.slowlog.times(cmd) {
		start = monotonicNanos()
	}
	var flushed []dbKey
	flushChecked := false
	if cmd.logged && cmd.log == logFlush && h.watches.active.Load() != 0 {
		flushed, flushChecked = h.watchedExisting(cl.selected.Load(), cmd.name == "flushall"), true
	}
	replyStart := len(cl.out)
	if cmd.logged && h.followsPrimary() && cl.conn != nil && !cl.isPrimaryLink() {
		h.reclaimBeforeWrite(cl, cmd, args) // a writable replica's own write (expiry_log.go)
	}
	switch {
	case cmd.logged && (h.aof != nil || h.primary.feeding.Load()):
		h.callLogged(cl, cmd, args)
	case cmd.mayLog && (h.aof != nil || h.primary.feeding.Load()) && !h.followsPrimary():
		h.callMayLog(cl, cmd, args)
	case h.aof != nil && cmd.reads:
		h.callReader(cl, cmd, args)
	default:
		cmd.fn(h, cl, args)
	}
	if cmd.logged && h.blocking.groupReaders.Load() != 0 && replyStart <= len(cl.out) {
		h.signalGroupReaders(cl, cmd, args, cl.out[replyStart:]) // a deleted key answers its XREADGROUPs
	}
	if st := cl.stats; len(st.ready) > 0 {
		h.serveReady(st)
	}
	// After the write, not before: a WATCH this load misses began after
	// the write was done (multi.go).
	if cmd.logged && h.watches.active.Load() != 0 && replyStart <= len(cl.out) {
		h.touchWritten(cl.selected.Load(), cmd, args, cl.out[replyStart:], flushed, flushChecked)
	}
	if h.tracking.active.Load() != 0 && replyStart <= len(cl.out) {
		switch {
		case cmd.reads:
			h.rememberKeys(cl, cmd, args)
		case cmd.logged:
			h.invalidateWritten(cl, cmd, args, cl.out[replyStart:])
		}
		if s := cl.sess.Load(); s != nil {
			s.endCaching(cmd)
		}
	}
	if h.monitors.active.Load() != 0 {
		h.feedMonitors(cl, cmd, args)
	}
	if s := cl.sess.Load(); s != nil && s.reply != replyOn {
		cl.suppressReply(s, cmd, replyStart)
	}
	counters.count(cl.failed)
	if start != 0 {
		d := monotonicNanos() - start
		if timed {
			counters.observe(d, h.latencyTracking.on.Load())
		}
		h.recordSlow(cl, cmd, args, d)
	}
}

// reject answers a command refused before it ran (unknown, wrong arity,
// NOAUTH). Inside MULTI the transaction is marked; a refused EXEC ends
// any transaction and the watches, as Redis's execCommandAbort does.
func (cl *client) reject(cmd *command, msg string) {
	s := cl.sess.Load()
	if cmd != nil && cmd.name == "exec" {
		if s != nil && !s.execing {
			cl.h.endTransaction(s)
		}
		cl.writeError("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		return
	}
	start := len(cl.out)
	cl.writeError(msg)
	cl.flagRejected()
	if s != nil && s.reply != replyOn && (cmd == nil || cmd.name != "client|reply") {
		cl.suppressReply(s, cmdRejected, start)
	}
}

// cmdRejected stands for a command refused before it ran, for
// suppressReply.
var cmdRejected = &command{name: "(rejected)"}

// opsSampler computes instantaneous_ops_per_sec the way Redis does: the
// mean rate over the last 16 samples taken every 100 ms.
type opsSampler struct {
	rate      atomic.Int64
	samples   [16]int64
	next      int
	lastCount int64
	lastTime  time.Time
}

// sample records count commands processed by now. Only cron calls it.
func (s *opsSampler) sample(count int64, now time.Time) {
	if count < s.lastCount {
		s.samples = [len(s.samples)]int64{} // CONFIG RESETSTAT, which clears them in Redis too
	} else if elapsed := now.Sub(s.lastTime); elapsed > 0 && !s.lastTime.IsZero() {
		s.samples[s.next%len(s.samples)] = (count - s.lastCount) * int64(time.Second) / int64(elapsed)
		s.next++
	}
	s.lastCount, s.lastTime = count, now
	var sum int64
	for _, r := range s.samples {
		sum += r
	}
	s.rate.Store(sum / int64(len(s.samples)))
}

// cron is the Handler's background work, every 100 ms like Redis's
// serverCron at hz 10: it advances the cached clock and samples the
// command rate.
func (h *Handler) cron() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	h.ops.sample(h.totalCommands(), time.Now())
	for {
		select {
		case <-h.done:
			return
		case now := <-t.C:
			h.clock.Store(now.UnixMilli())
			h.ops.sample(h.totalCommands(), now)
			h.maybeAutoRewrite()
			h.evictClients()
			h.releaseClientMemory()
			// As in Redis, clients' output buffers count against maxmemory.
			held, _ := h.outputMemory()
			h.shared.SetExternalMemory(held)
		}
	}
}
