package aof

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// syncProbe replaces fdatasync for a test: it records the logical offset
// the file held (written) at each sync, and fails while failing is set.
type syncProbe struct {
	w       *Writer
	synced  atomic.Int64 // written when the last successful fdatasync returned
	failing atomic.Bool
}

func probeSyncs(t *testing.T) *syncProbe {
	p := &syncProbe{}
	real := fdatasync
	fdatasync = func(fd int) error {
		if p.failing.Load() {
			return errors.New("injected fdatasync failure")
		}
		// Called under fileMu: written is what the file holds now.
		at := p.w.written.Load()
		if err := real(fd); err != nil {
			return err
		}
		for {
			old := p.synced.Load()
			if old >= at || p.synced.CompareAndSwap(old, at) {
				break
			}
		}
		return nil
	}
	t.Cleanup(func() { fdatasync = real })
	return p
}

// TestSyncToAnswersOnlyWhenSyncedAndGroups: 16 goroutines, each appending
// records and calling SyncTo for each, as 16 loops would once per cycle.
// Whenever SyncTo returns true, an fdatasync has returned after the file
// held the caller's record (the probe's count of synced bytes covers it),
// and the file has it; the rounds are shared (fewer fdatasyncs than calls)
// and led by the callers, not the writer goroutine.
func TestSyncToAnswersOnlyWhenSyncedAndGroups(t *testing.T) {
	probe := probeSyncs(t)
	path := filepath.Join(t.TempDir(), "a.aof")
	w, err := Open(path, FsyncAlways, nil)
	if err != nil {
		t.Fatal(err)
	}
	probe.w = w
	const workers, each = 16, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				rec := AppendCommand(nil, []byte("SET"), []byte(fmt.Sprintf("k%d-%d", g, i)), []byte("v"))
				end := w.End(append(w.Begin(), rec...))
				if !w.SyncTo(end) {
					errs <- fmt.Errorf("SyncTo(%d) failed: %s", end, w.WriteError())
					return
				}
				if s := probe.synced.Load(); s < end {
					errs <- fmt.Errorf("SyncTo(%d) returned with only %d bytes synced", end, s)
				}
				if w.Durable() < end {
					errs <- fmt.Errorf("SyncTo(%d) returned with Durable %d", end, w.Durable())
				}
				if i%25 == 0 {
					if b, _ := os.ReadFile(path); !bytes.Contains(b, rec) {
						errs <- fmt.Errorf("record %d-%d not in the file after SyncTo", g, i)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	syncs, led := w.syncs.Load(), w.LedRounds()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := Load(path, false, func([][]byte) error { return nil }, nil)
	if err != nil || st.Commands != workers*each {
		t.Fatalf("file holds %d commands, %v", st.Commands, err)
	}
	if syncs >= workers*each {
		t.Errorf("%d fdatasyncs for %d SyncTo calls: not grouped", syncs, workers*each)
	}
	if led == 0 {
		t.Error("no round was led by a SyncTo caller")
	}
	t.Logf("%d SyncTo calls, %d fdatasyncs, %d led by callers", workers*each, syncs, led)
}

// TestTrySyncToBusyFollowsThroughCommit: while a round is running,
// TrySyncTo does not wait: it reports busy, and the caller's Commit is
// answered by the next round (here the writer goroutine's, once the round
// ends), after an fdatasync that covered the record.
func TestTrySyncToBusyFollowsThroughCommit(t *testing.T) {
	probe := probeSyncs(t)
	w, err := Open(filepath.Join(t.TempDir(), "a.aof"), FsyncAlways, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	probe.w = w
	end := w.End(append(w.Begin(), AppendCommand(nil, []byte("INCR"), []byte("n"))...))
	w.leadMu.Lock() // a round in flight
	ok, busy := w.TrySyncTo(end)
	if ok || !busy {
		w.leadMu.Unlock()
		t.Fatalf("TrySyncTo during a round: ok=%v busy=%v, want busy", ok, busy)
	}
	answered := make(chan int64, 1)
	kept := !w.Commit(end, func(_ int64, ok bool) {
		if !ok {
			answered <- -1
			return
		}
		answered <- probe.synced.Load()
	})
	w.leadMu.Unlock()
	if !kept {
		t.Fatal("Commit answered at once for a record no round had synced")
	}
	if s := <-answered; s < end {
		t.Fatalf("Commit's callback ran with %d bytes synced, record ends at %d", s, end)
	}
	// No round running and the record durable: TrySyncTo answers at once.
	if ok, busy := w.TrySyncTo(end); !ok || busy {
		t.Fatalf("TrySyncTo of a durable record: ok=%v busy=%v", ok, busy)
	}
	end2 := w.End(append(w.Begin(), AppendCommand(nil, []byte("INCR"), []byte("n"))...))
	led := w.LedRounds()
	if ok, busy := w.TrySyncTo(end2); !ok || busy || probe.synced.Load() < end2 || w.LedRounds() != led+1 {
		t.Fatalf("TrySyncTo with no round running: ok=%v busy=%v synced %d of %d, led %d rounds (was %d)",
			ok, busy, probe.synced.Load(), end2, w.LedRounds(), led)
	}
}

// TestSyncToFailureIsReportedAndRetried: an fdatasync that fails makes
// SyncTo return false, sets WriteError (MISCONF's text) and tells the
// callers waiting through Commit; once syncs succeed again the next
// SyncTo makes the records durable and clears the error.
func TestSyncToFailureIsReportedAndRetried(t *testing.T) {
	probe := probeSyncs(t)
	w, err := Open(filepath.Join(t.TempDir(), "a.aof"), FsyncAlways, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	probe.w = w
	probe.failing.Store(true)
	end := w.End(append(w.Begin(), AppendCommand(nil, []byte("SET"), []byte("k"), []byte("v"))...))
	told := make(chan bool, 1)
	if w.Commit(end, func(_ int64, ok bool) { told <- ok }) {
		t.Fatal("Commit answered at once")
	}
	if w.SyncTo(end) {
		t.Fatal("SyncTo reported success with fdatasync failing")
	}
	if msg := w.WriteError(); !strings.Contains(msg, "fdatasync") || !strings.Contains(msg, "injected") {
		t.Fatalf("WriteError %q, want the fdatasync failure", msg)
	}
	if w.Durable() >= end {
		t.Fatalf("Durable %d covers a record whose sync failed (end %d)", w.Durable(), end)
	}
	if ok := <-told; ok {
		t.Fatal("a Commit waiter was told its record is durable")
	}
	probe.failing.Store(false)
	if !w.SyncTo(end) || probe.synced.Load() < end {
		t.Fatalf("SyncTo after recovery: durable %d, synced %d, end %d", w.Durable(), probe.synced.Load(), end)
	}
	if msg := w.WriteError(); msg != "" {
		t.Fatalf("WriteError %q after a successful sync", msg)
	}
}

// TestSyncToUnderEverysecDoesNotWait: under everysec SyncTo answers at
// once, and the writer goroutine still writes the record.
func TestSyncToUnderEverysecDoesNotWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.aof")
	w, err := Open(path, FsyncEverySec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := AppendCommand(nil, []byte("INCR"), []byte("n"))
	end := w.End(append(w.Begin(), rec...))
	if ok, busy := w.TrySyncTo(end); !ok || busy {
		t.Fatalf("TrySyncTo under everysec: ok=%v busy=%v", ok, busy)
	}
	if w.LedRounds() != 0 {
		t.Fatal("a caller led a round under everysec")
	}
	for i := 0; ; i++ {
		if b, _ := os.ReadFile(path); bytes.Equal(b, rec) {
			break
		}
		if i > 500 {
			t.Fatal("record not written")
		}
		sleepMs(10)
	}
}
