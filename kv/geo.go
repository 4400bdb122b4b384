package kv

import (
	"strconv"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/store"
)

// The geo commands of Redis 7.0, over sorted sets whose scores are the
// 52-bit geohashes of geohash.go. This file: the table, GEOADD, GEODIST,
// GEOHASH and GEOPOS; geo_search.go: GEOSEARCH, GEOSEARCHSTORE and the
// GEORADIUS family.
//
// GEOADD is ZADD with the positions turned into scores, and is logged as
// that ZADD, as Redis propagates it. A search that stores (GEOSEARCHSTORE,
// GEORADIUS ... STORE) is logged as is, after a DEL of its source when
// that was missing or expired; one that only reads is not logged.

const geoComplexitySearch = "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape"
const geoComplexityRadius = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index."

var _ = registerFamily(family{commands: []*command{
	{
		name: "geoadd", arity: -5, fn: cmdGeoAdd, log: logEffect,
		flags: "write denyoom", acl: "@write @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds members with their longitudes and latitudes to a sorted set used as a geospatial index.", "3.2.0", "geo", "O(log(N)) for each item added, where N is the number of elements in the sorted set."},
	},
	{
		name: "geodist", arity: -4, fn: cmdGeoDist,
		flags: "readonly", acl: "@read @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the distance between two members of a geospatial index.", "3.2.0", "geo", "O(log(N))"},
	},
	{
		name: "geohash", arity: -2, fn: cmdGeoHash,
		flags: "readonly", acl: "@read @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns members' positions as standard 11-character geohash strings.", "3.2.0", "geo", "O(log(N)) for each member requested, where N is the number of elements in the sorted set."},
	},
	{
		name: "geopos", arity: -2, fn: cmdGeoPos,
		flags: "readonly", acl: "@read @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns members' longitudes and latitudes.", "3.2.0", "geo", "O(N) where N is the number of members requested."},
	},
	{
		name: "georadius", arity: -6, fn: cmdGeoRadius, log: logEffect, keysOf: geoRadiusKeys, destFlags: "OW update",
		flags: "write denyoom movablekeys", acl: "@write @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: geoRadiusKeySpecs(6),
		doc: commandDoc{"Returns the members within a radius of a point, optionally storing them.", "3.2.0", "geo", geoComplexityRadius},
	},
	{
		name: "georadius_ro", arity: -6, fn: cmdGeoRadiusRO,
		flags: "readonly", acl: "@read @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a radius of a point.", "3.2.10", "geo", geoComplexityRadius},
	},
	{
		name: "georadiusbymember", arity: -5, fn: cmdGeoRadiusByMember, log: logEffect, keysOf: geoRadiusKeys, destFlags: "OW update",
		flags: "write denyoom movablekeys", acl: "@write @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: geoRadiusKeySpecs(5),
		doc: commandDoc{"Returns the members within a radius of a member, optionally storing them.", "3.2.0", "geo", geoComplexityRadius},
	},
	{
		name: "georadiusbymember_ro", arity: -5, fn: cmdGeoRadiusByMemberRO,
		flags: "readonly", acl: "@read @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a radius of a member.", "3.2.10", "geo", geoComplexityRadius},
	},
	{
		name: "geosearch", arity: -7, fn: cmdGeoSearch,
		flags: "readonly", acl: "@read @geo @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the members within a circle or a box around a member or a point.", "6.2.0", "geo", geoComplexitySearch},
	},
	{
		name: "geosearchstore", arity: -8, fn: cmdGeoSearchStore, log: logEffect,
		flags: "write denyoom", acl: "@write @geo @slow",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}, {flags: "RO access", index: 2, keyStep: 1}},
		doc: commandDoc{"Stores the members within a circle or a box around a member or a point.", "6.2.0", "geo", geoComplexitySearch},
	},
}})

// geoRadiusKeySpecs are GEORADIUS's key specs: the source, and the key
// after STORE or STOREDIST, searched for from the options (at from).
func geoRadiusKeySpecs(from int) []keySpec {
	return []keySpec{
		{flags: "RO access", index: 1, keyStep: 1},
		{flags: "OW update", keyword: "STORE", from: from, keyStep: 1},
		{flags: "OW update", keyword: "STOREDIST", from: from, keyStep: 1},
	}
}

// geoRadiusKeys finds GEORADIUS's keys as Redis's georadiusGetKeys: the
// source and the argument after the last STORE or STOREDIST from the
// fifth argument on.
func geoRadiusKeys(dst []int, args [][]byte) []int {
	dst = append(dst, 1)
	if at := geoStoreKeyAt(args); at > 0 {
		dst = append(dst, at)
	}
	return dst
}

// geoStoreKeyAt is the position of GEORADIUS's destination, or 0.
func geoStoreKeyAt(args [][]byte) int {
	at := 0
	for i := 5; i+1 < len(args); i++ {
		if ascii.EqualFold(args[i], "store") || ascii.EqualFold(args[i], "storedist") {
			at = i + 1
			i++
		}
	}
	return at
}

// Reply texts of the geo commands.
const (
	errGeoUnit        = "ERR unsupported unit provided. please use M, KM, FT, MI"
	errGeoMember      = "ERR could not decode requested zset member"
	errGeoRadius      = "ERR need numeric radius"
	errGeoNegRadius   = "ERR radius cannot be negative"
	errGeoWidth       = "ERR need numeric width"
	errGeoHeight      = "ERR need numeric height"
	errGeoNegBox      = "ERR height or width cannot be negative"
	errGeoCount       = "ERR COUNT must be > 0"
	errGeoAnyNoCount  = "ERR the ANY argument requires COUNT argument"
	errGeoStoreWithGS = "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
	errGeoStoreWithGR = "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
)

// geoUnit is the meters in one unit, or false for an unknown unit.
func geoUnit(b []byte) (float64, bool) {
	switch {
	case ascii.EqualFold(b, "m"):
		return 1, true
	case ascii.EqualFold(b, "km"):
		return 1000, true
	case ascii.EqualFold(b, "ft"):
		return 0.3048, true
	case ascii.EqualFold(b, "mi"):
		return 1609.34, true
	}
	return 0, false
}

// parseGeoPoint reads a longitude and a latitude as Redis's
// extractLongLatOrReply, returning its error text.
func parseGeoPoint(lonArg, latArg []byte) (lon, lat float64, errText string) {
	lon, ok1 := parseScore(lonArg)
	if !ok1 {
		return 0, 0, errNotFloat
	}
	lat, ok2 := parseScore(latArg)
	if !ok2 {
		return 0, 0, errNotFloat
	}
	if lon < geoLonMin || lon > geoLonMax || lat < geoLatMin || lat > geoLatMax {
		msg := appendPrintfF([]byte("ERR invalid longitude,latitude pair "), lon)
		msg = append(msg, ',')
		msg = appendPrintfF(msg, lat)
		return 0, 0, string(msg)
	}
	return lon, lat, ""
}

// cmdGeoAdd: GEOADD key [NX|XX] [CH] lon lat member ... runs as Redis's
// does: as ZADD key [flags] score member ..., after its own checks.
func cmdGeoAdd(h *Handler, cl *client, args [][]byte) {
	at := 2
	nx, xx := false, false
	for ; at < len(args); at++ {
		switch a := args[at]; {
		case ascii.EqualFold(a, "nx"):
			nx = true
		case ascii.EqualFold(a, "xx"):
			xx = true
		case ascii.EqualFold(a, "ch"):
		default:
			goto points
		}
	}
points:
	if (len(args)-at)%3 != 0 || nx && xx {
		cl.writeError(errSyntax)
		return
	}
	n := (len(args) - at) / 3
	zargs := make([][]byte, 0, at+2*n)
	zargs = append(zargs, []byte("zadd"))
	zargs = append(zargs, args[1:at]...)
	scores := make([]byte, 0, 16*n)
	for i := at; i < len(args); i += 3 {
		lon, lat, errText := parseGeoPoint(args[i], args[i+1])
		if errText != "" {
			cl.writeError(errText)
			return
		}
		start := len(scores)
		scores = strconv.AppendUint(scores, geoScore(lon, lat), 10)
		zargs = append(zargs, scores[start:len(scores):len(scores)], args[i+2])
	}
	absent := cl.logsEffects() && cl.db().PTTL(args[1]) == -2
	start := len(cl.out)
	h.zadd(cl, zargs, false)
	if !cl.logsEffects() || len(cl.out) > start && cl.out[start] == '-' {
		return
	}
	rec := cl.effectScratch()
	if absent {
		rec = aof.AppendCommand(rec, []byte("DEL"), args[1])
	}
	cl.setEffect(aof.AppendCommand(rec, zargs...))
}

// cmdGeoDist: GEODIST key member1 member2 [unit], a bulk string with 4
// decimals, or null when the key or a member is missing.
func cmdGeoDist(h *Handler, cl *client, args [][]byte) {
	toMeters := 1.0
	switch {
	case len(args) == 5:
		var ok bool
		if toMeters, ok = geoUnit(args[4]); !ok {
			cl.writeError(errGeoUnit)
			return
		}
	case len(args) > 5:
		cl.writeError(errSyntax)
		return
	}
	h.viewZSet(cl, args[1], func(z *store.ZSet) {
		if z == nil {
			cl.writeNull()
			return
		}
		s1, ok1 := z.Score(args[2])
		s2, ok2 := z.Score(args[3])
		if !ok1 || !ok2 {
			cl.writeNull()
			return
		}
		lon1, lat1 := geoPosition(s1)
		lon2, lat2 := geoPosition(s2)
		var num [32]byte
		cl.writeBulk(appendGeoDistance(num[:0], geoDistance(lon1, lat1, lon2, lat2)/toMeters))
	})
}

// cmdGeoHash: GEOHASH key member..., an 11-character geohash or a null
// for each.
func cmdGeoHash(h *Handler, cl *client, args [][]byte) {
	h.viewZSet(cl, args[1], func(z *store.ZSet) {
		cl.writeArray(len(args) - 2)
		var buf [11]byte
		for _, m := range args[2:] {
			s, ok := 0.0, false
			if z != nil {
				s, ok = z.Score(m)
			}
			if !ok {
				cl.writeNull()
				continue
			}
			cl.writeBulk(appendGeohash(buf[:0], s))
		}
	})
}

// cmdGeoPos: GEOPOS key member..., [longitude, latitude] or a null array
// for each.
func cmdGeoPos(h *Handler, cl *client, args [][]byte) {
	h.viewZSet(cl, args[1], func(z *store.ZSet) {
		cl.writeArray(len(args) - 2)
		for _, m := range args[2:] {
			s, ok := 0.0, false
			if z != nil {
				s, ok = z.Score(m)
			}
			if !ok {
				cl.writeNullArray()
				continue
			}
			lon, lat := geoPosition(s)
			cl.writeArray(2)
			cl.writeHumanDouble(lon)
			cl.writeHumanDouble(lat)
		}
	})
}

// writeHumanDouble is Redis's addReplyHumanLongDouble: "%.17Lf" trimmed,
// a bulk string in RESP2, a double in RESP3.
func (cl *client) writeHumanDouble(f float64) {
	var num [48]byte
	text := appendHumanDouble(num[:0], f)
	if cl.proto >= 3 {
		cl.out = append(cl.out, ',')
		cl.out = append(cl.out, text...)
		cl.out = append(cl.out, "\r\n"...)
		return
	}
	cl.out = resp.AppendBulk(cl.out, text)
}
