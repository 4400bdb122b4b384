//go:build linux

package store

import (
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time: unlike wall time, preemption by other
// processes on a shared machine does not inflate it.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// BenchmarkGrowthStall inserts b.N keys of the issue-14 shape (key:<12 digits>, 8-byte
// value) into a 16-shard store and reports the thread CPU time of the costliest Set
// overall, of the costliest Set that resized its shard (a migration step or finish, a
// whole-index rehash, an entries growth) and the 99.99th percentile, with the index
// resized step by step (resize=steps) and, as the peer, all at once (resize=whole).
// Thread CPU time, unlike wall time, is not inflated when the shared machine preempts
// the benchmark. With 16 shards and 450,000 keys a shard holds what one of a default
// store's 256 shards holds at 7.2M keys:
//
//	go test -run - -bench GrowthStall -benchtime 450000x -count 3 ./store
func BenchmarkGrowthStall(b *testing.B) {
	for _, mode := range []string{"steps", "whole"} {
		b.Run("resize="+mode, func(b *testing.B) {
			syncResize = mode == "whole"
			defer func() { syncResize = false }()
			growthStall(b)
		})
	}
}

func growthStall(b *testing.B) {
	s := New(Options{Shards: 16, ActiveExpireInterval: -1})
	defer s.Close()
	defer s.Flush()
	v := []byte("12345678")
	k := []byte("key:000000000000")
	var resized, all []time.Duration
	all = make([]time.Duration, 0, b.N)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k = strconv.AppendInt(k[:4], int64(1e12+i), 10)
		k = append(k[:4], k[5:]...)
		sh := s.shardOf(s.hash(k))
		ni, ne, migrating := len(sh.index), cap(sh.entries), sh.next != nil
		c0 := threadCPU()
		s.Set(nil, k, v, SetOptions{})
		c := threadCPU() - c0
		all = append(all, c)
		if len(sh.index) != ni || cap(sh.entries) != ne || migrating || sh.next != nil {
			resized = append(resized, c)
		}
	}
	b.StopTimer()
	if len(resized) == 0 {
		return // b.N too small to resize anything
	}
	for _, l := range [][]time.Duration{resized, all} {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(all[len(all)-1]), "max-cpu-µs")
	b.ReportMetric(us(resized[len(resized)-1]), "resize-max-cpu-µs")
	b.ReportMetric(us(all[len(all)*9999/10000]), "p99.99-cpu-µs")
}
