package aof

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Fsync is an appendfsync policy.
type Fsync int32

// The appendfsync policies, as in Redis.
const (
	FsyncAlways   Fsync = iota // a write is acknowledged only after fdatasync
	FsyncEverySec              // fdatasync in the background once a second
	FsyncNo                    // the kernel decides when to write back
)

// ParseFsync parses an appendfsync value: always, everysec or no.
func ParseFsync(s string) (Fsync, error) {
	switch s {
	case "always":
		return FsyncAlways, nil
	case "everysec":
		return FsyncEverySec, nil
	case "no":
		return FsyncNo, nil
	}
	return 0, fmt.Errorf("appendfsync %q: want always, everysec or no", s)
}

func (p Fsync) String() string {
	switch p {
	case FsyncAlways:
		return "always"
	case FsyncEverySec:
		return "everysec"
	}
	return "no"
}

// Writer appends commands to an append-only file.
//
// Any goroutine appends records to one in-memory buffer (Begin / End, a
// short critical section, no I/O); one writer goroutine owns the file and
// moves the buffer to it with one write, followed under FsyncAlways by one
// fdatasync, covering every record appended since its last round, from all
// connections and loops together: group commit. A caller that must not
// answer before its records are durable asks Commit to call it back; the
// callback runs on the writer goroutine once the file holds and has synced
// everything up to the offset it named. An event loop may instead lead a
// round itself with SyncTo (groupcommit.go): then the loop waits on the
// disk, and its replies need no trip through another goroutine. Offsets are
// logical: bytes appended since Open.
type Writer struct {
	path   string
	logger *slog.Logger
	policy atomic.Int32

	mu       sync.Mutex
	buf      []byte // appended, not yet taken by the writer goroutine
	appended int64  // logical offset of the end of buf
	waiters  []waiter
	closed   bool
	rw       *rewriteState // non-nil while a rewrite collects the tail
	selected int           // the database the last record was of; -1: unknown (Select)

	appendedPub atomic.Int64 // appended, for readers without mu

	// Written by the writer goroutine; read by anyone.
	written  atomic.Int64 // logical offset the file holds (maybe unsynced)
	durable  atomic.Int64 // logical offset synced to disk
	size     atomic.Int64 // bytes in the file
	baseSize atomic.Int64 // file size after the last rewrite or at open
	writeErr atomic.Pointer[string]
	pending  atomic.Int64 // bytes appended and not yet written

	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	f      *os.File // writer goroutine only (and the rewrite switch, under fileMu)
	fileMu sync.Mutex
	spare  []byte
	syncs  atomic.Int64 // fdatasyncs done, for tests of grouping

	// leadMu is held by whoever runs a round, the writer goroutine or a
	// SyncTo caller: one writes and syncs while the others wait, and then
	// find their records synced or lead the next round (group commit).
	leadMu sync.Mutex
	led    atomic.Int64 // rounds SyncTo callers led (LedRounds)

	rwMu          sync.Mutex // guards the rewrite statistics
	rwRunning     bool
	rwCount       int64
	rwLastFailed  bool
	rwLastSeconds int64
	rwStart       time.Time
}

type waiter struct {
	end int64
	fn  func(end int64, ok bool)
}

// Open opens (creating if needed) the append-only file at path for
// appending and starts the writer goroutine.
func Open(path string, policy Fsync, logger *slog.Logger) (*Writer, error) {
	if logger == nil {
		logger = slog.Default()
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the append only file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &Writer{path: path, logger: logger, f: f,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	w.policy.Store(int32(policy))
	w.rwLastSeconds = -1
	// An empty file starts in database 0, as a load does; one with
	// records may end in any.
	w.selected = -1
	if fi.Size() == 0 {
		w.selected = 0
	}
	w.size.Store(fi.Size())
	w.baseSize.Store(fi.Size())
	go w.run()
	return w, nil
}

// Path returns the file's path.
func (w *Writer) Path() string { return w.path }

// Policy returns the current appendfsync policy.
func (w *Writer) Policy() Fsync { return Fsync(w.policy.Load()) }

// SetPolicy changes the appendfsync policy; it applies from the next round.
func (w *Writer) SetPolicy(p Fsync) { w.policy.Store(int32(p)); w.signal() }

// Begin locks the buffer and returns it for the caller to append records
// to; End must follow with the extended slice. Keep the section short: it
// is the one point where every writer meets.
func (w *Writer) Begin() []byte {
	w.mu.Lock()
	return w.buf
}

// Select appends, between Begin and End, a SELECT of database db unless
// the records before are of db already, as Redis does: callers log every
// record of another database than the last behind one. It returns buf.
func (w *Writer) Select(buf []byte, db int) []byte {
	if w.selected == db {
		return buf
	}
	w.selected = db
	var n [20]byte
	return AppendCommand(buf, []byte("SELECT"), strconv.AppendInt(n[:0], int64(db), 10))
}

// End stores buf (Begin's slice, extended), unlocks, and returns the
// logical offset of its end: the offset to pass to Commit.
func (w *Writer) End(buf []byte) int64 {
	n := int64(len(buf) - len(w.buf))
	if w.rw != nil {
		w.rw.tail = append(w.rw.tail, buf[len(w.buf):]...)
	}
	w.buf = buf
	w.appended += n
	end := w.appended
	w.appendedPub.Store(end)
	w.mu.Unlock()
	w.pending.Add(n)
	return end
}

// Commit asks for everything up to logical offset end to reach the file.
// Under FsyncAlways it returns false and later calls fn(end, ok) on the
// writer goroutine, with ok reporting whether the records were written and synced;
// otherwise (or if they already are durable) it returns true without
// keeping fn: the caller may answer now.
func (w *Writer) Commit(end int64, fn func(end int64, ok bool)) bool {
	if w.Policy() != FsyncAlways || end <= w.durable.Load() {
		w.signal()
		return true
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return true
	}
	w.waiters = append(w.waiters, waiter{end, fn})
	w.mu.Unlock()
	w.signal()
	return false
}

func (w *Writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Appended returns the logical offset of the end of the last record
// appended; Durable the offset up to which records are written and, under
// FsyncAlways, synced.
func (w *Writer) Appended() int64 { return w.appendedPub.Load() }
func (w *Writer) Durable() int64  { return w.durable.Load() }

// WriteError returns the last write or sync error, or "" when the last
// attempt succeeded. While it is set, a server should refuse writes
// (Redis's MISCONF).
func (w *Writer) WriteError() string {
	if p := w.writeErr.Load(); p != nil {
		return *p
	}
	return ""
}

// Size returns the file's size in bytes; BaseSize its size after the last
// rewrite (or at Open); Pending the bytes appended but not yet written.
func (w *Writer) Size() int64     { return w.size.Load() }
func (w *Writer) BaseSize() int64 { return w.baseSize.Load() }
func (w *Writer) Pending() int64  { return w.pending.Load() }

// Close writes and syncs what is pending, stops the writer goroutine and
// closes the file. Waiters still pending are called with ok=false.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	return w.f.Close()
}

// run is the writer goroutine.
func (w *Writer) run() {
	defer close(w.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastSync := time.Now()
	for {
		stopping := false
		select {
		case <-w.wake:
		case <-tick.C:
		case <-w.stop:
			stopping = true
		}
		policy := w.Policy()
		w.leadMu.Lock()
		wrote := w.writeRound()
		switch {
		case stopping, policy == FsyncAlways && (wrote || w.durable.Load() < w.written.Load()),
			policy == FsyncEverySec && time.Since(lastSync) >= time.Second && w.durable.Load() < w.written.Load():
			w.sync()
			lastSync = time.Now()
		}
		w.leadMu.Unlock()
		if policy != FsyncAlways {
			// Nobody waits under the other policies; a switch away from
			// always must not strand the callers that were waiting.
			storeMax(&w.durable, w.written.Load())
		}
		w.release()
		if stopping {
			w.answerAll()
			return
		}
	}
}

// writeRound moves the buffer to the file and reports whether it wrote
// anything. On an error the bytes stay at the front of the buffer, the file
// is cut back to its last whole record, and the next round retries.
func (w *Writer) writeRound() bool {
	// fileMu first: a rewrite's switch must never find bytes taken from
	// the buffer and not yet written (they would reach the new file twice).
	w.fileMu.Lock()
	w.mu.Lock()
	data := w.buf
	end := w.appended
	w.buf = w.spare[:0]
	w.mu.Unlock()
	if len(data) == 0 {
		w.spare = data
		w.fileMu.Unlock()
		return false
	}
	before := w.size.Load()
	n, err := w.f.Write(data)
	if err != nil {
		// A partial record must not stay in the file: cut it back, so that
		// a retry (or a restart) sees whole records only.
		if n > 0 {
			if terr := w.f.Truncate(before); terr != nil {
				w.logger.Error("append only file: cannot cut back a partial write", "path", w.path, "err", terr)
			}
		}
		w.mu.Lock()
		w.buf = append(data, w.buf...)
		w.mu.Unlock()
		w.fileMu.Unlock()
		w.fail(fmt.Sprintf("Errors writing to the AOF file: %v", unwrapErrno(err)))
		return false
	}
	w.size.Add(int64(n))
	storeMax(&w.written, end)
	w.fileMu.Unlock()
	w.pending.Add(-int64(len(data)))
	w.spare = data[:0]
	if w.writeErr.Load() != nil && w.Policy() != FsyncAlways {
		w.recovered()
	}
	return true
}

// sync makes everything written durable.
func (w *Writer) sync() {
	w.fileMu.Lock()
	end := w.written.Load()
	err := fdatasync(int(w.f.Fd()))
	w.fileMu.Unlock()
	w.syncs.Add(1)
	if err != nil {
		w.fail(fmt.Sprintf("Errors writing to the AOF file: fdatasync: %v", err))
		return
	}
	if w.writeErr.Load() != nil && w.pending.Load() == 0 {
		w.recovered()
	}
	storeMax(&w.durable, end)
}

// storeMax raises v to n unless it is already higher.
func storeMax(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if old >= n || v.CompareAndSwap(old, n) {
			return
		}
	}
}

func (w *Writer) fail(msg string) {
	if w.writeErr.Load() == nil {
		w.logger.Error("append only file: write failed; refusing writes until it succeeds", "path", w.path, "err", msg)
	}
	w.writeErr.Store(&msg)
	// Under always, the callers waiting were not made durable: they are
	// told so now rather than left waiting for a disk that may never
	// recover. Their records stay queued and are retried.
	w.answerAll()
}

// answerAll tells every waiter whether its record is durable yet and
// forgets them all.
func (w *Writer) answerAll() {
	w.mu.Lock()
	ws := w.waiters
	w.waiters = nil
	w.mu.Unlock()
	for _, x := range ws {
		x.fn(x.end, x.end <= w.durable.Load())
	}
}

func (w *Writer) recovered() {
	w.writeErr.Store(nil)
	w.logger.Warn("append only file: writes succeed again", "path", w.path)
}

// release calls the waiters whose records are durable.
func (w *Writer) release() {
	d := w.durable.Load()
	w.mu.Lock()
	var ready []waiter
	keep := w.waiters[:0]
	for _, x := range w.waiters {
		if x.end <= d {
			ready = append(ready, x)
		} else {
			keep = append(keep, x)
		}
	}
	w.waiters = keep
	w.mu.Unlock()
	for _, x := range ready {
		x.fn(x.end, true)
	}
}

func unwrapErrno(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
