package main

import "math/bits"

// hist is a latency histogram owned by one goroutine: 16 buckets per power
// of two (at most 6% wide), from 1 ns to hours.
type hist [64 * 16]uint32

func bucket(ns uint64) int {
	if ns < 16 {
		return int(ns)
	}
	e := bits.Len64(ns) - 1 // ≥ 4
	return (e-3)*16 + int((ns>>(e-4))&15)
}

// lower returns the smallest value of bucket i.
func lower(i int) uint64 {
	if i < 16 {
		return uint64(i)
	}
	e := i/16 + 3
	return (16 + uint64(i%16)) << (e - 4)
}

func (h *hist) add(o *hist) {
	for i, n := range o {
		h[i] += n
	}
}

// quantile returns the value (ns, the middle of its bucket) below which a
// fraction q of the samples lie.
func (h *hist) quantile(q float64) float64 {
	var total uint64
	for _, n := range h {
		total += uint64(n)
	}
	if total == 0 {
		return 0
	}
	want := uint64(q * float64(total))
	var seen uint64
	for i, n := range h {
		seen += uint64(n)
		if seen > want {
			return float64(lower(i)+lower(i+1)) / 2
		}
	}
	return float64(lower(len(h) - 1))
}
