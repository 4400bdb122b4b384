package kv_test

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestGoRedisGeo drives the geo commands through go-redis's typed API on
// redis-server and on Shoal, RESP3 and RESP2, and requires the same
// results from both, and Redis's documented values.
func TestGoRedisGeo(t *testing.T) {
	refAddr := startRedis(t)
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	for _, proto := range []int{3, 2} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			ref := redis.NewClient(&redis.Options{Addr: refAddr, Protocol: proto})
			defer ref.Close()
			ours := redis.NewClient(&redis.Options{Addr: srv.addr, Protocol: proto})
			defer ours.Close()
			want, got := goRedisGeoCalls(t, ref), goRedisGeoCalls(t, ours)
			for i := range want {
				if i >= len(got) || got[i] != want[i] {
					t.Errorf("call %d:\nredis: %s\nshoal: %s", i, want[i], got[min(i, len(got)-1)])
				}
			}
			for _, doc := range []string{
				"GeoDist: 166274.1516 <nil>",
				"GeoHash: [sqc8b49rny0 sqdtr74hyu0] <nil>",
				"GeoPos value: 13.361389338970184 38.1155563954963",
				"GeoRadius: [{Palermo 13.361389338970184 38.1155563954963 190.4424 0} {Catania 15.087267458438873 37.50266842333162 56.4413 0}] <nil>",
			} {
				found := false
				for _, g := range got {
					found = found || strings.HasPrefix(g, doc)
				}
				if !found {
					t.Errorf("no result %q in %q", doc, got)
				}
			}
		})
	}
}

// goRedisGeoCalls runs the geo calls on rdb and returns each result as
// text.
func goRedisGeoCalls(t *testing.T, rdb *redis.Client) []string {
	ctx := context.Background()
	check, _ := goredisHelpers(t)
	check("FLUSHALL", rdb.FlushAll(ctx).Err())
	var out []string
	add := func(name string, v any, err error) { out = append(out, fmt.Sprintf("%s: %v %v", name, v, err)) }
	n, err := rdb.GeoAdd(ctx, "Sicily",
		&redis.GeoLocation{Name: "Palermo", Longitude: 13.361389, Latitude: 38.115556},
		&redis.GeoLocation{Name: "Catania", Longitude: 15.087269, Latitude: 37.502669}).Result()
	add("GeoAdd", n, err)
	n, err = rdb.GeoAdd(ctx, "Sicily", &redis.GeoLocation{Name: "bad", Longitude: 200, Latitude: 0}).Result()
	add("GeoAdd out of range", n, err)
	f, err := rdb.GeoDist(ctx, "Sicily", "Palermo", "Catania", "m").Result()
	add("GeoDist", f, err)
	f, err = rdb.GeoDist(ctx, "Sicily", "Palermo", "Catania", "mi").Result()
	add("GeoDist mi", f, err)
	hashes, err := rdb.GeoHash(ctx, "Sicily", "Palermo", "Catania").Result()
	add("GeoHash", hashes, err)
	pos, err := rdb.GeoPos(ctx, "Sicily", "Palermo", "nosuch", "Catania").Result()
	add("GeoPos", len(pos), err)
	for _, p := range pos {
		if p != nil {
			out = append(out, fmt.Sprintf("GeoPos value: %v %v", p.Longitude, p.Latitude))
		} else {
			out = append(out, "GeoPos value: nil")
		}
	}
	//lint:ignore SA1019 the deprecated form is still a Redis 7.0 command under test
	locs, err := rdb.GeoRadius(ctx, "Sicily", 15, 37, &redis.GeoRadiusQuery{Radius: 200, Unit: "km", WithDist: true, WithCoord: true}).Result()
	add("GeoRadius", locs, err)
	//lint:ignore SA1019 the deprecated form is still a Redis 7.0 command under test
	locs, err = rdb.GeoRadiusByMember(ctx, "Sicily", "Palermo", &redis.GeoRadiusQuery{Radius: 300, Unit: "km", WithGeoHash: true, Sort: "DESC", Count: 1}).Result()
	add("GeoRadiusByMember", locs, err)
	n, err = rdb.GeoRadiusStore(ctx, "Sicily", 15, 37, &redis.GeoRadiusQuery{Radius: 200, Unit: "km", Store: "near"}).Result()
	add("GeoRadiusStore", n, err)
	zs, err := rdb.ZRangeWithScores(ctx, "near", 0, -1).Result()
	add("stored", zs, err)
	names, err := rdb.GeoSearch(ctx, "Sicily", &redis.GeoSearchQuery{Longitude: 15, Latitude: 37, BoxWidth: 400, BoxHeight: 400, BoxUnit: "km", Sort: "ASC"}).Result()
	add("GeoSearch", names, err)
	locs, err = rdb.GeoSearchLocation(ctx, "Sicily", &redis.GeoSearchLocationQuery{
		GeoSearchQuery: redis.GeoSearchQuery{Member: "Palermo", Radius: 200, RadiusUnit: "km", Count: 2, CountAny: true},
		WithCoord:      true, WithDist: true, WithHash: true,
	}).Result()
	add("GeoSearchLocation", locs, err)
	n, err = rdb.GeoSearchStore(ctx, "Sicily", "dst", &redis.GeoSearchStoreQuery{
		GeoSearchQuery: redis.GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 200, RadiusUnit: "km"},
	}).Result()
	add("GeoSearchStore", n, err)
	zs, err = rdb.ZRangeWithScores(ctx, "dst", 0, -1).Result()
	add("stored", zs, err)
	names, err = rdb.GeoSearch(ctx, "Sicily", &redis.GeoSearchQuery{Member: "nosuch", Radius: 1, RadiusUnit: "km"}).Result()
	add("GeoSearch missing member", names, err)
	names, err = rdb.GeoSearch(ctx, "nokey", &redis.GeoSearchQuery{Longitude: 1, Latitude: 1, Radius: 1, RadiusUnit: "km"}).Result()
	add("GeoSearch missing key", names, err)
	return out
}

// TestAOFGeo: GEOADD is logged as the ZADD it runs, with the score it
// computed, and searches that store are logged as sent while those that
// only read are not; a server that loads the file has the same sets.
func TestAOFGeo(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	c := dialRaw(t, s.addr)
	doAll(t, c, [][]string{
		{"GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
		{"GEOADD", "g", "CH", "XX", "13.583333", "37.316667", "Palermo", "1", "1", "skipped"},
		{"GEORADIUS", "g", "15", "37", "200", "km", "WITHDIST"},
		{"GEORADIUS", "g", "15", "37", "200", "km", "STORE", "near"},
		{"GEOSEARCHSTORE", "far", "g", "FROMMEMBER", "Catania", "BYRADIUS", "500", "km", "STOREDIST"},
		{"GEOSEARCH", "g", "FROMMEMBER", "Catania", "BYRADIUS", "500", "km"},
	})
	c.Do("GEOADD", "g", "200", "0", "bad")
	keys := []string{"g", "near", "far"}
	before := checkReplay(t, s, keys, zsetKeyspace)
	if !strings.Contains(before["far"], "Palermo") {
		t.Errorf("far: %q", before["far"])
	}
	var cmds []string
	rd := bufio.NewReader(strings.NewReader(s.stopAndReadLog(t)))
	for {
		v, err := parseRESP(rd)
		if err != nil {
			break
		}
		var words []string
		for _, e := range v.elems {
			words = append(words, e.line[strings.IndexByte(e.line, '|')+1:])
		}
		cmds = append(cmds, strings.Join(words, " "))
	}
	for _, want := range []string{
		"zadd g 3479099956230698 Palermo 3479447370796909 Catania",
		"zadd g CH XX 3479030013248308 Palermo 3377822707026402 skipped",
		"GEORADIUS g 15 37 200 km STORE near",
		"GEOSEARCHSTORE far g FROMMEMBER Catania BYRADIUS 500 km STOREDIST",
	} {
		if !containsString(cmds, want) {
			t.Errorf("log lacks %q: %q", want, cmds)
		}
	}
	for _, cmd := range cmds {
		if strings.HasPrefix(cmd, "GEOADD") || strings.HasPrefix(cmd, "GEOSEARCH ") || strings.Contains(cmd, "WITHDIST") || strings.Contains(cmd, "bad") {
			t.Errorf("logged: %q", cmd)
		}
	}
}
