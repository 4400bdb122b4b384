package aof

// fdatasync syncs a file's data (sync_linux.go, sync_bsd.go); tests
// replace it to make a sync fail.
var fdatasync = syncData

// SyncTo makes the records up to logical offset end durable on the calling
// goroutine, and reports whether they are: group commit's leader and
// follower in one. A caller that finds no round running leads one, moving
// every record appended so far (its own and everyone else's) to the file
// with one write and one fdatasync; a caller that finds a round running
// waits for it, and then either finds its records synced by that round or
// leads the next, which carries everything appended meanwhile.
//
// Under another policy than FsyncAlways it only wakes the writer goroutine
// and returns true: nobody waits for the disk. It returns false when the
// write or the sync failed (WriteError says why; waiters queued by Commit
// hear it too) or the Writer is closed with the records not durable.
// Callers waiting through Commit whose records the round made durable are
// called back as the writer goroutine would.
func (w *Writer) SyncTo(end int64) bool {
	ok, _ := w.lead(end, true)
	return ok
}

// TrySyncTo is SyncTo for a caller with better things to do than wait for
// another's round: an event loop, which meanwhile reads its connections'
// next commands. If a round is running (busy), it returns at once, and the
// caller waits through Commit, whose callback the next round runs; that
// round carries everything appended until it starts, from every loop. If
// none is running, the caller leads one, as SyncTo. So a loop that calls
// TrySyncTo once per cycle, after its connections' commands and before
// their replies, syncs as Redis does in beforeSleep and answers without
// handing anything to another goroutine, unless the disk is busy with
// another loop's round.
func (w *Writer) TrySyncTo(end int64) (ok, busy bool) {
	return w.lead(end, false)
}

func (w *Writer) lead(end int64, wait bool) (ok, busy bool) {
	if w.Policy() != FsyncAlways {
		w.signal()
		return true, false
	}
	if end <= w.durable.Load() {
		return true, false
	}
	if wait {
		w.leadMu.Lock()
	} else if !w.leadMu.TryLock() {
		return false, true
	}
	if end > w.durable.Load() && !w.isClosed() {
		w.writeRound()
		if w.durable.Load() < w.written.Load() {
			w.sync()
			w.led.Add(1)
		}
	}
	w.leadMu.Unlock()
	// Those waiting through Commit for records this round carried. Records
	// appended after it took the buffer are not this caller's concern:
	// whoever waits for them has called SyncTo or Commit too.
	w.release()
	return end <= w.durable.Load(), false
}

// LedRounds returns how many rounds SyncTo and TrySyncTo callers led (a
// write and an fdatasync each) rather than the writer goroutine; the rest
// of the fdatasyncs were the writer goroutine's.
func (w *Writer) LedRounds() int64 { return w.led.Load() }

func (w *Writer) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}
