package kv_test

import (
	"fmt"
	"math/rand"
	"strconv"
)

// The geo commands against redis-server 7.0, RESP2 and RESP3: scores,
// geohashes, coordinates and distances byte for byte, and the members of
// every search in Redis's order, also unsorted (the order of the cells
// searched and of the scores within each).

func init() {
	sicily := c("GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania")
	diffCases["geo-basic"] = []step{
		sicily, c("ZRANGE Sicily 0 -1 WITHSCORES"), c("GEODIST Sicily Palermo Catania"),
		c("GEODIST Sicily Palermo Catania km"), c("GEODIST Sicily Palermo Catania MI"), c("GEODIST Sicily Palermo Catania ft"),
		c("GEODIST Sicily Palermo Catania m"), c("GEODIST Sicily Palermo Palermo"), c("GEODIST Sicily Palermo nosuch"),
		c("GEODIST nokey a b"), c("GEODIST Sicily Palermo Catania yd"), c("GEODIST Sicily Palermo Catania km extra"),
		c("GEODIST nokey a b yd"), c("GEOHASH Sicily Palermo Catania nosuch"), c("GEOHASH nokey a b"), c("GEOHASH Sicily"),
		c("GEOPOS Sicily Palermo Catania nosuch"), c("GEOPOS nokey a"), c("GEOPOS Sicily"),
		c("GEOADD Sicily 13.583333 37.316667 Agrigento"), c("GEOADD Sicily CH 13.583333 37.316667 Agrigento 1 1 x"),
		c("GEOADD Sicily XX CH 13.5 37.3 Agrigento 2 2 y"), c("GEOADD Sicily NX CH 13.5 37.3 Agrigento 2 2 y"),
		c("GEOADD Sicily nx xx 1 1 z"), c("GEOADD Sicily ch nx"), c("GEOADD Sicily 1 1"), c("GEOADD Sicily 1 1 a 2"),
		c("GEOADD Sicily 181 1 a"), c("GEOADD Sicily 1 85.06 a"), c("GEOADD Sicily -180.0001 -85.05112879 a"),
		c("GEOADD Sicily inf 0 a"), c("GEOADD Sicily 0 -inf a"), c("GEOADD Sicily abc 1 a"), c("GEOADD Sicily 1 abc a"),
		c("GEOADD Sicily 1 1 a 500 1 b"), c("GEOADD Sicily 180 85.05112878 ne -180 -85.05112878 sw 0 0 zero"),
		c("GEOPOS Sicily ne sw zero y"), c("GEOHASH Sicily ne sw zero y"), c("GEODIST Sicily ne sw"), c("GEODIST Sicily zero y km"),
		c("GEOADD Sicily XX 1 1 newone"), c("ZCARD Sicily"), c("SET str v"), c("GEOADD str 1 1 a"), c("GEOADD str 1 100 a"),
		c("GEOPOS str a"), c("GEOHASH str a"), c("GEODIST str a b"), c("GEODIST str a b yd"), c("GEOSEARCH str FROMLONLAT 0 0 BYRADIUS 1 m"),
		c("GEORADIUS str 0 0 1 m"), c("GEORADIUSBYMEMBER str a 1 m"), c("GEOSEARCHSTORE d str FROMLONLAT 0 0 BYRADIUS 1 m"),
		c("GEORADIUS str 0 0 1 m STORE d"), c("GEORADIUS str 0 100 1 m"), c("GEOADD"), c("GEOADD k 1 1"),
		// Scores GEOADD never wrote decode anyway.
		c("ZADD weird -1 neg 1e300 huge inf pinf -inf ninf 4503599627370496 big 0 zero 4503599627370495 top"),
		c("GEOPOS weird neg huge pinf ninf big zero top"), c("GEOHASH weird neg huge pinf ninf big zero top"),
		c("GEODIST weird neg huge"), c("GEODIST weird big top"), c("GEORADIUS weird 0 0 100000 km WITHHASH WITHCOORD WITHDIST"),
	}
	diffCases["geo-search-options"] = []step{
		sicily, c("GEOADD Sicily 12.758489 38.788135 edge1 17.241510 38.788135 edge2 13.583333 37.316667 Agrigento"),
		c("GEORADIUS Sicily 15 37 200 km WITHDIST"), c("GEORADIUS Sicily 15 37 200 km WITHCOORD"),
		c("GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH"), c("GEORADIUS Sicily 15 37 200 km WITHHASH ASC"),
		c("GEORADIUS Sicily 15 37 200 km DESC"), c("GEORADIUS Sicily 15 37 200 km COUNT 1"), c("GEORADIUS Sicily 15 37 200 km COUNT 2 DESC"),
		c("GEORADIUS Sicily 15 37 200 km COUNT 1 ANY"), c("GEORADIUS Sicily 15 37 200 km COUNT 3 ANY DESC"),
		c("GEORADIUS Sicily 15 37 200 km ANY"), c("GEORADIUS Sicily 15 37 200 km COUNT 0"), c("GEORADIUS Sicily 15 37 200 km COUNT -1"),
		c("GEORADIUS Sicily 15 37 200 km COUNT abc"), c("GEORADIUS Sicily 15 37 200 km COUNT"), c("GEORADIUS Sicily 15 37 200 yd"),
		c("GEORADIUS Sicily 15 37 -1 km"), c("GEORADIUS Sicily 15 37 abc km"), c("GEORADIUS Sicily 15 100 1 km"), c("GEORADIUS Sicily 15 37 0 km"),
		c("GEORADIUS Sicily 15 37 200 km WITHDIST STORE d"), c("GEORADIUS Sicily 15 37 200 km STORE d"), c("ZRANGE d 0 -1 WITHSCORES"),
		c("GEORADIUS Sicily 15 37 200 km STOREDIST d"), c("ZRANGE d 0 -1 WITHSCORES"), c("GEORADIUS Sicily 15 37 200 mi STOREDIST d COUNT 2 DESC"),
		c("ZRANGE d 0 -1 WITHSCORES"), c("GEORADIUS Sicily 0 0 1 km STORE d"), c("EXISTS d"), c("GEORADIUS nokey 0 0 1 km STORE d"),
		c("GEORADIUS nokey 0 0 1 km"), c("GEORADIUS nokey 0 0 1 km BADOPT"), c("GEORADIUS nokey 0 100 1 km"),
		c("GEORADIUS_RO Sicily 15 37 200 km STORE d"), c("GEORADIUS_RO Sicily 15 37 200 km WITHDIST ASC"),
		c("GEORADIUSBYMEMBER Sicily Agrigento 100 km"), c("GEORADIUSBYMEMBER Sicily Agrigento 100 km WITHDIST WITHCOORD DESC"),
		c("GEORADIUSBYMEMBER Sicily nosuch 100 km"), c("GEORADIUSBYMEMBER nokey nosuch abc yd"), c("GEORADIUSBYMEMBER nokey x 1 km STORE d"),
		c("GEORADIUSBYMEMBER Sicily Palermo 300 km STORE d2 STOREDIST d3"), c("ZRANGE d3 0 -1 WITHSCORES"), c("EXISTS d2"),
		c("GEORADIUSBYMEMBER_RO Sicily Palermo 300 km ASC"), c("GEORADIUSBYMEMBER_RO Sicily Palermo 300 km STOREDIST d"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHCOORD WITHDIST"),
		c("GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 400 400 km DESC WITHHASH"), c("GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 100 km"),
		c("GEOSEARCH Sicily FROMMEMBER nosuch BYRADIUS 100 km"), c("GEOSEARCH nokey FROMMEMBER nosuch BYRADIUS 100 km"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 FROMMEMBER Palermo BYRADIUS 100 km"), c("GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 15 37 BYRADIUS 100 km"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 100 km BYBOX 1 1 km"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 km BYRADIUS 100 km"),
		c("GEOSEARCH Sicily BYRADIUS 100 km"), c("geosearch Sicily FROMLONLAT 15 37"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 100 km STORE d"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 100 km STOREDIST"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 1 km"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 abc km"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX abc 1 km"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 yd"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1"),
		c("GEOSEARCH Sicily FROMLONLAT 200 37 BYRADIUS 1 km"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 100 km ANY"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 100 km COUNT 1 ANY WITHDIST"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1000 KM COUNT 2"),
		c("GEOSEARCH Sicily FROMMEMBER nosuch BYRADIUS abc km"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 100 km WITHDIST COUNT 0"),
		c("GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 200 km"), c("ZRANGE d 0 -1 WITHSCORES"),
		c("GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYBOX 400 400 km STOREDIST COUNT 2"), c("ZRANGE d 0 -1 WITHSCORES"),
		c("GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 200 km WITHDIST"), c("GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 200 km STORE x"),
		c("GEOSEARCHSTORE d Sicily FROMLONLAT 0 0 BYRADIUS 1 km"), c("EXISTS d"), c("GEOSEARCHSTORE d nokey FROMLONLAT 0 0 BYRADIUS 1 km"),
		c("GEOSEARCHSTORE Sicily Sicily FROMMEMBER Palermo BYRADIUS 100 km STOREDIST"), c("ZRANGE Sicily 0 -1 WITHSCORES"),
		c("SET str v"), c("GEOSEARCHSTORE str nokey FROMLONLAT 0 0 BYRADIUS 1 km"), c("EXISTS str"),
		c("GEORADIUS"), c("GEOSEARCH k"), c("GEOSEARCHSTORE d k FROMLONLAT 0 0 BYRADIUS"),
		// Extreme sizes: every cell, or none but the centre's.
		c("GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 0 0 zero -179 -80 far"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS inf m ASC WITHDIST"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX inf inf km"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1e308 1e308 mi DESC"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1e-300 m"),
		c("GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 0 m WITHDIST"), c("GEOSEARCH Sicily FROMMEMBER far BYRADIUS 30000 km ASC"),
		c("GEOSEARCH Sicily FROMLONLAT 180 85.05112878 BYBOX 40000 40000 km ASC"), c("GEOSEARCH Sicily FROMLONLAT -180 -85.05112878 BYRADIUS 20000 km DESC WITHDIST"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 500 km COUNT 9223372036854775807"), c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 500 km COUNT 9223372036854775808"),
		c("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 500 km COUNT 9223372036854775807 ANY"), c("GEORADIUS Sicily 15 37 500 km COUNT 1 COUNT 2 ASC DESC ANY"),
		c("GEORADIUS Sicily 15 37 500 km store"), c("GEORADIUS Sicily 15 37 500 km WITHDIST STOREDIST"),
	}
	diffCases["geo-random"] = geoRandomSteps(rand.New(rand.NewSource(26)))
}

// geoRandomSteps adds points around a few centres (near the equator, the
// poles' Mercator limit and the antimeridian, so that cells wrap and
// shrink) to a large and a small set and searches them with radii and
// boxes from metres to thousands of kilometres, with every option.
func geoRandomSteps(rng *rand.Rand) []step {
	type centre struct{ lon, lat float64 }
	centres := []centre{{13.4, 38.1}, {-0.12, 51.5}, {179.9, -16.5}, {-73.9, 40.7}, {18.0, 78.2}, {0, 0}, {-179.99, 84.9}, {151.2, -33.9}}
	pick := func(c centre, spread float64) (float64, float64) {
		lon := c.lon + (rng.Float64()*2-1)*spread
		lat := c.lat + (rng.Float64()*2-1)*spread/2
		lon = max(min(lon, 180), -180)
		lat = max(min(lat, 85.05112878), -85.05112878)
		return lon, lat
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	var steps []step
	for _, key := range []string{"big", "small"} {
		n := 600
		if key == "small" {
			n = 60 // a listpack
		}
		for i := 0; i < n; i += 20 {
			args := []string{"GEOADD", key}
			for j := i; j < i+20; j++ {
				lon, lat := pick(centres[rng.Intn(len(centres))], []float64{0.01, 0.3, 3, 20}[rng.Intn(4)])
				args = append(args, f(lon), f(lat), fmt.Sprint("p", j))
			}
			steps = append(steps, s(exact, args...))
		}
		steps = append(steps, c("GEOADD "+key+" 13.4 38.1 twin1 13.4 38.1 twin2 13.4 38.1 twin0"))
	}
	units := []string{"m", "km", "mi", "ft"}
	perUnit := map[string]float64{"m": 1, "km": 1000, "mi": 1609.34, "ft": 0.3048}
	options := func() []string {
		var o []string
		for _, opt := range []string{"WITHDIST", "WITHCOORD", "WITHHASH"} {
			if rng.Intn(2) == 0 {
				o = append(o, opt)
			}
		}
		switch rng.Intn(3) {
		case 0:
			o = append(o, "ASC")
		case 1:
			o = append(o, "DESC")
		}
		if rng.Intn(3) == 0 {
			o = append(o, "COUNT", fmt.Sprint(1+rng.Intn(30)))
			if rng.Intn(3) == 0 {
				o = append(o, "ANY")
			}
		}
		return o
	}
	for i := 0; i < 300; i++ {
		key := []string{"big", "small"}[rng.Intn(2)]
		lon, lat := pick(centres[rng.Intn(len(centres))], []float64{0.01, 0.5, 5}[rng.Intn(3)])
		unit := units[rng.Intn(len(units))]
		meters := []float64{50, 2000, 30000, 300000, 3000000, 9000000}[rng.Intn(6)] * (0.5 + rng.Float64())
		r := f(float64(int64(meters/perUnit[unit]*1000)) / 1000)
		from := []string{"FROMLONLAT", f(lon), f(lat)}
		if rng.Intn(4) == 0 {
			from = []string{"FROMMEMBER", fmt.Sprint("p", rng.Intn(60))}
		}
		by := []string{"BYRADIUS", r, unit}
		if rng.Intn(2) == 0 {
			w := f(float64(int64(meters*(0.3+rng.Float64())/perUnit[unit]*1000)) / 1000)
			by = []string{"BYBOX", r, w, unit}
		}
		opts := options()
		args := append(append(append([]string{"GEOSEARCH", key}, from...), by...), opts...)
		steps = append(steps, s(exact, args...))
		switch rng.Intn(4) {
		case 0:
			g := append([]string{"GEORADIUS", key, f(lon), f(lat), r, unit}, opts...)
			steps = append(steps, s(exact, g...))
		case 1:
			g := append([]string{"GEORADIUSBYMEMBER_RO", key, fmt.Sprint("p", rng.Intn(60)), r, unit}, opts...)
			steps = append(steps, s(exact, g...))
		case 2:
			store := append(append(append([]string{"GEOSEARCHSTORE", "dst", key}, from...), by...), "STOREDIST")
			steps = append(steps, s(exact, store...), c("ZRANGE dst 0 -1")) // scores: see geo_libm.go
		}
	}
	for i := 0; i < 60; i++ {
		key := []string{"big", "small"}[rng.Intn(2)]
		a, b := fmt.Sprint("p", rng.Intn(60)), fmt.Sprint("p", rng.Intn(60))
		steps = append(steps, c("GEODIST "+key+" "+a+" "+b+" "+units[rng.Intn(4)]), c("GEOPOS "+key+" "+a+" "+b),
			c("GEOHASH "+key+" "+a+" "+b))
	}
	return steps
}

func init() {
	// GEOADD's events are ZADD's (Redis runs its ZADD); a search that
	// stores has its own, or a del when it stores nothing; GEOADD or a
	// search refused or reading does not notify.
	notifyCases["geo"] = []step{
		c("GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania"), c("GEOADD g 13.361389 38.115556 Palermo"),
		c("GEOADD g CH 13.5 38.1 Palermo"), c("GEOADD g XX 1 1 new"), c("GEOADD g 200 1 bad"), c("GEOADD new XX 1 1 a"),
		c("GEOSEARCH g FROMMEMBER Palermo BYRADIUS 300 km"), c("GEOSEARCHSTORE d g FROMMEMBER Palermo BYRADIUS 300 km"),
		c("GEOSEARCHSTORE d g FROMMEMBER Palermo BYRADIUS 300 km STOREDIST"), c("GEORADIUS g 15 37 200 km STORE d2"),
		c("GEORADIUSBYMEMBER g Palermo 1 m STOREDIST d3"), c("GEORADIUS g 0 0 1 m STORE d2"), c("GEORADIUS nokey 0 0 1 m STORE d"), c("GEORADIUS nokey 0 0 1 m"), c("GEORADIUSBYMEMBER nokey a 1 m STORE d"),
		c("GEOSEARCHSTORE d nokey FROMLONLAT 0 0 BYRADIUS 1 m"), c("GEODIST g Palermo Catania"), c("GEOPOS nokey a"),
	}
}
