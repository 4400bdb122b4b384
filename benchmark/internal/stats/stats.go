// Package stats summarises the repeated runs of a benchmark.
package stats

import "slices"

// Median returns the median of v (of an even count, the mean of the middle
// two), or 0 for none. v is left as it is.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
