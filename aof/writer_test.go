package aof

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestAlwaysCallsBackOnlyOnceWrittenAndGroupsSyncs: 16 goroutines append
// and commit 200 records each under FsyncAlways; each callback finds its
// own record already in the file, and the records share far fewer
// fdatasyncs than there were commits.
func TestAlwaysCallsBackOnlyOnceWrittenAndGroupsSyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.aof")
	w, err := Open(path, FsyncAlways, nil)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				rec := AppendCommand(nil, []byte("SET"), []byte(fmt.Sprintf("k%d-%d", g, i)), []byte("v"))
				end := w.End(append(w.Begin(), rec...))
				done := make(chan struct{})
				check := func(_ int64, ok bool) {
					b, _ := os.ReadFile(path)
					if !ok || !bytes.Contains(b, rec) {
						errs <- fmt.Errorf("record %d-%d acknowledged (ok=%v) before it was in the file", g, i, ok)
					}
					close(done)
				}
				if w.Commit(end, check) {
					// Allowed only if another goroutine's round already
					// synced this record.
					if w.Durable() < end {
						errs <- fmt.Errorf("Commit under always answered at once for an unsynced record")
					}
					check(end, true)
				}
				<-done
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	syncs := w.syncs.Load()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := Load(path, false, func([][]byte) error { return nil }, nil)
	if err != nil || st.Commands != workers*each {
		t.Fatalf("file holds %d commands, %v", st.Commands, err)
	}
	if syncs > workers*each/2 {
		t.Errorf("%d fdatasyncs for %d commits: not grouped", syncs, workers*each)
	}
	t.Logf("%d commits, %d fdatasyncs", workers*each, syncs)
}

// TestEverysecAnswersAtOnceAndWritesSoon: under everysec Commit never
// keeps the caller, and the bytes reach the file without a Close.
func TestEverysecAnswersAtOnceAndWritesSoon(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.aof")
	w, err := Open(path, FsyncEverySec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := AppendCommand(nil, []byte("INCR"), []byte("n"))
	end := w.End(append(w.Begin(), rec...))
	if !w.Commit(end, func(int64, bool) { t.Error("callback under everysec") }) {
		t.Fatal("everysec Commit kept the caller")
	}
	for i := 0; ; i++ {
		if b, _ := os.ReadFile(path); bytes.Equal(b, rec) {
			break
		}
		if i > 500 {
			t.Fatal("record not written")
		}
		w.signal()
		sleepMs(10)
	}
}

func TestParseFsync(t *testing.T) {
	for _, s := range []string{"always", "everysec", "no"} {
		p, err := ParseFsync(s)
		if err != nil || p.String() != s {
			t.Errorf("%s: %v %v", s, p, err)
		}
	}
	if _, err := ParseFsync("sometimes"); err == nil {
		t.Error("accepted sometimes")
	}
}
