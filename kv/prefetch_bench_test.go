package kv

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkExecuteGETRandom runs pipelines of GETs of random keys of a
// million (more than the CPU caches hold), depth 1, 16 and 128, with the
// prefetch of execute's windows (prefetch.go) off and on. Per-op figures are
// per GET; cpu-ns/op is the thread's CPU time, which other processes' use of
// the core does not inflate as it does the wall time.
func BenchmarkExecuteGETRandom(b *testing.B) {
	const n = 1 << 20
	h := benchHandler(b)
	cl := benchClient(h)
	for i := range n {
		k := "key:" + strconv.Itoa(i) + ":000000"
		h.execute(cl, fmt.Appendf(nil, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$5\r\nvalue\r\n", len(k), k))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var reqs [][]byte
	for range 1 << 14 {
		k := "key:" + strconv.Itoa(rng.IntN(n)) + ":000000"
		reqs = append(reqs, fmt.Appendf(nil, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k))
	}
	for _, depth := range []int{1, 16, 128} {
		var batches [][]byte
		for i := 0; i+depth <= len(reqs); i += depth {
			var in []byte
			for _, r := range reqs[i : i+depth] {
				in = append(in, r...)
			}
			batches = append(batches, in)
		}
		for _, off := range []bool{true, false} {
			b.Run(fmt.Sprintf("P%d/prefetch=%v", depth, !off), func(b *testing.B) {
				noPrefetch = off
				defer func() { noPrefetch = false }()
				cl.out = make([]byte, 0, 64<<10)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := threadCPU()
				i := 0
				for done := 0; done < b.N; done += depth {
					cl.out = cl.out[:0]
					in := batches[i%len(batches)]
					i++
					if m := h.execute(cl, in); m != len(in) {
						b.Fatalf("consumed %d of %d", m, len(in))
					}
				}
				if cpu := threadCPU() - cpu0; cpu > 0 {
					b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}
