package kv

import (
	"math"
	"strconv"
)

// The geohash arithmetic of Redis 7.0's geo commands (geohash.c and
// geohash_helper.c, re-derived here): a position is a 52-bit score, the
// interleaved 26-bit fixed-point latitude (even bits) and longitude (odd
// bits) over the Web Mercator latitude range; a search covers its shape
// with a cell and its 8 neighbours at a depth chosen from the radius. The
// floating-point steps are done in C's order, one rounding each (the
// float64 conversions keep Go from fusing them), so that scores,
// decoded coordinates and the cells searched are Redis's bit for bit.

const (
	geoLonMin  = -180.0
	geoLonMax  = 180.0
	geoLatMin  = -85.05112878
	geoLatMax  = 85.05112878
	geoStepMax = 26 // 26 bits a coordinate: 52-bit scores

	earthRadiusMeters = 6372797.560856 // Redis's EARTH_RADIUS_IN_METERS
	mercatorMax       = 20037726.37
)

// degToRad is C's M_PI / 180.0, rounded as a double division (a Go
// constant expression would be exact and round once, which may differ).
var degToRad = func(pi float64) float64 { return pi / 180 }(math.Pi)

func degRad(deg float64) float64 { return deg * degToRad }
func radDeg(rad float64) float64 { return rad / degToRad }

// geoRange is one coordinate's interval.
type geoRange struct{ min, max float64 }

var (
	geoLonRange = geoRange{geoLonMin, geoLonMax}
	geoLatRange = geoRange{geoLatMin, geoLatMax}
	// GEOHASH re-encodes positions over the standard geohash ranges.
	stdLonRange = geoRange{-180, 180}
	stdLatRange = geoRange{-90, 90}
)

// geoCell is a geohash of step bits a coordinate; the zero cell (step 0)
// is "none", as Redis's GZERO.
type geoCell struct {
	bits uint64
	step uint8
}

func (c geoCell) none() bool { return c.bits == 0 && c.step == 0 }

// geoArea is a cell's extent.
type geoArea struct{ lon, lat geoRange }

// spreadBits spaces the 32 bits of v to the even bits of the result.
func spreadBits(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// squeezeBits gathers the even bits of v into 32 bits.
func squeezeBits(v uint64) uint32 {
	x := v & 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return uint32(x)
}

// geoEncode is the cell of step bits holding lon,lat over the ranges, or
// false outside them (or outside the Mercator limits, as Redis checks
// those whatever the ranges).
func geoEncode(lonR, latR geoRange, lon, lat float64, step uint8) (geoCell, bool) {
	if step == 0 || step > 32 {
		return geoCell{}, false
	}
	if lon > geoLonMax || lon < geoLonMin || lat > geoLatMax || lat < geoLatMin {
		return geoCell{}, false
	}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return geoCell{}, false
	}
	scale := float64(uint64(1) << step)
	latOff := float64(float64(lat-latR.min)/float64(latR.max-latR.min)) * scale
	lonOff := float64(float64(lon-lonR.min)/float64(lonR.max-lonR.min)) * scale
	return geoCell{bits: spreadBits(uint32(latOff)) | spreadBits(uint32(lonOff))<<1, step: step}, true
}

// geoDecode is the extent of cell c over the ranges.
func geoDecode(lonR, latR geoRange, c geoCell) geoArea {
	// uint32 as in C: ilat+1 wraps for a score GEOADD never wrote.
	ilat, ilon := squeezeBits(c.bits), squeezeBits(c.bits>>1)
	scale := float64(uint64(1) << c.step)
	latScale, lonScale := latR.max-latR.min, lonR.max-lonR.min
	var a geoArea
	a.lat.min = latR.min + float64(float64(float64(ilat)/scale)*latScale)
	a.lat.max = latR.min + float64(float64(float64(ilat+1)/scale)*latScale)
	a.lon.min = lonR.min + float64(float64(float64(ilon)/scale)*lonScale)
	a.lon.max = lonR.min + float64(float64(float64(ilon+1)/scale)*lonScale)
	return a
}

// geoScoreBits is C's (uint64_t) conversion of a score as x86-64 code
// does it, so that a sorted set with scores GEOADD never wrote decodes as
// in Redis rather than as Go's conversion would.
func geoScoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	switch {
	case score < two63 && score > -two63:
		return uint64(int64(score))
	case score >= two63 && score < 2*two63:
		return uint64(int64(score-two63)) ^ 1<<63
	case score >= 2*two63: // score-2^63 overflows: the indefinite value, xored
		return 0
	}
	return 1 << 63
}

// geoCLongLong is C's (long long) conversion of a score (WITHHASH).
func geoCLongLong(score float64) int64 {
	if score < 9223372036854775808.0 && score >= -9223372036854775808.0 {
		return int64(score)
	}
	return math.MinInt64
}

// geoPosition decodes a score to its cell's centre, as GEOPOS replies.
func geoPosition(score float64) (lon, lat float64) {
	a := geoDecode(geoLonRange, geoLatRange, geoCell{bits: geoScoreBits(score), step: geoStepMax})
	lon = (a.lon.min + a.lon.max) / 2
	lon = min(max(lon, geoLonMin), geoLonMax)
	lat = (a.lat.min + a.lat.max) / 2
	lat = min(max(lat, geoLatMin), geoLatMax)
	return lon, lat
}

// geoAlign52 is a cell as a 52-bit score prefix.
func geoAlign52(c geoCell) uint64 { return c.bits << (52 - 2*uint(c.step)) }

// geoScore is the score GEOADD stores for lon,lat (already range-checked).
func geoScore(lon, lat float64) uint64 {
	c, _ := geoEncode(geoLonRange, geoLatRange, lon, lat, geoStepMax)
	return geoAlign52(c)
}

const geoAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// appendGeohash appends the 11-character standard geohash of score's
// position: re-encoded over ±90 latitude, the 52 bits in 10 characters
// and a final '0'.
func appendGeohash(dst []byte, score float64) []byte {
	lon, lat := geoPosition(score)
	c, _ := geoEncode(stdLonRange, stdLatRange, lon, lat, geoStepMax)
	for i := 0; i < 10; i++ {
		dst = append(dst, geoAlphabet[(c.bits>>(52-(i+1)*5))&0x1f])
	}
	return append(dst, geoAlphabet[0])
}

// geoMove moves cell c one cell along the odd (longitude, lonDir) and
// even (latitude, latDir) bits, wrapping at the edges.
func geoMove(c geoCell, lonDir, latDir int) geoCell {
	c.bits = geoMoveBits(c.bits, c.step, 0xaaaaaaaaaaaaaaaa, lonDir)
	c.bits = geoMoveBits(c.bits, c.step, 0x5555555555555555, latDir)
	return c
}

// geoMoveBits adds d (±1) to the coordinate held in the bits of mask.
func geoMoveBits(bits uint64, step uint8, mask uint64, d int) uint64 {
	if d == 0 {
		return bits
	}
	shift := 64 - 2*uint(step)
	moved, kept := bits&mask, bits&^mask
	gaps := ^mask >> shift // the other coordinate's bits, set
	if d > 0 {
		moved += gaps + 1
	} else {
		moved = (moved | gaps) - (gaps + 1)
	}
	return moved&(mask>>shift) | kept
}

// geoShape is a search area: a circle of radius, or a box of width by
// height, centred on lon,lat, in a unit of toMeters meters.
type geoShape struct {
	lon, lat      float64
	box           bool
	radius        float64
	width, height float64
	toMeters      float64
	// exact: distances with correctly rounded sin, cos and asin
	// (geo_libm.go), for STOREDIST, which stores them at full precision.
	exact bool
}

// geoStepsForRadius is the cell depth whose cells are about as wide as
// the search, one less towards the poles.
func geoStepsForRadius(meters, lat float64) uint8 {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// bounds is the shape's bounding box: min lon, min lat, max lon, max lat.
func (s *geoShape) bounds() (minLon, minLat, maxLon, maxLat float64) {
	var height, width float64
	if s.box {
		height, width = s.toMeters*(s.height/2), s.toMeters*(s.width/2)
	} else {
		height, width = s.toMeters*s.radius, s.toMeters*s.radius
	}
	latDelta := radDeg(height / earthRadiusMeters)
	lonDeltaTop := radDeg(width / earthRadiusMeters / math.Cos(degRad(s.lat+latDelta)))
	lonDeltaBottom := radDeg(width / earthRadiusMeters / math.Cos(degRad(s.lat-latDelta)))
	lonDelta := lonDeltaTop
	if s.lat < 0 {
		lonDelta = lonDeltaBottom
	}
	return s.lon - lonDelta, s.lat - latDelta, s.lon + lonDelta, s.lat + latDelta
}

// geoCells is the cell holding the shape's centre and its 8 neighbours
// in Redis's search order (centre, N, S, E, W, NE, NW, SE, SW), those
// the bounding box does not reach set to none.
func (s *geoShape) cells() [9]geoCell {
	minLon, minLat, maxLon, maxLat := s.bounds()
	meters := s.radius
	if s.box {
		meters = math.Sqrt(float64((s.width/2)*(s.width/2)) + float64((s.height/2)*(s.height/2)))
	}
	meters *= s.toMeters
	steps := geoStepsForRadius(meters, s.lat)
	centre, _ := geoEncode(geoLonRange, geoLatRange, s.lon, s.lat, steps)
	area := geoDecode(geoLonRange, geoLatRange, centre)
	north := geoDecode(geoLonRange, geoLatRange, geoMove(centre, 0, 1))
	south := geoDecode(geoLonRange, geoLatRange, geoMove(centre, 0, -1))
	east := geoDecode(geoLonRange, geoLatRange, geoMove(centre, 1, 0))
	west := geoDecode(geoLonRange, geoLatRange, geoMove(centre, -1, 0))
	if steps > 1 && (north.lat.max < maxLat || south.lat.min > minLat || east.lon.max < maxLon || west.lon.min > minLon) {
		steps--
		centre, _ = geoEncode(geoLonRange, geoLatRange, s.lon, s.lat, steps)
		area = geoDecode(geoLonRange, geoLatRange, centre)
	}
	const (
		n, so, e, w, ne, nw, se, sw = 1, 2, 3, 4, 5, 6, 7, 8
	)
	c := [9]geoCell{centre,
		geoMove(centre, 0, 1), geoMove(centre, 0, -1), geoMove(centre, 1, 0), geoMove(centre, -1, 0),
		geoMove(centre, 1, 1), geoMove(centre, -1, 1), geoMove(centre, 1, -1), geoMove(centre, -1, -1)}
	if steps >= 2 {
		drop := func(ids ...int) {
			for _, i := range ids {
				c[i] = geoCell{}
			}
		}
		if area.lat.min < minLat {
			drop(so, sw, se)
		}
		if area.lat.max > maxLat {
			drop(n, ne, nw)
		}
		if area.lon.min < minLon {
			drop(w, sw, nw)
		}
		if area.lon.max > maxLon {
			drop(e, se, ne)
		}
	}
	return c
}

// geoLatDistance is the distance between two latitudes on a meridian.
func geoLatDistance(lat1, lat2 float64) float64 {
	return earthRadiusMeters * math.Abs(degRad(lat2)-degRad(lat1))
}

// geoDistance is the haversine distance in meters, on Redis's sphere.
func geoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := degRad(lon1), degRad(lon2)
	v := math.Sin((lon2r - lon1r) / 2)
	if v == 0 {
		return geoLatDistance(lat1, lat2)
	}
	lat1r, lat2r := degRad(lat1), degRad(lat2)
	u := math.Sin((lat2r - lat1r) / 2)
	a := float64(u*u) + float64(float64(float64(math.Cos(lat1r)*math.Cos(lat2r))*v)*v)
	return 2.0 * earthRadiusMeters * math.Asin(math.Sqrt(a))
}

// contains reports whether lon,lat is inside the shape, and its distance
// in meters from the centre.
func (s *geoShape) contains(lon, lat float64) (float64, bool) {
	distance := geoDistance
	if s.exact {
		distance = geoDistanceExact
	}
	if !s.box {
		d := distance(s.lon, s.lat, lon, lat)
		return d, d <= s.radius*s.toMeters
	}
	if geoLatDistance(lat, s.lat) > s.height*s.toMeters/2 {
		return 0, false
	}
	if distance(lon, lat, s.lon, lat) > s.width*s.toMeters/2 {
		return 0, false
	}
	return distance(s.lon, s.lat, lon, lat), true
}

// appendGeoDistance formats a distance as Redis's fixedpoint_d2string
// with 4 decimals: rounded half to even at the fourth, at least one
// integer digit.
func appendGeoDistance(dst []byte, d float64) []byte {
	if d == 0 {
		return append(dst, "0.0000"...)
	}
	v := math.RoundToEven(d * 10000)
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	n := uint64(v)
	dst = strconv.AppendUint(dst, n/10000, 10)
	dst = append(dst, '.')
	frac := n % 10000
	for div := uint64(1000); div > 0; div /= 10 {
		dst = append(dst, byte('0'+frac/div%10))
	}
	return dst
}

// appendHumanDouble formats a coordinate as Redis's addReplyHumanLongDouble
// text: "%.17Lf" of the value, trailing zeros and a bare '.' trimmed.
func appendHumanDouble(dst []byte, f float64) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', 17, 64)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}

// appendPrintfF formats f as C's "%f" (6 decimals; inf, -inf).
func appendPrintfF(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'f', 6, 64)
}
