package client

import (
	"context"
	"fmt"
	"testing"

	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/kv"
)

// Steady-state Get, GetInto, Set and Incr allocate nothing per call. The
// server is a separate redis-server process, so that only the client's
// allocations are counted.
func TestCallsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	c := newClient(t, Options{Addr: redistest.StartServer(t), Conns: 1})
	ctx := context.Background()
	val := []byte("some value")
	dst := make([]byte, 0, 64)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Set", func() {
			if err := c.Set(ctx, "alloc:k", val); err != nil {
				t.Fatal(err)
			}
		}},
		{"Get", func() {
			if v, err := c.Get(ctx, "alloc:k"); err != nil || len(v) != len(val) {
				t.Fatal(v, err)
			}
		}},
		{"GetInto", func() {
			if v, err := c.GetInto(ctx, dst[:0], "alloc:k"); err != nil || len(v) != len(val) {
				t.Fatal(v, err)
			}
		}},
		{"Incr", func() {
			if _, err := c.Incr(ctx, "alloc:n"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		name, f := tc.name, tc.f
		f() // warm the pools
		if n := testing.AllocsPerRun(2000, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
}

func benchServers(b *testing.B) []server {
	return []server{
		{"redis", redistest.StartServer(b)},
		{"shoal", startShoal(b, kv.Options{})},
	}
}

// BenchmarkCalls measures one goroutine's calls (latency-bound) and many
// goroutines' (batched), against redis-server and an in-process Shoal (whose
// own allocations, if any, are counted too).
func BenchmarkCalls(b *testing.B) {
	for _, srv := range benchServers(b) {
		c := newClient(b, Options{Addr: srv.addr})
		ctx := context.Background()
		val := []byte("xyz")
		if err := c.Set(ctx, "bench:k", val); err != nil {
			b.Fatal(err)
		}
		ops := map[string]func() error{
			"Get": func() error { _, err := c.Get(ctx, "bench:k"); return err },
			"Set": func() error { return c.Set(ctx, "bench:k", val) },
			"Incr": func() error {
				_, err := c.Incr(ctx, "bench:n")
				return err
			},
		}
		for _, op := range []string{"Get", "Set", "Incr"} {
			f := ops[op]
			b.Run(fmt.Sprintf("%s/%s/serial", srv.name, op), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/%s/parallel64", srv.name, op), func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(32) // 32 × GOMAXPROCS goroutines
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := f(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
