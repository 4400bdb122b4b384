package kv

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/store"
)

// Rewriting the append-only file without stopping the world.
//
// The new file must hold the keyspace as it was at one instant T0 followed
// by every record appended after T0. T0 is taken with every stripe locked
// (no write in flight; a few microseconds). After it, shards are copied one
// at a time, each under its stripe: by the rewrite goroutine in shard order,
// or, if a write reaches a shard not yet copied, by that write before it
// runs. Either way a shard is copied before any write after T0 touches it,
// so the copy is its state at T0, while the rest of the keyspace keeps
// serving. The records appended after T0 are collected by the Writer and
// follow the copies in the new file (aof.Rewrite).
type rewriter struct {
	active atomic.Bool // a rewrite is copying shards
	copied []bool      // per shard; element i guarded by stripe i
	mu     sync.Mutex  // guards queued
	queued []byte      // copies made by writes, for the rewrite goroutine

	attached    atomic.Pointer[aof.Writer] // h.aof, published for cron
	autoPercent atomic.Int64               // auto-aof-rewrite-percentage
	autoMinSize atomic.Int64               // auto-aof-rewrite-min-size
	scheduled   atomic.Bool                // BGREWRITEAOF inside EXEC: cron starts it
}

var errRewriteOff = errors.New("ERR BGREWRITEAOF needs the append only file: start shoal with --appendonly yes")

func cmdBGRewriteAOF(h *Handler, cl *client, _ [][]byte) {
	if cl.inExec() && h.aof != nil && !h.aof.RewriteStats().InProgress {
		// Redis defers it too: its start must not fall inside the
		// transaction, whose records are logged as one (multi.go).
		h.rw.scheduled.Store(true)
		cl.writeStatus("Background append only file rewriting scheduled")
		return
	}
	if err := h.startRewrite(false); err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeStatus("Background append only file rewriting started")
}

// startRewrite begins a rewrite in the background. Called from outside a
// loop's batch (cron), it stops the loops for the instant T0, so that T0
// does not fall inside an EXEC.
func (h *Handler) startRewrite(fromCron bool) error {
	if h.aof == nil {
		return errRewriteOff
	}
	r, err := h.aof.PrepareRewrite()
	if errors.Is(err, aof.ErrRewriteInProgress) {
		return errors.New("ERR Background append only file rewriting already in progress") // Redis's text
	}
	if err != nil {
		return errors.New("ERR " + err.Error())
	}
	if fromCron {
		stopped := h.stopWorld(nil)
		defer h.resumeWorld(nil, stopped)
	}
	for i := range h.stripes {
		h.stripes[i].Lock()
	}
	// FUNCTION LOAD and the rest run under every stripe: the libraries
	// now are those of T0.
	libraries := h.libraryCodes()
	r.Start()
	h.rw.copied = make([]bool, len(h.stripes))
	h.rw.active.Store(true)
	for i := range h.stripes {
		h.stripes[i].Unlock()
	}
	h.opts.Logger.Info("append only file rewrite started")
	go h.runRewrite(r, libraries)
	return nil
}

// runRewrite writes a FUNCTION LOAD of each library, as Redis's rewrite
// does, and copies every shard not yet copied, then lets the Writer add
// the tail and switch files.
func (h *Handler) runRewrite(r *aof.Rewrite, libraries []string) {
	var buf []byte
	var err error
	for _, code := range libraries {
		buf = aof.AppendCommand(buf, []byte("FUNCTION"), []byte("LOAD"), []byte(code))
	}
	for i := range h.stripes {
		h.stripes[i].Lock()
		if !h.rw.copied[i] {
			buf = h.copyShard(buf, i)
			h.rw.copied[i] = true
		}
		h.stripes[i].Unlock()
		h.rw.mu.Lock()
		buf = append(buf, h.rw.queued...)
		h.rw.queued = h.rw.queued[:0]
		h.rw.mu.Unlock()
		if len(buf) >= 1<<20 && err == nil {
			err = r.Write(buf)
			buf = buf[:0]
		}
	}
	h.rw.active.Store(false)
	h.rw.mu.Lock()
	buf = append(buf, h.rw.queued...)
	h.rw.queued = nil
	h.rw.mu.Unlock()
	if err == nil {
		err = r.Write(buf)
	}
	if err != nil {
		r.Abort(err)
		return
	}
	_ = r.Finish() // logs its own failure and keeps the old file
}

// copyShard appends shard i's keys, of every database, as SET records (with
// PXAT when they expire) and the commands that rebuild collections. The
// caller holds stripe i, which every database's shard i shares. Copies are
// concatenated in no set order, so each starts and ends in database 0:
// another database's keys come between SELECT n and SELECT 0.
func (h *Handler) copyShard(dst []byte, i int) []byte {
	for _, d := range h.madeIndexes() {
		s := h.existingDB(d)
		if s == nil {
			continue
		}
		mark := len(dst)
		if d != 0 {
			dst = aof.AppendCommand(dst, []byte("SELECT"), strconv.AppendInt(nil, int64(d), 10))
		}
		keysFrom := len(dst)
		dst = copyDBShard(dst, s, i)
		switch {
		case len(dst) == keysFrom:
			dst = dst[:mark] // nothing of database d here: no SELECT either
		case d != 0:
			dst = aof.AppendCommand(dst, []byte("SELECT"), []byte("0"))
		}
	}
	return dst
}

// copyDBShard appends the records of shard i of database s.
func copyDBShard(dst []byte, s *store.Store, i int) []byte {
	s.SnapshotShard(i, func(key, val []byte, at int64) {
		if at == 0 {
			dst = aof.AppendCommand(dst, []byte("SET"), key, val)
			return
		}
		dst = aof.AppendHeader(dst, 5)
		dst = aof.AppendArg(dst, []byte("SET"))
		dst = aof.AppendArg(dst, key)
		dst = aof.AppendArg(dst, val)
		dst = aof.AppendArg(dst, []byte("PXAT"))
		dst = aof.AppendIntArg(dst, at)
	}, func(key []byte, o store.Object, at int64) {
		dst = appendRewriteObject(dst, key, o)
		if at != 0 {
			dst = aof.AppendHeader(dst, 3)
			dst = aof.AppendArg(dst, []byte("PEXPIREAT"))
			dst = aof.AppendArg(dst, key)
			dst = aof.AppendIntArg(dst, at)
		}
	})
	return dst
}

// rewriteFunc appends the commands that rebuild key's collection o.
type rewriteFunc func(dst, key []byte, o store.Object) []byte

// rewriters holds the rewriteFunc of each collection kind, from the
// families that register them (registerFamily in kv/hash.go, kv/list.go,
// ...).
var rewriters map[store.Kind]rewriteFunc

// rewriteBatch is how many elements one rewritten command carries, as
// Redis's AOF_REWRITE_ITEMS_PER_CMD.
const rewriteBatch = 64

// batchWriter appends the commands that rebuild a collection of n
// elements: "name key" followed by up to rewriteBatch elements of width
// arguments each (2 for HSET's field value, ZADD's score member).
type batchWriter struct {
	dst       []byte
	name, key []byte
	width     int
	left      int // elements not yet written
	inBatch   int // elements the current command still takes
}

func newBatchWriter(dst []byte, name string, key []byte, width, n int) *batchWriter {
	return &batchWriter{dst: dst, name: []byte(name), key: key, width: width, left: n}
}

// add appends one element's arguments, starting a new command when the
// current one is full.
func (b *batchWriter) add(args ...[]byte) {
	if b.inBatch == 0 {
		k := min(rewriteBatch, b.left)
		b.dst = aof.AppendHeader(b.dst, 2+b.width*k)
		b.dst = aof.AppendArg(b.dst, b.name)
		b.dst = aof.AppendArg(b.dst, b.key)
		b.inBatch, b.left = k, b.left-k
	}
	for _, a := range args {
		b.dst = aof.AppendArg(b.dst, a)
	}
	b.inBatch--
}

// appendRewriteObject appends the commands that rebuild key's collection o.
func appendRewriteObject(dst, key []byte, o store.Object) []byte {
	rw := rewriters[o.Kind()]
	if rw == nil {
		panic("kv: no AOF rewriter for a " + o.Kind().String())
	}
	return rw(dst, key, o)
}

// copyBeforeWrite runs before a logged write, under its stripes: a shard
// the rewrite has not copied yet is copied now, before the write changes
// it.
func (h *Handler) copyBeforeWrite(cl *client) {
	var buf []byte
	for _, i := range cl.aof.stripes {
		if !h.rw.copied[i] {
			buf = h.copyShard(buf, i)
			h.rw.copied[i] = true
		}
	}
	if len(buf) > 0 {
		h.rw.mu.Lock()
		h.rw.queued = append(h.rw.queued, buf...)
		h.rw.mu.Unlock()
	}
}

// maybeAutoRewrite starts a rewrite when the file has grown past
// auto-aof-rewrite-min-size and by auto-aof-rewrite-percentage over its
// size after the last rewrite, as Redis's serverCron does.
func (h *Handler) maybeAutoRewrite() {
	// attached, not h.aof: cron runs from New on, before AttachAOF.
	w := h.rw.attached.Load()
	pct := h.rw.autoPercent.Load()
	if w == nil || w.RewriteStats().InProgress {
		return
	}
	if h.rw.scheduled.Swap(false) {
		if err := h.startRewrite(true); err != nil {
			h.opts.Logger.Warn("scheduled append only file rewrite did not start", "err", err)
		}
		return
	}
	if pct <= 0 {
		return
	}
	size, base := w.Size(), max(w.BaseSize(), 1)
	if size < h.rw.autoMinSize.Load() || (size-base)*100/base < pct {
		return
	}
	h.opts.Logger.Info("starting an automatic append only file rewrite", "size", size, "base_size", base, "percentage", pct)
	if err := h.startRewrite(true); err != nil {
		h.opts.Logger.Warn("automatic append only file rewrite did not start", "err", err)
	}
}
