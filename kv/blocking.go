package kv

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/store"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP; the sorted
// sets' BZPOPMIN/BZPOPMAX/BZMPOP can use the same machinery).
//
// A command that finds nothing to answer with parks its client (blockOn):
// the client's loop goes on serving other connections, and OnTraffic
// consumes nothing more from the client until it is answered, so the rest
// of its pipeline waits in the Conn's input. A write that makes a key
// non-empty (a push creating a list) notes the key (signalReady); once the
// write's command is done, and its AOF stripes released, the key's waiters
// are served in the order they parked (wakeKey), each by the goroutine of
// the write: the pop happens there, atomically with respect to other
// serves, and its reply is handed to the waiter's loop with Conn.Execute,
// which writes it and Conn.Resume presents the buffered pipeline. A
// timeout (a timer goroutine) and a disconnect (OnClose) take the waiter
// out of the queues instead.
//
// Concurrency: blockingState.mu guards the queues and every waiter's state;
// it is never held while the store or the AOF stripes are locked by the
// same goroutine (a serve releases it first), so it orders after them.
// session.blocked is the client's loop's only.

// blockRequest is what a blocking command waits with.
type blockRequest struct {
	keys    [][]byte // the keys it waits on, in the command's order
	touches [][]byte // other keys serve writes (BLMOVE's destination), for the AOF stripes
	timeout int64    // milliseconds; 0 waits forever
	// timeoutReply is the reply when the timeout passes, in the client's
	// protocol.
	timeoutReply []byte
	// try answers at once if it can, on the client's goroutine during the
	// command: it writes the reply (or an error) to cl.out and reports
	// whether it did. It may run more than once.
	try func() bool
	// serve answers from key, which another client's write made ready: it
	// runs on that client's goroutine, under the AOF stripes of key and
	// touches, writes the reply into res.reply in the waiter's protocol,
	// the AOF record of what it did into res.record and the keys it made
	// ready into res.ready, and reports false if key had nothing for it.
	// It must not use the command's arguments, only copies.
	serve func(key []byte, res *serveResult) bool
	// independent: serve only reads (XREAD), so a serve that found nothing
	// for this waiter says nothing of the waiters behind it, and a served
	// one wrote no key.
	independent bool
	// groupRead: an XREADGROUP, which the deletion of one of its keys
	// answers (stream_readgroup.go's signalGroupReaders).
	groupRead bool
}

// serveResult is what a serve did.
type serveResult struct {
	reply  []byte
	record []byte
	ready  [][]byte
	end    int64 // AOF offset after record
}

type waitState uint8

const (
	waitTrying  waitState = iota // registered; the command is still trying to answer at once
	waitParked                   // a write may serve it
	waitServing                  // a goroutine is serving it
	waitDone                     // served, timed out or gone
)

// waiter is one parked client.
type waiter struct {
	cl      *client
	req     blockRequest
	state   waitState // under blockingState.mu
	missed  bool      // a key woke while trying: try again; under mu
	gone    bool      // disconnected while being served; under mu
	timer   *time.Timer
	stripes []int // AOF stripes of req.keys and req.touches
	db      int32 // the database of req.keys: the client's when it parked
}

// waitQueue is the waiters of one key, oldest first.
type waitQueue struct {
	waiters []*waiter
	serving bool // a goroutine is in wakeKey for this key
	again   bool // woken again while serving: look once more
}

// blockingState is the Handler's registry of waiters.
type blockingState struct {
	mu         sync.Mutex
	queues     map[dbKey]*waitQueue
	registered atomic.Int64 // waiters in the queues: signalReady's fast test
	blocked    atomic.Int64 // clients parked, for INFO blocked_clients
	// groupReaders counts the XREADGROUPs in the queues.
	groupReaders atomic.Int64
}

// dbKey is a key of one database: what waiters wait on and WATCH
// watches.
type dbKey struct {
	db  int32
	key string
}

// signalReady notes that the running command made key, in cl's database,
// ready for waiters (a list created at it). The waiters are served after
// the command (see serveReady); with none anywhere, it costs one atomic
// load.
func (h *Handler) signalReady(cl *client, key []byte) {
	h.signalReadyIn(cl, int(cl.selected.Load()), key)
}

// signalReadyIn is signalReady for a key of database db (MOVE's target).
func (h *Handler) signalReadyIn(cl *client, db int, key []byte) {
	if h.blocking.registered.Load() == 0 || cl.stats == nil {
		return
	}
	cl.stats.ready = append(cl.stats.ready, dbKey{int32(db), string(key)})
}

// wakeDB serves the waiters of every key of database db (SWAPDB brought
// other keys under them).
func (h *Handler) wakeDB(db int) {
	if h.blocking.registered.Load() == 0 {
		return
	}
	b := &h.blocking
	b.mu.Lock()
	var keys []dbKey
	for k := range b.queues {
		if k.db == int32(db) {
			keys = append(keys, k)
		}
	}
	b.mu.Unlock()
	for _, k := range keys {
		h.wakeKey(k)
	}
}

// serveReady serves the waiters of the keys the last command made ready.
// dispatch calls it after the command, outside its AOF stripes.
func (h *Handler) serveReady(st *loopState) {
	if deferReady(st) { // a script's command: its waiters are served when the script ends (script_run.go)
		return
	}
	keys := st.ready
	st.ready = nil
	for _, k := range keys {
		h.wakeKey(k)
	}
}

// blockOn answers the command with req.try if it can, and otherwise parks
// cl until a write serves it, the timeout passes or it disconnects. A
// client without a connection (the AOF replay) or inside EXEC gets the
// timeout reply at once.
func (h *Handler) blockOn(cl *client, req blockRequest) {
	if req.try() {
		return
	}
	if cl.conn == nil || cl.inExec() {
		// Inside EXEC a blocking command does not block, as in Redis: it
		// answers as if it had timed out.
		cl.out = append(cl.out, req.timeoutReply...)
		return
	}
	b := &h.blocking
	req.keys = copyKeys(req.keys)
	req.touches = copyKeys(req.touches)
	w := &waiter{cl: cl, req: req, db: cl.selected.Load()}
	if h.aof != nil || h.primary.feeding.Load() { // logged: h.stripes exist
		w.stripes = h.waiterStripes(req)
	}
	b.mu.Lock()
	b.register(w)
	b.mu.Unlock()
	// Registered before this second try: a write that lands after the
	// first one either is seen by it, or finds w trying and marks it.
	for {
		if req.try() {
			b.mu.Lock()
			b.unregister(w)
			b.mu.Unlock()
			return
		}
		b.mu.Lock()
		if !w.missed {
			break
		}
		w.missed = false
		b.mu.Unlock()
	}
	w.state = waitParked
	cl.sessionOf().blocked = w
	b.blocked.Add(1)
	if req.timeout > 0 {
		d := time.Duration(min(req.timeout, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
		w.timer = time.AfterFunc(d, func() { h.expireWaiter(w) })
	}
	b.mu.Unlock()
}

func copyKeys(keys [][]byte) [][]byte {
	if len(keys) == 0 {
		return nil
	}
	c := make([][]byte, len(keys))
	for i, k := range keys {
		c[i] = append([]byte(nil), k...)
	}
	return c
}

// register appends w to the queue of each of its keys (once per key).
// Under mu.
func (b *blockingState) register(w *waiter) {
	if b.queues == nil {
		b.queues = make(map[dbKey]*waitQueue)
	}
	for i, k := range w.req.keys {
		if slices.ContainsFunc(w.req.keys[:i], func(o []byte) bool { return string(o) == string(k) }) {
			continue
		}
		q := b.queues[dbKey{w.db, string(k)}]
		if q == nil {
			q = &waitQueue{}
			b.queues[dbKey{w.db, string(k)}] = q
		}
		q.waiters = append(q.waiters, w)
	}
	b.registered.Add(1)
	if w.req.groupRead {
		b.groupReaders.Add(1)
	}
}

// unregister takes w out of its keys' queues and marks it done. Under mu.
func (b *blockingState) unregister(w *waiter) {
	if w.state == waitDone {
		return
	}
	w.state = waitDone
	for _, k := range w.req.keys {
		q := b.queues[dbKey{w.db, string(k)}]
		if q == nil {
			continue
		}
		if i := slices.Index(q.waiters, w); i >= 0 {
			q.waiters = slices.Delete(q.waiters, i, i+1)
		}
		if len(q.waiters) == 0 && !q.serving {
			delete(b.queues, dbKey{w.db, string(k)})
		}
	}
	b.registered.Add(-1)
	if w.req.groupRead {
		b.groupReaders.Add(-1)
	}
}

// wakeKey serves key's waiters, oldest first, while key has something for
// them. One goroutine serves a key at a time; a wake meanwhile makes it
// look again, so no wake-up is lost and the order holds.
func (h *Handler) wakeKey(k dbKey) {
	key := []byte(k.key)
	b := &h.blocking
	b.mu.Lock()
	q := b.queues[k]
	if q == nil {
		b.mu.Unlock()
		return
	}
	if q.serving {
		q.again = true
		b.mu.Unlock()
		return
	}
	q.serving = true
	for {
		q.again = false
		for i := 0; i < len(q.waiters); {
			w := q.waiters[i]
			switch w.state {
			case waitTrying:
				w.missed = true
				i++
				continue
			case waitParked:
			default:
				i++
				continue
			}
			w.state = waitServing
			b.mu.Unlock()
			res, ok := h.serveWaiter(w, key)
			b.mu.Lock()
			if !ok {
				if w.gone {
					b.unregister(w)
				} else {
					w.state = waitParked
					i++
				}
				if w.req.independent {
					continue
				}
				break // key has nothing left for the waiters behind w either
			}
			gone := w.gone
			b.unregister(w)
			b.mu.Unlock()
			// The pop (and BLMOVE's push) wrote these keys: WATCHes of them
			// fail, as for any write (multi.go).
			if !w.req.independent {
				h.touchKeyIn(int(k.db), key)
			}
			for _, t := range w.req.touches {
				h.touchKeyIn(int(k.db), t)
			}
			if !gone {
				h.deliver(w, res.reply, res.end)
			}
			for _, r := range res.ready {
				h.wakeKey(dbKey{k.db, string(r)})
			}
			b.mu.Lock()
			i = 0 // the queue changed: start again from its head
		}
		if !q.again {
			break
		}
	}
	q.serving = false
	if len(q.waiters) == 0 && b.queues[k] == q {
		delete(b.queues, k)
	}
	b.mu.Unlock()
}

// waiterStripes returns the AOF stripes of req's keys and touches, sorted.
func (h *Handler) waiterStripes(req blockRequest) []int {
	var stripes []int
	for _, k := range slices.Concat(req.keys, req.touches) {
		stripes = append(stripes, h.shared.ShardIndex(k))
	}
	slices.Sort(stripes)
	return slices.Compact(stripes)
}

// serveWaiter runs w's serve for key, under the AOF stripes of w's keys
// when a file is attached or a replica is fed, and logs what it did. A
// waiter parked before either began has no stripes yet: they are taken
// now, or its serve would run outside them, neither ordered with the other
// writes to its keys nor copied into a full sync's snapshot before it
// writes (BLMOVE's destination then reached a first replica twice, in the
// snapshot and in the stream).
func (h *Handler) serveWaiter(w *waiter, key []byte) (serveResult, bool) {
	var res serveResult
	if h.aof == nil && !h.primary.feeding.Load() {
		return res, w.req.serve(key, &res)
	}
	if w.stripes == nil { // w is this goroutine's while it serves
		w.stripes = h.waiterStripes(w.req)
	}
	for _, i := range w.stripes {
		h.stripes[i].Lock()
	}
	defer func() {
		for _, i := range w.stripes {
			h.stripes[i].Unlock()
		}
	}()
	if h.rw.active.Load() {
		h.copyStripesBeforeWrite(w.stripes)
	}
	h.syncCopyBeforeWrite(w.stripes) // a full sync's snapshot (primary_snapshot.go)
	ok := w.req.serve(key, &res)
	h.flushDeletions(w.stripes...) // the keys it found expired go first (expiry_log.go)
	if ok && len(res.record) > 0 && h.aof != nil {
		buf := h.aof.Select(h.aof.Begin(), int(w.db))
		res.end = h.aof.End(append(buf, res.record...))
	}
	if ok && len(res.record) > 0 && h.primary.feeding.Load() {
		h.feedStream(int(w.db), res.record) // primary.go
	}
	return res, ok
}

// deliver hands a served waiter's reply to its loop.
func (h *Handler) deliver(w *waiter, reply []byte, end int64) {
	if w.timer != nil {
		w.timer.Stop()
	}
	_ = w.cl.conn.Run(func() { h.finishWait(w, reply, end) })
}

// expireWaiter runs on the timer's goroutine when w's timeout passes.
func (h *Handler) expireWaiter(w *waiter) {
	b := &h.blocking
	b.mu.Lock()
	if w.state != waitParked {
		b.mu.Unlock()
		return
	}
	b.unregister(w)
	b.mu.Unlock()
	_ = w.cl.conn.Run(func() { h.finishWait(w, w.req.timeoutReply, 0) })
}

// finishWait runs on the waiter's loop: it writes the reply (through the
// AOF's holding of replies when a file is attached), unparks the client
// and presents its buffered pipeline.
func (h *Handler) finishWait(w *waiter, reply []byte, end int64) {
	cl := w.cl
	if cl.waiting() != w {
		return
	}
	cl.sess.Load().blocked = nil
	h.blocking.blocked.Add(-1)
	c := cl.conn
	cl.out = c.OutputBuffer()
	if cl.out == nil {
		return
	}
	base := len(cl.out)
	cl.out = append(cl.out, reply...)
	if h.aof != nil {
		if end > 0 {
			if cl.aof == nil {
				cl.aof = &aofState{}
			}
			cl.aof.end = max(cl.aof.end, end)
		}
		h.afterBatch(cl, base)
	}
	if cl.out != nil {
		c.SetOutputBuffer(cl.out)
		cl.out = nil
	}
	c.Resume()
}

// cancelWait takes a parked client out of the queues when it disconnects.
// OnClose calls it on the client's loop.
func (h *Handler) cancelWait(cl *client) {
	w := cl.waiting()
	if w == nil {
		return
	}
	cl.sess.Load().blocked = nil
	h.blocking.blocked.Add(-1)
	if w.timer != nil {
		w.timer.Stop()
	}
	b := &h.blocking
	b.mu.Lock()
	if w.state == waitServing {
		w.gone = true // the serving goroutine unregisters it and drops the reply
	} else {
		b.unregister(w)
	}
	b.mu.Unlock()
}

// copyStripesBeforeWrite is copyBeforeWrite for a serve, which has no
// client of its own.
func (h *Handler) copyStripesBeforeWrite(stripes []int) {
	tmp := client{aof: &aofState{stripes: stripes}}
	h.copyBeforeWrite(&tmp)
}

// Timeouts.

const (
	errTimeoutNotFloat = "ERR timeout is not a float or out of range"
	errTimeoutNegative = "ERR timeout is negative"
)

// parseTimeout reads a blocking command's timeout in seconds as Redis 7.0
// does: string2ld (store.ParseFloat's LongDouble rule), then milliseconds
// rounded up; a value whose milliseconds do not fit an int64 (infinity
// included) comes out negative, as Redis's conversion makes it. 0 means no
// timeout. The milliseconds are computed in float64 where Redis uses a long
// double, so they differ where float64's rounding crosses an integer: near
// 2^63 ms, 9223372036854775.807 s is a valid timeout to Redis, negative here.
func parseTimeout(b []byte) (ms int64, errText string) {
	f, ok := store.ParseFloat(b, store.LongDouble)
	if !ok {
		return 0, errTimeoutNotFloat
	}
	ms64 := math.Ceil(f * 1000)
	if ms64 < 0 || ms64 >= math.MaxInt64 {
		return 0, errTimeoutNegative
	}
	return int64(ms64), ""
}

// nullArrayReply is the timeout reply of every blocking list command.
func nullArrayReply(proto int) []byte {
	if proto >= 3 {
		return resp.AppendNull(nil)
	}
	return resp.AppendNullArray(nil)
}
