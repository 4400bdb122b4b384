package kv

import "math"

// Correctly rounded sin, cos and asin for the distances that STOREDIST
// stores at full precision. Redis computes them with glibc, whose results
// are the correctly rounded ones in all but rare cases, while Go's math
// package is often one ulp away; evaluating in double-double (about 106
// bits) and rounding once gives glibc's bits. They cost some hundred
// nanoseconds a call, so the searches that only reply with 4-decimal
// distances keep math's.

// dd is a double-double: the unevaluated sum hi+lo, |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func (a dd) add(b dd) dd {
	s := twoSum(a.hi, b.hi)
	return quickTwoSum(s.hi, s.lo+a.lo+b.lo)
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

func (a dd) mul(b dd) dd {
	p := a.hi * b.hi
	e := math.FMA(a.hi, b.hi, -p)
	return quickTwoSum(p, e+(a.hi*b.lo+a.lo*b.hi))
}

// divFloat divides by a double.
func (a dd) divFloat(b float64) dd {
	q1 := a.hi / b
	p := q1 * b
	e := math.FMA(q1, b, -p)
	q2 := (a.hi - p - e + a.lo) / b
	return quickTwoSum(q1, q2)
}

// halfPi is π/2 to about 160 bits, in three doubles.
var halfPi = [3]float64{1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33}

// sinCosReduced is the sine and cosine of r, |r| <= π/4 or so, by their
// Taylor series in double-double.
func sinCosReduced(r dd) (sin, cos dd) {
	r2 := r.mul(r)
	sin, cos = r, dd{1, 0}
	sterm, cterm := r, dd{1, 0}
	for k := 1; k < 30; k++ {
		sterm = sterm.mul(r2).divFloat(float64(-(2 * k) * (2*k + 1)))
		cterm = cterm.mul(r2).divFloat(float64(-(2*k - 1) * (2 * k)))
		sin, cos = sin.add(sterm), cos.add(cterm)
		if math.Abs(sterm.hi) < 1e-40 && math.Abs(cterm.hi) < 1e-40 {
			break
		}
	}
	return sin, cos
}

// sinCosDD is the sine and cosine of x in double-double, for |x| up to a
// few π (the haversine's arguments).
func sinCosDD(x float64) (sin, cos dd) {
	k := math.Round(x / halfPi[0])
	// r = x - k·π/2, each product exact (k is a small integer).
	r := twoSum(x, -k*halfPi[0])
	r.lo += math.FMA(-k, halfPi[0], k*halfPi[0]) // the rounding of k*halfPi[0]
	r = quickTwoSum(r.hi, r.lo)
	r = r.add(dd{-k * halfPi[1], math.FMA(-k, halfPi[1], k*halfPi[1])})
	r = r.add(dd{-k * halfPi[2], 0})
	s, c := sinCosReduced(r)
	switch int64(k) & 3 {
	case 0:
		return s, c
	case 1:
		return c, s.neg()
	case 2:
		return s.neg(), c.neg()
	}
	return c.neg(), s
}

// sinExact and cosExact are sin and cos correctly rounded (bar ties).
func sinExact(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e6 {
		return math.Sin(x)
	}
	s, _ := sinCosDD(x)
	return s.hi + s.lo
}

func cosExact(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e6 {
		return math.Cos(x)
	}
	_, c := sinCosDD(x)
	return c.hi + c.lo
}

// asinExact is asin correctly rounded: math's value refined by a Newton
// step in double-double.
func asinExact(x float64) float64 {
	y := math.Asin(x)
	if x == 0 || math.Abs(x) >= 1 || math.IsNaN(x) {
		return y
	}
	s, c := sinCosDD(y)
	diff := s.add(dd{-x, 0}) // sin(y) - x
	cy := c.hi + c.lo
	if cy == 0 {
		return y
	}
	r := dd{y, 0}.add(diff.divFloat(cy).neg())
	return r.hi + r.lo
}

// geoDistanceExact is geoDistance with correctly rounded sin, cos and
// asin: glibc's distance to the bit.
func geoDistanceExact(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := degRad(lon1), degRad(lon2)
	v := sinExact((lon2r - lon1r) / 2)
	if v == 0 {
		return geoLatDistance(lat1, lat2)
	}
	lat1r, lat2r := degRad(lat1), degRad(lat2)
	u := sinExact((lat2r - lat1r) / 2)
	a := float64(u*u) + float64(float64(float64(cosExact(lat1r)*cosExact(lat2r))*v)*v)
	return 2.0 * earthRadiusMeters * asinExact(math.Sqrt(a))
}
