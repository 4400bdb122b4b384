package cluster

import (
	"net"
	"strconv"
	"testing"

	"github.com/shoalkv/shoal/internal/redistest"
)

// startRedisCluster runs a cluster-enabled redis-server and returns its
// port as redis-cli's -p takes it.
func startRedisCluster(t *testing.T) string {
	t.Helper()
	bus := redistest.FreePort(t)
	addr := redistest.StartServer(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus))
	_, port, _ := net.SplitHostPort(addr)
	return port
}
