package kv

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Snapshots: SAVE, BGSAVE [SCHEDULE], LASTSAVE and the save policy, as
// redis-server 7.0 answers them; the file is written by save_write.go and
// loaded at startup by save_load.go.
//
// Redis forks to save in the background. Shoal has no fork: a BGSAVE is a
// goroutine that reads each shard of each database at one instant of its
// own (store.SnapshotShard, under the shard's read lock, writes to that
// shard waiting meanwhile) and encodes it into memory, then writes the
// bytes out once the lock is released. The file is thus consistent per
// shard, not across shards: a multi-key write that lands while the save
// runs may be in the file for one key and not another. SAVE stops the
// loops (as EXEC does) and so is one instant for the whole keyspace.
//
// The changes since the last save (Redis's dirty counter) are the write
// commands that succeeded, summed from the per-loop command counters the
// loops keep anyway (commandstats.go): no work on the write path. Redis
// counts keys changed instead, so an MSET of ten keys counts 1 here, 10
// there, and a SET NX that set nothing counts 1 here, 0 there.
var _ = registerFamily(family{commands: []*command{
	{
		name: "save", arity: 1, fn: cmdSave,
		flags: "admin noscript no_async_loading no_multi", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Synchronously saves the database(s) to disk.", "1.0.0", "server", "O(N) where N is the total number of keys in all databases"},
	},
	{
		name: "bgsave", arity: -1, fn: cmdBGSave,
		flags: "admin noscript no_async_loading", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Asynchronously saves the database(s) to disk.", "1.0.0", "server", "O(1)"},
	},
	{
		name: "lastsave", arity: 1, fn: cmdLastSave,
		flags: "loading stale fast", acl: "@admin @fast @dangerous", tips: "nondeterministic_output",
		doc: commandDoc{"Returns the Unix timestamp of the last successful save to disk.", "1.0.0", "server", "O(1)"},
	},
}})

// Redis's texts.
const (
	errBGSaveRunning = "ERR Background save already in progress"
	errChildActive   = "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible."
	errSaveMisconf   = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."
)

// bgsaveRetryDelay is how long the policy waits after a failed BGSAVE
// before trying again (Redis's CONFIG_BGSAVE_RETRY_DELAY).
const bgsaveRetryDelay = 5

// snapshots is one Handler's snapshot state. Fields are atomics read by
// INFO and the commands on any loop; running is taken by the one save
// (SAVE or BGSAVE) that may run at a time.
type snapshots struct {
	h       *Handler
	running atomic.Bool
	started atomic.Int64 // unix ms the running BGSAVE started; 0 when none

	lastSave  atomic.Int64 // unix s of the last successful save (LASTSAVE)
	lastTry   atomic.Int64 // unix s of the last BGSAVE started
	lastErr   atomic.Bool  // the last BGSAVE (or SAVE) failed
	lastBGSec atomic.Int64 // seconds the last BGSAVE took; -1 before one
	saves     atomic.Int64 // rdb_saves
	scheduled atomic.Bool  // BGSAVE SCHEDULE (or in EXEC): cron starts it

	loadedKeys, loadedExpired atomic.Int64 // the startup load's

	dirtyMu    sync.Mutex
	dirtyTotal int64 // successful writes counted so far
	lastCalls  int64 // the counters' sum at the last count
	savedAt    int64 // dirtyTotal when the last successful save began

	policyText string      // cron's copy of the save setting, and its parse
	policy     []savePoint // cron only
}

// savePoint is one "seconds changes" pair of the save setting.
type savePoint struct{ seconds, changes int64 }

// misconfHandlers counts Handlers refusing writes after a failed save, so
// the write path checks a map only while one does.
var misconfHandlers atomic.Int32

// snapshots returns h's snapshot state, starting its cron on first use.
func (h *Handler) snapshots() *snapshots {
	if s := h.snap.Load(); s != nil {
		return s
	}
	s := &snapshots{h: h}
	s.lastSave.Store(h.start.Unix())
	s.lastBGSec.Store(-1)
	s.lastCalls = h.writeCalls()
	if h.snap.CompareAndSwap(nil, s) {
		go s.cron()
	}
	return h.snap.Load()
}

// StartSnapshots starts the save policy's cron and counts the changes
// since the last save from now on: call it after loading data at startup,
// so that the load itself is no change to save.
func (h *Handler) StartSnapshots() {
	s := h.snapshots()
	s.dirtyMu.Lock()
	s.countLocked()
	s.savedAt = s.dirtyTotal
	s.dirtyMu.Unlock()
}

// writeCalls sums, over the loops, the write commands that succeeded.
func (h *Handler) writeCalls() int64 {
	var n int64
	p := h.cmdStats.loops.Load()
	if p == nil {
		return 0
	}
	ids := writeCommandIDs()
	for _, ls := range *p {
		if ls == nil {
			continue
		}
		for _, id := range ids {
			c := &ls.cmds[id]
			n += int64(c.calls.Load() - c.failed.Load())
		}
	}
	return n
}

var writeIDs struct {
	once sync.Once
	ids  []int
}

// writeCommandIDs are the statsIDs of the commands with the write flag.
func writeCommandIDs() []int {
	writeIDs.once.Do(func() {
		for _, c := range commandsByID {
			if c.logged {
				writeIDs.ids = append(writeIDs.ids, c.statsID)
			}
		}
	})
	return writeIDs.ids
}

// countLocked adds the writes since the last count. CONFIG RESETSTAT
// zeroes the counters: a sum below the last one starts over from zero.
func (s *snapshots) countLocked() {
	cur := s.h.writeCalls()
	if cur >= s.lastCalls {
		s.dirtyTotal += cur - s.lastCalls
	} else {
		s.dirtyTotal += cur
	}
	s.lastCalls = cur
}

// dirty returns the running count of changes.
func (s *snapshots) dirty() int64 {
	s.dirtyMu.Lock()
	defer s.dirtyMu.Unlock()
	s.countLocked()
	return s.dirtyTotal
}

// changesSinceSave is rdb_changes_since_last_save.
func (s *snapshots) changesSinceSave() int64 {
	s.dirtyMu.Lock()
	defer s.dirtyMu.Unlock()
	s.countLocked()
	return s.dirtyTotal - s.savedAt
}

// saved records a successful save of the data as of count dirtyAt.
func (s *snapshots) saved(dirtyAt int64) {
	s.dirtyMu.Lock()
	s.savedAt = max(s.savedAt, dirtyAt)
	s.dirtyMu.Unlock()
	s.lastSave.Store(time.Now().Unix())
	s.setFailed(false)
}

// setFailed records the last save's status; while it failed, a save
// policy is set and stop-writes-on-bgsave-error is yes, writes get
// MISCONF (misconfFor).
func (s *snapshots) setFailed(failed bool) {
	if s.lastErr.Swap(failed) != failed {
		if failed {
			misconfHandlers.Add(1)
		} else {
			misconfHandlers.Add(-1)
		}
	}
}

func cmdSave(h *Handler, cl *client, _ [][]byte) {
	s := h.snapshots()
	if !s.running.CompareAndSwap(false, true) {
		cl.writeError(errBGSaveRunning)
		return
	}
	defer s.running.Store(false)
	s.saves.Add(1)
	// Inside EXEC the world is already stopped (and EXEC's lock held).
	stopped := false
	if !cl.inExec() {
		stopped = h.stopWorld(cl)
	}
	dirtyAt := s.dirty()
	_, err := h.saveSnapshot(true)
	h.resumeWorld(cl, stopped)
	if err != nil {
		h.opts.Logger.Warn("SAVE failed", "err", err)
		cl.writeError("ERR")
		return
	}
	s.saved(dirtyAt)
	h.opts.Logger.Info("DB saved on disk")
	cl.writeOK()
}

func cmdBGSave(h *Handler, cl *client, args [][]byte) {
	schedule := false
	if len(args) > 1 {
		if len(args) != 2 || !strings.EqualFold(string(args[1]), "schedule") {
			cl.writeError(errSyntax)
			return
		}
		schedule = true
	}
	s := h.snapshots()
	switch {
	case s.running.Load():
		cl.writeError(errBGSaveRunning)
	case h.rewriteRunning() || cl.inExec():
		if schedule || cl.inExec() {
			s.scheduled.Store(true)
			cl.writeStatus("Background saving scheduled")
			return
		}
		cl.writeError(errChildActive)
	default:
		if err := s.startBackground(); err != nil {
			cl.writeError(err.Error())
			return
		}
		cl.writeStatus("Background saving started")
	}
}

func cmdLastSave(h *Handler, cl *client, _ [][]byte) {
	if s := h.snap.Load(); s != nil {
		cl.writeInt(s.lastSave.Load())
		return
	}
	cl.writeInt(h.start.Unix())
}

// SavePolicy reports whether a save policy is set (the save setting is not
// ""): Redis then saves when it stops on SIGTERM or SHUTDOWN.
func (h *Handler) SavePolicy() bool { return h.params.Get("save") != "" }

// SaveForShutdown writes a snapshot in the foreground once the server has
// stopped serving, after waiting for a BGSAVE that runs.
func (h *Handler) SaveForShutdown() (SaveStats, error) {
	s := h.snapshots()
	for !s.running.CompareAndSwap(false, true) {
		time.Sleep(5 * time.Millisecond)
	}
	defer s.running.Store(false)
	dirtyAt := s.dirty()
	st, err := h.saveSnapshot(false)
	if err == nil {
		s.saved(dirtyAt)
	}
	return st, err
}

// rewriteRunning reports whether an AOF rewrite is copying or writing,
// during which Redis refuses a BGSAVE (its child process is busy).
func (h *Handler) rewriteRunning() bool {
	w := h.rw.attached.Load()
	return w != nil && w.RewriteStats().InProgress
}

// startBackground starts a BGSAVE unless one runs.
func (s *snapshots) startBackground() error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New(errBGSaveRunning)
	}
	now := time.Now()
	s.started.Store(now.UnixMilli())
	s.lastTry.Store(now.Unix())
	s.saves.Add(1)
	dirtyAt := s.dirty()
	s.h.opts.Logger.Info("background saving started")
	go func() {
		_, err := s.h.saveSnapshot(false)
		s.lastBGSec.Store(time.Now().Unix() - now.Unix()) // whole seconds, as Redis
		if err != nil {
			s.h.opts.Logger.Warn("background saving error", "err", err)
			s.setFailed(true)
		} else {
			s.saved(dirtyAt)
			s.h.opts.Logger.Info("background saving terminated with success")
		}
		s.started.Store(0)
		s.running.Store(false)
	}()
	return nil
}

// Wait blocks until no save runs (for SHUTDOWN and tests).
func (s *snapshots) wait() {
	for s.running.Load() {
		time.Sleep(5 * time.Millisecond)
	}
}

// cron checks the save policy every 100 ms, as Redis's serverCron at hz
// 10, and starts a scheduled BGSAVE once no rewrite runs.
func (s *snapshots) cron() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	defer func() {
		s.setFailed(false) // no longer counted among the refusing
	}()
	for {
		select {
		case <-s.h.done:
			s.wait()
			return
		case now := <-t.C:
			s.tick(now.Unix())
		}
	}
}

func (s *snapshots) tick(now int64) {
	if s.running.Load() || s.h.rewriteRunning() {
		return
	}
	if s.scheduled.Swap(false) {
		_ = s.startBackground()
		return
	}
	s.readPolicy()
	if len(s.policy) == 0 {
		return
	}
	dirty := s.changesSinceSave()
	for _, p := range s.policy {
		if dirty >= p.changes && now-s.lastSave.Load() > p.seconds &&
			(now-s.lastTry.Load() > bgsaveRetryDelay || !s.lastErr.Load()) {
			s.h.opts.Logger.Info("changes reached the save policy: saving", "changes", p.changes, "seconds", p.seconds)
			_ = s.startBackground()
			return
		}
	}
}

// readPolicy parses the save setting when it changed.
func (s *snapshots) readPolicy() {
	text := s.h.params.Get("save")
	if text == s.policyText && (text == "" || s.policy != nil) {
		return
	}
	s.policyText, s.policy = text, parseSavePolicy(text)
}

// parseSavePolicy reads "seconds changes ..." pairs; the row's Kind has
// checked them.
func parseSavePolicy(text string) []savePoint {
	f := strings.Fields(text)
	var ps []savePoint
	for i := 0; i+1 < len(f); i += 2 {
		sec, _ := strconv.ParseInt(f[i], 10, 64)
		ch, _ := strconv.ParseInt(f[i+1], 10, 64)
		ps = append(ps, savePoint{sec, ch})
	}
	return ps
}

// misconf reports whether writes are refused after a failed save: as
// Redis, only while a save policy is set and stop-writes-on-bgsave-error
// is yes.
func (h *Handler) misconf() bool {
	if misconfHandlers.Load() == 0 {
		return false
	}
	if s := h.snap.Load(); s == nil || !s.lastErr.Load() {
		return false
	}
	return h.params.Get("save") != "" && h.params.Bool("stop-writes-on-bgsave-error")
}
