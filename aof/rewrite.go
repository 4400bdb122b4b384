package aof

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ErrRewriteInProgress is returned when a rewrite is asked for while one runs.
var ErrRewriteInProgress = errors.New("background append only file rewriting already in progress")

// rewriteState is what a rewrite in progress collects: the records
// appended since it began, to follow the snapshot in the new file.
type rewriteState struct {
	tail []byte
}

// RewriteStats describes rewrites for INFO persistence.
type RewriteStats struct {
	InProgress     bool
	Count          int64
	LastOK         bool
	LastSeconds    int64 // -1 before the first
	CurrentSeconds int64 // -1 when none runs
}

// RewriteStats reports the state of rewrites.
func (w *Writer) RewriteStats() RewriteStats {
	w.rwMu.Lock()
	defer w.rwMu.Unlock()
	st := RewriteStats{InProgress: w.rwRunning, Count: w.rwCount, LastOK: !w.rwLastFailed, LastSeconds: w.rwLastSeconds, CurrentSeconds: -1}
	if w.rwRunning {
		st.CurrentSeconds = int64(time.Since(w.rwStart).Seconds())
	}
	return st
}

// Rewrite builds a compacted file beside the current one: a snapshot of
// the keyspace, written by the caller with Write, then every record
// appended since Start, then an atomic rename over the old file (Finish).
// Meanwhile the old file keeps receiving every record, so a crash at any
// point leaves a complete file: the old one, or the new one.
//
// The caller's snapshot must be the keyspace as it was at Start: no write
// may be both in the snapshot and appended after Start, or it would be
// replayed twice.
type Rewrite struct {
	w   *Writer
	tmp string
	f   *os.File
	bw  *bufio.Writer
}

// PrepareRewrite creates the temporary file of a new rewrite. It fails with
// ErrRewriteInProgress if one runs.
func (w *Writer) PrepareRewrite() (*Rewrite, error) {
	w.rwMu.Lock()
	if w.rwRunning {
		w.rwMu.Unlock()
		return nil, ErrRewriteInProgress
	}
	w.rwRunning = true
	w.rwStart = time.Now()
	w.rwMu.Unlock()
	tmp := filepath.Join(filepath.Dir(w.path), fmt.Sprintf("temp-rewriteaof-%d.aof", os.Getpid()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		w.endRewrite(false)
		return nil, fmt.Errorf("creating the rewrite file: %w", err)
	}
	return &Rewrite{w: w, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Start marks the rewrite's consistent point: every record appended from
// now on is also kept for the new file. Call it while no write can run.
func (r *Rewrite) Start() {
	r.w.mu.Lock()
	r.w.rw = &rewriteState{}
	r.w.selected = -1 // the tail follows the snapshot: its first record selects
	r.w.mu.Unlock()
}

// Write adds snapshot records to the new file.
func (r *Rewrite) Write(p []byte) error {
	_, err := r.bw.Write(p)
	return err
}

// Abort gives the rewrite up; the old file stays in use.
func (r *Rewrite) Abort(cause error) {
	r.w.mu.Lock()
	r.w.rw = nil
	r.w.mu.Unlock()
	r.f.Close()
	os.Remove(r.tmp)
	r.w.logger.Error("append only file rewrite failed; the old file stays in use", "err", cause)
	r.w.endRewrite(false)
}

// Finish appends the records collected since Start, syncs the new file and
// renames it over the old one; from then on records go to the new file.
// On an error the old file stays in use.
func (r *Rewrite) Finish() error {
	w := r.w
	// Copy the tail while the loops keep appending, until what is left
	// is small enough to write with the switch held.
	for i := 0; i < 16; i++ {
		w.mu.Lock()
		tail := w.rw.tail
		w.rw.tail = nil
		w.mu.Unlock()
		if _, err := r.bw.Write(tail); err != nil {
			r.Abort(err)
			return err
		}
		if len(tail) < 64<<10 {
			break
		}
	}
	if err := r.bw.Flush(); err != nil {
		r.Abort(err)
		return err
	}
	// The switch. fileMu stops the writer goroutine between rounds, so no
	// bytes it took from the buffer are on their way to the old file.
	// Under w.mu the rest of the tail is taken and the tail closed: what
	// the buffer holds now is in the new file already, by the snapshot
	// (appended before Start) or the tail (after), and is dropped once the
	// new file is in place; what is appended later goes to the new file.
	w.fileMu.Lock()
	w.mu.Lock()
	rest := w.rw.tail
	w.rw = nil
	switchedAt := w.appended
	inBuf := len(w.buf)
	w.mu.Unlock()
	if err := r.commit(rest); err != nil {
		// The old file stays, and the buffer still holds its next bytes.
		w.fileMu.Unlock()
		r.f.Close()
		os.Remove(r.tmp)
		w.logger.Error("append only file rewrite failed; the old file stays in use", "err", err)
		w.endRewrite(false)
		return err
	}
	w.mu.Lock()
	w.buf = w.buf[:copy(w.buf, w.buf[inBuf:])]
	w.mu.Unlock()
	w.pending.Add(-int64(inBuf))
	old := w.f
	w.f = r.f
	fi, statErr := r.f.Stat()
	if statErr == nil {
		w.size.Store(fi.Size())
		w.baseSize.Store(fi.Size())
	}
	storeMax(&w.written, switchedAt)
	storeMax(&w.durable, switchedAt)
	w.fileMu.Unlock()
	old.Close()
	w.release()
	w.signal()
	w.logger.Info("append only file rewritten", "path", w.path, "bytes", w.size.Load())
	w.endRewrite(true)
	return nil
}

// commit writes the last of the tail, syncs, renames and syncs the
// directory, so that the new name survives a crash.
func (r *Rewrite) commit(rest []byte) error {
	if _, err := r.f.Write(rest); err != nil {
		return err
	}
	if err := syncData(int(r.f.Fd())); err != nil {
		return err
	}
	if err := os.Rename(r.tmp, r.w.path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(r.w.path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (w *Writer) endRewrite(ok bool) {
	w.rwMu.Lock()
	defer w.rwMu.Unlock()
	w.rwRunning = false
	w.rwLastFailed = !ok
	if ok {
		w.rwCount++
	}
	w.rwLastSeconds = int64(time.Since(w.rwStart).Seconds())
}
