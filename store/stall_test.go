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

// BenchmarkGrowthStall inserts keys of the issue-14 shape (key:<12 digits>, 8-byte value)
// into a default 256-shard store up to b.N keys and reports the longest Set that resized
// its shard (index rehash or entries growth, work proportional to one shard's keys,
// keys/256) against the longest and the 99.99th percentile of the other Sets.
//
//	go test -run - -bench GrowthStall -benchtime 7000000x ./store
func BenchmarkGrowthStall(b *testing.B) {
	s := New(Options{ActiveExpireInterval: -1})
	defer s.Close()
	defer s.Flush()
	v := []byte("12345678")
	k := []byte("key:000000000000")
	// Sets that resized their shard's index or entries, and the others, as the peer
	// that shows what the machine's own noise (preemption, page faults) costs.
	var resized, resizedCPU, plain []time.Duration
	plain = make([]time.Duration, 0, b.N)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k = strconv.AppendInt(k[:4], int64(1e12+i), 10)
		k = append(k[:4], k[5:]...)
		sh := s.shardOf(s.hash(k))
		ni, ne := len(sh.index), cap(sh.entries)
		c0, t0 := threadCPU(), time.Now()
		s.Set(nil, k, v, SetOptions{})
		d, c := time.Since(t0), threadCPU()-c0
		if len(sh.index) != ni || cap(sh.entries) != ne {
			resized, resizedCPU = append(resized, d), append(resizedCPU, c)
		} else {
			plain = append(plain, d)
		}
	}
	b.StopTimer()
	for _, l := range [][]time.Duration{resized, resizedCPU, plain} {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	if len(resized) == 0 || len(plain) == 0 {
		return // b.N too small to resize anything
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(resized[len(resized)-1]), "resize-max-µs")
	b.ReportMetric(us(resizedCPU[len(resizedCPU)-1]), "resize-max-cpu-µs")
	b.ReportMetric(us(plain[len(plain)-1]), "other-max-µs")
	b.ReportMetric(us(plain[len(plain)*9999/10000]), "other-p99.99-µs")
	b.ReportMetric(float64(s.Stats().UsedMemory)/float64(b.N), "used-B/key")
}
