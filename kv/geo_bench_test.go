package kv

import (
	"fmt"
	"testing"

	"github.com/shoalkv/shoal/proto/resp"
)

// geoBenchPoints is a GEOADD of 500 points within about 50 km of Palermo.
func geoBenchPoints() string {
	args := []string{"GEOADD", "pts"}
	for i := 0; i < 500; i++ {
		args = append(args, fmt.Sprint(13.0+float64(i%25)*0.03), fmt.Sprint(37.9+float64(i/25)*0.02), fmt.Sprint("p", i))
	}
	return string(resp.AppendCommand(nil, args...))
}

// geoBenchReply is what req answers after setup.
func geoBenchReply(b *testing.B, setup, req string) string {
	h := benchHandler(b)
	cl := benchClient(h)
	h.execute(cl, []byte(setup))
	cl.out = cl.out[:0]
	h.execute(cl, []byte(req))
	return string(cl.out)
}

// BenchmarkGeoAdd: GEOADD of one existing point (a ZADD that changes
// nothing), 16 a batch.
func BenchmarkGeoAdd(b *testing.B) {
	req := string(resp.AppendCommand(nil, "GEOADD", "pts", "13.361389", "38.115556", "p1"))
	benchExecute(b, geoBenchPoints(), req, ":0\r\n", 16)
}

// BenchmarkGeoSearch: the 10 nearest of 500 points within 20 km, with
// their distances, 16 a batch.
func BenchmarkGeoSearch(b *testing.B) {
	setup := geoBenchPoints()
	req := string(resp.AppendCommand(nil, "GEOSEARCH", "pts", "FROMLONLAT", "13.3", "38.1", "BYRADIUS", "20", "km", "ASC", "COUNT", "10", "WITHDIST"))
	benchExecute(b, setup, req, geoBenchReply(b, setup, req), 16)
}
