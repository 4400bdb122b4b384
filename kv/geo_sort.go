package kv

import "slices"

// Sorting a search's points by distance exactly as Redis 7.0 does, so that
// points at the same distance come in Redis's order too: all of them with
// the C library's qsort (glibc's is a stable merge sort), the nearest
// COUNT with Redis's pqsort, a Bentley-McIlroy quicksort that only
// descends into partitions overlapping the wanted ranks.

// geoCompare orders points by distance, nearest first (or last, desc).
func geoCompare(desc bool) func(a, b *geoPoint) int {
	return func(a, b *geoPoint) int {
		c := 0
		switch {
		case a.dist > b.dist:
			c = 1
		case a.dist < b.dist:
			c = -1
		}
		if desc {
			c = -c
		}
		return c
	}
}

// sortGeoPoints puts the first keep points (all when keep is 0 or more
// than there are) in order.
func sortGeoPoints(p []geoPoint, desc bool, keep int) {
	cmp := geoCompare(desc)
	if keep == 0 || keep >= len(p) {
		slices.SortStableFunc(p, func(a, b geoPoint) int { return cmp(&a, &b) })
		return
	}
	partialQuicksort(p, 0, len(p), cmp, 0, keep-1)
}

// med3 is the index of the median of p[a], p[b], p[c].
func med3[T any](p []T, a, b, c int, cmp func(a, b *T) int) int {
	if cmp(&p[a], &p[b]) < 0 {
		switch {
		case cmp(&p[b], &p[c]) < 0:
			return b
		case cmp(&p[a], &p[c]) < 0:
			return c
		}
		return a
	}
	switch {
	case cmp(&p[b], &p[c]) > 0:
		return b
	case cmp(&p[a], &p[c]) < 0:
		return a
	}
	return c
}

// partialQuicksort sorts p[a:a+n] enough that ranks lo..hi hold what a
// full sort puts there, in pqsort's steps (the same pivots, swaps and
// partitions, so the same order of equal points). SORT's BY with LIMIT
// uses it too (sort_run.go).
func partialQuicksort[T any](p []T, a, n int, cmp func(a, b *T) int, lo, hi int) {
	swap := func(i, j int) { p[i], p[j] = p[j], p[i] }
	vecswap := func(i, j, k int) {
		for ; k > 0; k-- {
			swap(i, j)
			i++
			j++
		}
	}
	wanted := func(first, last int) bool { return !(lo < first && hi < first || lo > last && hi > last) }
	for {
		if n < 7 {
			for m := a + 1; m < a+n; m++ {
				for l := m; l > a && cmp(&p[l-1], &p[l]) > 0; l-- {
					swap(l, l-1)
				}
			}
			return
		}
		m := a + n/2
		if n > 7 {
			l, last := a, a+n-1
			if n > 40 {
				d := n / 8
				l = med3(p, l, l+d, l+2*d, cmp)
				m = med3(p, m-d, m, m+d, cmp)
				last = med3(p, last-2*d, last-d, last, cmp)
			}
			m = med3(p, l, m, last, cmp)
		}
		swap(a, m)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				r := cmp(&p[pb], &p[a])
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := cmp(&p[pc], &p[a])
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		end := a + n
		r := min(pa-a, pb-pa)
		vecswap(a, pb-r, r)
		r = min(pd-pc, end-pd-1)
		vecswap(pb, end-r, r)
		if r = pb - pa; r > 1 && wanted(a, a+r-1) {
			partialQuicksort(p, a, r, cmp, lo, hi)
		}
		if r = pd - pc; r > 1 && wanted(end-r, end-1) {
			a, n = end-r, r
			continue
		}
		return
	}
}
