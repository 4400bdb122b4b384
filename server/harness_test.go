package server_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/internal/shoaltest"
)

// rawConn is internal/shoaltest's raw RESP client: replies byte for byte.
type rawConn = shoaltest.RawConn

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	return shoaltest.Dial(t, addr)
}

// startRedis starts a real redis-server 7 without persistence, with its
// default 16 databases as Shoal's, and stops it by PID when the test ends.
func startRedis(t testing.TB, extra ...string) string {
	t.Helper()
	return redistest.StartServer(t, extra...)
}

// cmdstat parses one cmdstat_<name> line of INFO commandstats.
func cmdstat(t *testing.T, info, name string) map[string]float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^cmdstat_` + regexp.QuoteMeta(name) + `:(.*)\r$`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no cmdstat_%s in %q", name, info)
	}
	out := map[string]float64{}
	for _, kv := range strings.Split(m[1], ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[k], _ = strconv.ParseFloat(v, 64)
	}
	return out
}
