package store

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/procfs"
)

// useHeap puts a fresh store's memory on the Go heap (before any key is written), so the
// race detector, which ignores memory outside the heap, sees its pages and entries.
func useHeap(s *Store) {
	for i := range s.shards {
		s.shards[i].arena.heap = true
	}
}

// heapObjectBytes is the Go heap's live object bytes after a collection.
func heapObjectBytes() int64 {
	runtime.GC()
	m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(m)
	return int64(m[0].Value.Uint64())
}

// rssBytes is this process's resident set size (Linux only).
func rssBytes(t *testing.T) int64 {
	t.Helper()
	rss, err := procfs.RSS(os.Getpid())
	if err != nil {
		t.Skipf("no resident set size: %v", err)
	}
	return rss
}

func fillSmallKeys(s *Store, n int) {
	var k []byte
	v := []byte("12345678")
	for i := 0; i < n; i++ {
		k = strconv.AppendInt(append(k[:0], "key:"...), int64(i), 10)
		s.Set(nil, k, v, SetOptions{})
	}
}

func storePages(s *Store) (pages int) {
	for i := range s.shards {
		pages += len(s.shards[i].arena.pages)
	}
	return pages
}

// TestStoreMemoryIsOffHeap: the keyspace's bytes (pages, entries, index) do not live on
// the Go heap, and Flush gives them back to the kernel.
func TestStoreMemoryIsOffHeap(t *testing.T) {
	if !mmapAvailable {
		t.Skip("no mmap on this platform: the store lives on the Go heap")
	}
	s := newTestStore(t, Options{Shards: 4})
	heapBefore := heapObjectBytes()
	const n = 150_000
	fillSmallKeys(s, n)
	used := s.Stats().UsedMemory
	heapGrowth, rssFull := heapObjectBytes()-heapBefore, rssBytes(t)
	if used < n*50 {
		t.Fatalf("used_memory %d for %d keys, want at least 50 B a key", used, n)
	}
	if heapGrowth > used/10 {
		t.Errorf("Go heap grew %d bytes for %d bytes of keyspace, want under a tenth", heapGrowth, used)
	}
	for i := range s.shards {
		sh := &s.shards[i]
		if cap(sh.entries)*int(entrySize) < offHeapMin || len(sh.index)*4 < offHeapMin {
			t.Fatalf("shard %d: entries cap %d, index %d: below offHeapMin, the test is too small", i, cap(sh.entries), len(sh.index))
		}
	}
	s.Flush()
	if rssFlushed := rssBytes(t); rssFull-rssFlushed < used*7/10 {
		// Only Flush runs between the two readings, and the Go runtime can only lower RSS
		// meanwhile, so a shortfall means the pages were not given back.
		t.Errorf("Flush gave back %d bytes of RSS for %d bytes of keyspace, want at least 70%%", rssFull-rssFlushed, used)
	}
	if p := storePages(s); p != 0 {
		t.Errorf("%d pages left after Flush", p)
	}
	checkInvariants(t, s)
	// The pages are reused: filling again maps no new chunk beyond what it had.
	mapped, _ := offHeapPages()
	fillSmallKeys(s, n)
	if again, _ := offHeapPages(); again > mapped {
		t.Errorf("refilling mapped %d more page bytes instead of reusing freed pages", again-mapped)
	}
	if v, ok, _ := s.Get(nil, []byte("key:"+strconv.Itoa(n-1))); !ok || string(v) != "12345678" {
		t.Fatalf("after refill Get = %q %v", v, ok)
	}
}

// TestDroppedStoreReleasesItsPages: a Store that becomes unreachable without Flush gives
// its off-heap pages back (runtime.AddCleanup), so tests and short-lived stores leak none.
func TestDroppedStoreReleasesItsPages(t *testing.T) {
	if !mmapAvailable {
		t.Skip("no mmap on this platform")
	}
	pages := func() int {
		s := New(Options{Shards: 2, ActiveExpireInterval: -1})
		fillSmallKeys(s, 50_000)
		s.Close()
		return storePages(s)
	}()
	if pages < 10 {
		t.Fatalf("store used %d pages, test too small", pages)
	}
	_, inUse := offHeapPages()
	// Cleanups run on their own goroutine after a collection; wait for it, bounded.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if _, now := offHeapPages(); now <= inUse-int64(pages)*pageSize {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, now := offHeapPages()
	t.Fatalf("pages in use went from %d to %d after dropping a store of %d pages", inUse, now, pages)
}

// TestResultsOutliveTheirPages: what Get, GetEx, Keys, Scan and RandomKey return is a
// copy (doc.go, "Slices"), so it stays intact after Flush has freed the pages it came
// from and other keys have reused them.
func TestResultsOutliveTheirPages(t *testing.T) {
	s := newTestStore(t, Options{Shards: 2})
	const n = 5000
	val := func(round, i int) []byte { return []byte(strconv.Itoa(round) + "-value-" + strconv.Itoa(i)) }
	for i := 0; i < n; i++ {
		s.Set(nil, []byte("k"+strconv.Itoa(i)), val(1, i), SetOptions{})
	}
	got, _, _ := s.Get(nil, []byte("k7"))
	gotEx, _, _ := s.GetEx(nil, []byte("k8"), GetExOptions{})
	keys := s.Keys([]byte("k1*"))
	_, scanned := s.Scan(0, nil, 100, "")
	random, _ := s.RandomKey()
	snapshot := func() []string {
		out := []string{string(got), string(gotEx), string(random)}
		for _, k := range append(keys, scanned...) {
			out = append(out, string(k))
		}
		return out
	}
	before := snapshot()
	s.Flush()
	for i := 0; i < n; i++ { // same sizes: the freed pages are reused
		s.Set(nil, []byte("x"+strconv.Itoa(i)), val(2, i), SetOptions{})
	}
	after := snapshot()
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("result %d changed from %q to %q after Flush and refill", i, before[i], after[i])
		}
	}
	if string(got) != "1-value-7" || len(keys) < 100 || len(scanned) == 0 {
		t.Fatalf("Get %q, %d keys, %d scanned", got, len(keys), len(scanned))
	}
}
