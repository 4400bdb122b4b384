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
	hold.arm()
	first := make(chan error)
	go func() { first <- c.Set(ctx, "batch:first", []byte("1")) }()
	<-hold.entered
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Set(ctx, key("batch", i), []byte(fmt.Sprint(i))); err != nil {
				errs <- err
			}
		}()
	}
	waitQueued(t, c, n)
	close(hold.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
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
