package kv

import (
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/store"
)

// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH with Redis 7.0's
// semantics.
//
// Queueing. Between MULTI and EXEC a client's commands are copied into its
// session and answered +QUEUED (dispatch → interceptSession). A command
// rejected while queueing (unknown, wrong arity, NOAUTH, the subscribed
// context, MISCONF, OOM) marks the transaction, and EXEC then answers
// EXECABORT without running anything.
//
// Atomicity. Each loop read-locks its own exec gate (loopState.gate) for
// the whole of a batch, once per read rather than per command. EXEC lets go
// of its own gate, takes Handler.execMu (one EXEC at a time) and
// write-locks every loop's gate: every other loop is then between batches
// and stays there, so the queued commands run with no other command, HTTP
// or frame request interleaved; a script past busy-reply-threshold lets the
// other loops answer -BUSY without their gates (script_busy.go). The
// store's active expirer still runs: it
// deletes only keys already expired, which every command treats as missing
// anyway. Writes of other goroutines (AOF load, tests) do not take gates:
// they run before serving or without loops.
//
// WATCH. A watched key is registered in Handler.watches (client pointers by
// key, in 64 locked shards). After a write command runs, dispatch touches
// the keys it wrote (the command table's firstKey/lastKey/step, as the AOF
// stripes use), marking every watching client dirty; while nobody watches
// (one atomic count is zero) a write pays one load. A conditional write
// that did nothing (SET NX that found the key, DEL of a missing key, an
// error) touches nothing, as in Redis. FLUSHALL/FLUSHDB touch the watched
// keys that existed, SWAPDB every watcher; the keyless writes (FUNCTION
// LOAD, DELETE, FLUSH, RESTORE) touch none. A watched key that had a TTL
// when watched and has expired by EXEC fails the EXEC too, and a key the
// store removes on its own (evicted, or expired by the active cycle)
// touches its watchers through the store's RemoveHook (storeRemoved).
//
// Persistence. The records of an EXEC's writes are logged between a MULTI
// and an EXEC record (callLogged asks execLogPrefix), so a replay applies
// all or none of them: aof.Load cuts a file that ends inside a MULTI at the
// MULTI, as Redis does. No other loop appends records while an EXEC runs,
// and a rewrite's start does not fall inside one (startRewrite from cron
// stops the world; BGREWRITEAOF inside EXEC is scheduled, as in Redis).

var _ = registerFamily(family{commands: []*command{
	{
		name: "multi", arity: 1, fn: cmdMulti,
		flags: "noscript loading stale fast allow_busy", acl: "@fast @transaction",
		doc: commandDoc{"Starts a transaction.", "1.2.0", "transactions", "O(1)"},
	},
	{
		name: "exec", arity: 1, fn: cmdExec,
		flags: "noscript loading stale skip_slowlog", acl: "@slow @transaction",
		doc: commandDoc{"Executes all commands in a transaction.", "1.2.0", "transactions", "Depends on commands in the transaction"},
	},
	{
		name: "discard", arity: 1, fn: cmdDiscard,
		flags: "noscript loading stale fast allow_busy", acl: "@fast @transaction",
		doc: commandDoc{"Discards a transaction.", "2.0.0", "transactions", "O(N), when N is the number of queued commands"},
	},
	{
		name: "watch", arity: -2, fn: cmdWatch,
		flags: "noscript loading stale fast allow_busy", acl: "@fast @transaction",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Monitors changes to keys to determine the execution of a transaction.", "2.2.0", "transactions", "O(1) for every key."},
	},
	{
		name: "unwatch", arity: 1, fn: cmdUnwatch,
		flags: "noscript loading stale fast allow_busy", acl: "@fast @transaction",
		doc: commandDoc{"Forgets about watched keys of a transaction.", "2.2.0", "transactions", "O(1)"},
	},
}})

const (
	errExecWithoutMulti    = "ERR EXEC without MULTI"
	errDiscardWithoutMulti = "ERR DISCARD without MULTI"
	errMultiNested         = "ERR MULTI calls can not be nested"
	errWatchInMulti        = "ERR WATCH inside MULTI is not allowed"
	errExecAbort           = "EXECABORT Transaction discarded because of previous errors."
	errOOMCommand          = "OOM command not allowed when used memory > 'maxmemory'."
)

// session is a client's transaction and pub/sub state, allocated on its
// first MULTI, WATCH or subscription (most clients never need it) and kept
// until the connection closes. The loop goroutine owns the plain fields;
// the atomics are also read or written by other loops (CLIENT LIST, writes
// touching a watched key, PUBLISH).
type session struct {
	multi       bool // between MULTI and EXEC/DISCARD
	dirty       bool // a command was rejected while queueing
	execing     bool // EXEC is running the queue
	multiLogged bool // this EXEC's MULTI record is in the AOF buffer
	denyOOM     bool // a queued command has the denyoom flag
	writes      bool // a queued command has the write flag
	queue       []queuedCommand
	watched     []watchedKey

	// blocked is the wait of a client parked by a blocking command
	// (blocking.go); the client's loop only.
	blocked *waiter
	// paused: a CLIENT PAUSE holds the client's next command (pause.go;
	// the loop only).
	paused bool

	sub atomic.Pointer[subscriber] // pub/sub, from the first subscription (pubsub.go)
	// tracking is CLIENT TRACKING's settings, nil while off; caching
	// is CLIENT CACHING's mark for the next command (tracking.go; the
	// loop only).
	tracking atomic.Pointer[trackingState]
	caching  int8
	// reply is CLIENT REPLY's mode; noEvict CLIENT NO-EVICT's (read by
	// cron). operator.go.
	reply   uint8
	noEvict atomic.Bool
	monitor atomic.Bool // MONITOR (monitor.go)

	casDirty atomic.Bool  // a watched key was written (any loop)
	queued   atomic.Int32 // commands queued, -1 outside MULTI: CLIENT LIST's multi=
}

// queuedCommand is one command waiting for EXEC: its arguments, copied out
// of the input buffer into one allocation.
type queuedCommand struct {
	args [][]byte
}

// watchedKey is one WATCHed key: expireAt is its expiry time when watched
// (0: none), so an EXEC after it fails as Redis's does.
type watchedKey struct {
	dbKey
	expireAt int64
}

// sessionOf returns cl's session, creating it.
func (cl *client) sessionOf() *session {
	s := cl.sess.Load()
	if s == nil {
		s = &session{}
		s.queued.Store(-1)
		cl.sess.Store(s)
	}
	return s
}

// waiting returns the wait cl is parked in, or nil (blocking.go).
func (cl *client) waiting() *waiter {
	if s := cl.sess.Load(); s != nil {
		return s.blocked
	}
	return nil
}

// inExec reports whether cl is running an EXEC's queue.
func (cl *client) inExec() bool {
	s := cl.sess.Load()
	return s != nil && s.execing
}

// flagRejected marks cl's transaction, if any, after a command was refused
// while queueing: EXEC will answer EXECABORT.
func (cl *client) flagRejected() {
	if s := cl.sess.Load(); s != nil && s.multi {
		s.dirty = true
	}
}

// interceptSession runs before a command of a client with a session: in
// the RESP2 subscribed context only the pub/sub commands, PING, QUIT and
// RESET run, and inside MULTI commands are queued. It reports whether it
// answered the command.
func (h *Handler) interceptSession(s *session, cl *client, cmd *command, args [][]byte, counters *commandCounters) bool {
	if s.execing {
		return false
	}
	if cl.proto == 2 && s.sub.Load().subscribed() && !allowedWhileSubscribed(cmd) {
		counters.rejected.Add(1)
		cl.writeError("ERR Can't execute '" + cmd.fullName() + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
		cl.flagRejected()
		return true
	}
	if !s.multi {
		return false
	}
	switch cmd.name {
	case "exec", "discard", "quit", "reset":
		return false
	}
	if h.outOfMemory() {
		counters.rejected.Add(1)
		cl.writeError(errOOMCommand)
		s.dirty = true
		return true
	}
	switch cmd.name {
	case "multi", "watch":
		return false
	}
	if cmd.logged && h.aof != nil {
		if msg := h.aof.WriteError(); msg != "" {
			counters.rejected.Add(1)
			cl.writeError("MISCONF " + msg)
			s.dirty = true
			return true
		}
	}
	s.enqueue(cmd, args)
	cl.out = append(cl.out, "+QUEUED\r\n"...)
	return true
}

// outOfMemory reports whether Redis would refuse a command queued in MULTI
// for memory: maxmemory is set, the data is over it and the policy cannot
// evict.
func (h *Handler) outOfMemory() bool {
	limit := h.shared.MaxMemory()
	return limit > 0 && h.shared.Policy() == store.NoEviction && h.usedMemory() > limit
}

func allowedWhileSubscribed(cmd *command) bool {
	switch cmd.name {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "ping", "quit", "reset":
		return true
	}
	return false
}

// enqueue copies args (slices of the input buffer) for EXEC.
func (s *session) enqueue(cmd *command, args [][]byte) {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	copied := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		copied[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	s.queue = append(s.queue, queuedCommand{args: copied})
	s.queued.Store(int32(min(len(s.queue), 1<<31-1)))
	s.denyOOM = s.denyOOM || hasWord(cmd.flags, "denyoom")
	s.writes = s.writes || cmd.logged
}

func cmdMulti(_ *Handler, cl *client, _ [][]byte) {
	s := cl.sessionOf()
	if s.multi {
		cl.writeError(errMultiNested)
		return
	}
	s.multi = true
	s.queued.Store(0)
	cl.writeOK()
}

func cmdDiscard(h *Handler, cl *client, _ [][]byte) {
	s := cl.sess.Load()
	if s == nil || !s.multi {
		cl.writeError(errDiscardWithoutMulti)
		return
	}
	h.endTransaction(s)
	cl.writeOK()
}

// endTransaction forgets the queue and the watched keys.
func (h *Handler) endTransaction(s *session) {
	s.multi, s.dirty, s.denyOOM, s.writes = false, false, false, false
	clear(s.queue)
	if cap(s.queue) > 64 {
		s.queue = nil
	}
	s.queue = s.queue[:0]
	s.queued.Store(-1)
	h.unwatchAll(s)
}

func cmdExec(h *Handler, cl *client, _ [][]byte) {
	s := cl.sess.Load()
	if s == nil || !s.multi {
		cl.writeError(errExecWithoutMulti)
		return
	}
	if s.dirty {
		h.endTransaction(s)
		cl.writeError(errExecAbort)
		return
	}
	// Redis refuses an EXEC whose queue it would refuse now.
	if s.denyOOM && h.outOfMemory() {
		h.endTransaction(s)
		cl.writeError("EXECABORT Transaction discarded because of: " + errOOMCommand)
		return
	}
	if s.writes && h.aof != nil {
		if msg := h.aof.WriteError(); msg != "" {
			h.endTransaction(s)
			cl.writeError("EXECABORT Transaction discarded because of: MISCONF " + msg)
			return
		}
	}
	// Deferred, so that a panic in a queued command (which the eventloop
	// recovers, closing this client) does not leave every loop stopped.
	defer h.resumeWorld(cl, h.stopWorld(cl))
	if s.casDirty.Load() || h.watchedExpired(s) {
		h.endTransaction(s)
		if cl.proto >= 3 {
			cl.out = resp.AppendNull(cl.out)
		} else {
			cl.out = resp.AppendNullArray(cl.out)
		}
		return
	}
	h.unwatchAll(s) // as Redis: the queue's own writes need not touch them
	queue := s.queue
	s.multi, s.execing = false, true
	s.queued.Store(-1)
	cl.writeArray(len(queue))
	for _, q := range queue {
		if h.busy.frozen.Load() {
			break // SHUTDOWN NOSAVE stopped a script of the queue: nothing more runs
		}
		h.dispatch(cl, q.args)
	}
	s.execing = false
	if s.multiLogged && h.busy.frozen.Load() {
		// No EXEC record: a replay drops the transaction, as Redis, which
		// exits without logging it, would not have it either.
		s.multiLogged = false
	}
	if s.multiLogged {
		s.multiLogged = false
		h.logExec(cl) // aof.go
	}
	h.endTransaction(s)
	cl.failed = false // EXEC itself succeeded, whatever its commands answered
}

// execLogPrefix is called by callLogged as it appends a record: it
// returns the MULTI record that precedes the first record of an EXEC or a
// script (logExec writes the EXEC after the last), nil for any other.
func (cl *client) execLogPrefix() []byte {
	s := cl.sess.Load()
	if s == nil || !s.execing || s.multiLogged {
		return nil
	}
	s.multiLogged = true
	return multiRecord
}

// execGate is a loop's exec gate: the loop read-locks it for each batch,
// EXEC write-locks every loop's (stopWorld). It is alone on its cache lines
// in loopState, whose other fields only its loop writes.
type execGate struct {
	mu sync.RWMutex
	// held: the loop holds mu for reading. A batch served in busy mode
	// (script_busy.go) does not, nor does the loop of a script that
	// SHUTDOWN NOSAVE stopped, which never resumes the world. The loop
	// goroutine only, as busy.
	held bool
	busy bool // the loop is serving a batch in busy mode
	// batchHold: the loop is in a RESP batch (gatedBatch), which may keep
	// the world a script stopped until the batch ends; worldHeld: it
	// does. A pipeline of scripts then pays one stop and one resume, not
	// one per script. The loop goroutine only.
	batchHold bool
	worldHeld bool
}

// enter and leave bracket one batch of a loop; tryEnter enters only if no
// EXEC or script holds the gate.
func (g *execGate) enter() {
	g.mu.RLock()
	g.held = true
}

func (g *execGate) tryEnter() bool {
	if !g.mu.TryRLock() {
		return false
	}
	g.held = true
	return true
}

func (g *execGate) leave() {
	if g.held {
		g.held = false
		g.mu.RUnlock()
	}
}

// stopWorld waits until every other loop is between batches and keeps
// them there, for an EXEC by cl (nil: a goroutine that holds no gate, such
// as cron). A client without a connection (AOF load, tests) runs alone and
// stops nothing. It reports whether it stopped the world.
func (h *Handler) stopWorld(cl *client) bool {
	if cl != nil && (cl.conn == nil || cl.stats == nil || cl.stats.gate.worldHeld) {
		return false // alone, or cl's batch holds the world stopped already
	}
	if cl != nil {
		cl.stats.gate.leave()
	}
	h.execMu.Lock()
	h.stopped = h.stopped[:0]
	if p := h.cmdStats.loops.Load(); p != nil {
		for _, ls := range *p {
			if ls != nil {
				ls.gate.mu.Lock()
				h.stopped = append(h.stopped, ls)
			}
		}
	}
	return true
}

// stopWorldForScript stops the world for a script or function cl runs
// outside EXEC. In a RESP batch the world stays stopped until the batch
// ends (gatedBatch: endBatch), so the scripts pipelined after it run
// without a stop and a resume each. It reports whether the caller must
// resume the world itself.
func (h *Handler) stopWorldForScript(cl *client) bool {
	if cl.inExec() || !h.stopWorld(cl) {
		return false
	}
	if g := &cl.stats.gate; g.batchHold {
		g.worldHeld = true
		return false
	}
	return true
}

// endBatch ends a RESP batch of cl's loop: it resumes the world a script
// of the batch kept stopped, and leaves the gate.
func (h *Handler) endBatch(cl *client) {
	g := &cl.stats.gate
	g.batchHold = false
	if g.worldHeld {
		g.worldHeld = false
		h.resumeWorld(cl, true)
	}
	g.leave()
}

// resumeWorld undoes stopWorld, and wakes the loops waiting for their
// gate (awaitGate). After SHUTDOWN NOSAVE stopped a busy script the world
// stays stopped: no command touches the store again (script_busy.go).
func (h *Handler) resumeWorld(cl *client, stopped bool) {
	if !stopped || h.busy.frozen.Load() {
		return
	}
	// The gates locked, not the loops there are now: a command of the
	// transaction may have added one (REPLICAOF's link, from Sentinel's
	// MULTI ... EXEC).
	for _, ls := range h.stopped {
		ls.gate.mu.Unlock()
	}
	h.execMu.Unlock()
	h.busy.wake.broadcast()
	if cl != nil {
		cl.stats.gate.enter()
	}
}

// watchShards is a power of two: the shards of Handler.watches.
const watchShards = 64

// watchTable is every client's watched keys, by key.
type watchTable struct {
	// active counts watched (client, key) pairs: a write checks it after
	// it ran and skips the table while it is zero. Its cache line is read
	// by every write and written only by WATCH and its undoing.
	_      [64]byte
	active atomic.Int64
	_      [56]byte
	shards [watchShards]watchShard
}

type watchShard struct {
	mu   sync.Mutex
	keys map[dbKey][]*session
	_    [48]byte
}

func (h *Handler) watchShard(key []byte) *watchShard {
	return &h.watches.shards[h.shared.ShardIndex(key)&(watchShards-1)]
}

func cmdWatch(h *Handler, cl *client, args [][]byte) {
	s := cl.sessionOf()
	if s.multi {
		cl.writeError(errWatchInMulti)
		return
	}
	db := cl.selected.Load()
	for _, key := range args[1:] {
		if s.watches(db, key) {
			continue
		}
		wk := watchedKey{dbKey: dbKey{db, string(key)}}
		if t := cl.db().ExpireTime(key); t > 0 {
			wk.expireAt = t
		}
		// Count first: a write that finds the count zero after it ran
		// finished before this WATCH began.
		h.watches.active.Add(1)
		sh := h.watchShard(key)
		sh.mu.Lock()
		if sh.keys == nil {
			sh.keys = make(map[dbKey][]*session)
		}
		sh.keys[wk.dbKey] = append(sh.keys[wk.dbKey], s)
		sh.mu.Unlock()
		s.watched = append(s.watched, wk)
	}
	cl.writeOK()
}

func (s *session) watches(db int32, key []byte) bool {
	for i := range s.watched {
		if s.watched[i].db == db && s.watched[i].key == string(key) {
			return true
		}
	}
	return false
}

func cmdUnwatch(h *Handler, cl *client, _ [][]byte) {
	if s := cl.sess.Load(); s != nil {
		h.unwatchAll(s)
	}
	cl.writeOK()
}

// unwatchAll forgets s's watched keys and clears its dirty mark.
func (h *Handler) unwatchAll(s *session) {
	for _, wk := range s.watched {
		sh := h.watchShard([]byte(wk.key))
		sh.mu.Lock()
		list := sh.keys[wk.dbKey]
		for i, other := range list {
			if other == s {
				list[i] = list[len(list)-1]
				list[len(list)-1] = nil
				list = list[:len(list)-1]
				break
			}
		}
		if len(list) == 0 {
			delete(sh.keys, wk.dbKey)
		} else {
			sh.keys[wk.dbKey] = list
		}
		sh.mu.Unlock()
		h.watches.active.Add(-1)
	}
	clear(s.watched)
	s.watched = s.watched[:0]
	s.casDirty.Store(false)
}

// watchedExpired reports whether a watched key that had a TTL when watched
// has expired since: Redis fails the EXEC.
func (h *Handler) watchedExpired(s *session) bool {
	now := int64(-1)
	for _, wk := range s.watched {
		if wk.expireAt == 0 {
			continue
		}
		if now < 0 {
			now = h.shared.Now()
		}
		if wk.expireAt <= now {
			return true
		}
	}
	return false
}

// touchKey marks every client watching key of database 0 dirty: the HTTP
// and frame fronts, which serve database 0, call it after a write.
func (h *Handler) touchKey(key []byte) { h.touchKeyIn(0, key) }

// touchKeyIn marks every client watching key of database db dirty and
// invalidates the key for the clients that may cache it (tracking.go).
func (h *Handler) touchKeyIn(db int, key []byte) {
	if h.watches.active.Load() != 0 {
		h.touchWatched(int32(db), key)
	}
	if h.tracking.active.Load() != 0 {
		h.invalidate(nil, key)
	}
}

func (h *Handler) touchWatched(db int32, key []byte) {
	sh := h.watchShard(key)
	sh.mu.Lock()
	for _, s := range sh.keys[dbKey{db, string(key)}] {
		s.casDirty.Store(true)
	}
	sh.mu.Unlock()
}

// touchAll marks every watching client dirty.
func (h *Handler) touchAll() {
	for i := range h.watches.shards {
		sh := &h.watches.shards[i]
		sh.mu.Lock()
		for _, list := range sh.keys {
			for _, s := range list {
				s.casDirty.Store(true)
			}
		}
		sh.mu.Unlock()
	}
}

// watchedExisting returns the watched keys that exist now, for a FLUSHALL
// (all) or a FLUSHDB of database db about to run.
func (h *Handler) watchedExisting(db int32, all bool) []dbKey {
	var keys []dbKey
	for i := range h.watches.shards {
		sh := &h.watches.shards[i]
		sh.mu.Lock()
		for k := range sh.keys {
			if all || k.db == db {
				keys = append(keys, k)
			}
		}
		sh.mu.Unlock()
	}
	existing := keys[:0]
	for _, k := range keys {
		if s := h.existingDB(int(k.db)); s != nil && s.Exists([][]byte{[]byte(k.key)}) > 0 {
			existing = append(existing, k)
		}
	}
	return existing
}

// touchWritten runs after a write command, while somebody watches: it
// touches the keys the command wrote, if its reply says it wrote any.
// flushed is what watchedExisting returned before a FLUSHALL/FLUSHDB (nil
// if nobody watched then).
func (h *Handler) touchWritten(db int32, cmd *command, args [][]byte, reply []byte, flushed []dbKey, flushChecked bool) {
	if len(reply) == 0 || reply[0] == '-' || !wroteSomething(cmd, args, reply) {
		return
	}
	switch {
	case cmd.log == logFlush:
		if !flushChecked {
			h.touchAll() // WATCH ran while the flush did: be safe
			return
		}
		for _, k := range flushed {
			h.touchWatched(k.db, []byte(k.key))
		}
	case cmd.keysOf != nil:
		forEachWrittenKey(cmd, args, func(key []byte) { h.touchWatched(db, key) })
	case cmd.firstKey > 0:
		last := cmd.lastKey
		if last < 0 {
			last += len(args)
		}
		for i := cmd.firstKey; i <= last && i < len(args); i += cmd.step {
			h.touchWatched(db, args[i])
		}
	case cmd.movableKeys || cmd.name == "swapdb":
		// Keys the table does not place (numkeys arguments), or every
		// key of two databases: every watcher, rather than miss one.
		h.touchAll()
	}
	// Other writes without keys (FUNCTION LOAD, DELETE, FLUSH, RESTORE)
	// change no key, and touch no watch, as in Redis.
}

// wroteSomething reports, from a successful reply, whether a conditional
// write changed anything; the same conditions decide whether it is logged.
func wroteSomething(cmd *command, args [][]byte, reply []byte) bool {
	switch cmd.log {
	case logSet:
		return setWrote(args, reply)
	case logSetNX, logMSetNX, logExpire, logIfOne, logRenameNX:
		return isOne(reply)
	case logIfNonZero:
		return string(reply) != ":0\r\n"
	case logGetDel:
		return !isNull(reply)
	case logGetEx:
		return len(args) > 2 && !isNull(reply)
	}
	return true
}
