package aof

import "time"

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
