package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// While one write is under way, every call made meanwhile goes out in the
// next single write.
func TestCallsMadeDuringAWriteGoOutInOneWrite(t *testing.T) {
	addr := servers(t)[0].addr
	var writes atomic.Int64
	hold := newHoldGate()
	c := newClient(t, Options{Addr: addr, Conns: 1, Dialer: countingDialer(&writes, hold)})
	ctx := context.Background()
	writes.Store(0)
	first := hold.holdFirst(func() error { return c.Set(ctx, "batch:first", []byte("1")) })
	const n = 100
	wait := inGoroutines(n, func(i int) error { return c.Set(ctx, key("batch", i), []byte(fmt.Sprint(i))) })
	waitQueued(t, c, n)
	close(hold.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if w := writes.Load(); w != 2 {
		t.Fatalf("%d writes for 1 call + %d calls queued during it, want 2", w, n)
	}
	for i := 0; i < n; i++ {
		if v, err := c.Get(ctx, key("batch", i)); err != nil || string(v) != fmt.Sprint(i) {
			t.Fatalf("batch:%d = %q, %v", i, v, err)
		}
	}
}

// Under load from many goroutines, far fewer writes than calls are made.
func TestManyConcurrentCallsShareWrites(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			var writes atomic.Int64
			c := newClient(t, Options{Addr: srv.addr, Conns: 2, Dialer: countingDialer(&writes, nil)})
			writes.Store(0)
			const goroutines, rounds = 1000, 20
			var wg sync.WaitGroup
			var failed atomic.Int64
			for g := 0; g < goroutines; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < rounds; r++ {
						if _, err := c.Incr(context.Background(), key("share", g)); err != nil {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			if failed.Load() > 0 {
				t.Fatalf("%d calls failed", failed.Load())
			}
			calls, w := int64(goroutines*rounds), writes.Load()
			t.Logf("%d calls in %d writes (%.1f calls per write)", calls, w, float64(calls)/float64(w))
			if w > calls/4 {
				t.Fatalf("%d writes for %d calls from %d goroutines: want at most one write per 4 calls", w, calls, goroutines)
			}
		})
	}
}

// A batch is cut at MaxBatchBytes; a single larger command goes alone.
func TestWritesAreBoundedByMaxBatchBytes(t *testing.T) {
	addr := servers(t)[0].addr
	var writes atomic.Int64
	hold := newHoldGate()
	c := newClient(t, Options{Addr: addr, Conns: 1, MaxBatchBytes: 512, Dialer: countingDialer(&writes, hold)})
	ctx := context.Background()
	writes.Store(0)
	first := hold.holdFirst(func() error { return c.Set(ctx, "bound:first", []byte("1")) })
	const n = 100 // ~40 bytes each: ~8 writes
	wait := inGoroutines(n, func(i int) error { return c.Set(ctx, key("bound", i), []byte("0123456789")) })
	waitQueued(t, c, n)
	close(hold.release)
	<-first
	if err := wait(); err != nil {
		t.Error(err)
	}
	big := make([]byte, 2000)
	if err := c.Set(ctx, "bound:big", big); err != nil {
		t.Fatal(err)
	}
	sizes := hold.writeSizes() // the first call, the batches, the big SET
	if len(sizes) < 3 {
		t.Fatalf("writes %v, want at least 3", sizes)
	}
	batches := sizes[1 : len(sizes)-1]
	total := 0
	for i, sz := range batches {
		if sz > 512 {
			t.Fatalf("batch %d of %d bytes exceeds MaxBatchBytes 512 (all: %v)", i, sz, sizes)
		}
		total += sz
	}
	// Every batch but the last was full up to one command (< 50 bytes).
	if most := total/(512-50) + 1; len(batches) > most {
		t.Fatalf("%d batches (%v) for %d bytes: want at most %d", len(batches), batches, total, most)
	}
	if last := sizes[len(sizes)-1]; last < 2000 {
		t.Fatalf("the 2,000-byte SET went out in a write of %d bytes, want alone and whole", last)
	}
}
