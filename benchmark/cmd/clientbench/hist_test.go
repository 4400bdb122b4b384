package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestBucketsCoverEveryValueWithin6Percent(t *testing.T) {
	for _, v := range []uint64{0, 1, 15, 16, 17, 31, 32, 33, 1000, 123456, 1 << 40, math.MaxUint64 >> 1} {
		i := bucket(v)
		if lo, hi := lower(i), lower(i+1); v < lo || v >= hi {
			t.Fatalf("value %d in bucket %d = [%d, %d)", v, i, lo, hi)
		} else if v >= 16 && float64(hi-lo)/float64(lo) > 1.0/16+1e-9 {
			t.Fatalf("bucket %d = [%d, %d) is wider than 1/16", i, lo, hi)
		}
	}
}

func TestQuantilesMatchTheSortedSamples(t *testing.T) {
	var h hist
	samples := make([]float64, 100000)
	for i := range samples {
		v := uint64(math.Exp(rand.Float64()*math.Log(1e9))) + 1 // 1 ns .. 1 s, log-uniform
		samples[i] = float64(v)
		h[bucket(v)]++
	}
	sort.Float64s(samples)
	for _, q := range []float64{0.5, 0.99} {
		want := samples[int(q*float64(len(samples)))]
		if got := h.quantile(q); math.Abs(got-want)/want > 0.07 {
			t.Errorf("p%v = %.0f, sorted samples say %.0f", q*100, got, want)
		}
	}
}
