package loadgen

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/redistest"

	"github.com/shoalkv/shoal/proto/resp"
)

// startRedis starts a private redis-server on a free loopback port and stops it by PID
// when the test ends.
func startRedis(t testing.TB) string {
	return redistest.StartServer(t, "--protected-mode", "no", "--enable-debug-command", "local")
}

// redisDo sends one command and returns the reply's text (bulk, status, error or integer).
func redisDo(t testing.TB, addr string, args ...string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(resp.AppendCommand(nil, args...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var buf []byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			t.Fatal(err)
		}
		buf = append(buf, b)
		if r, _, err := resp.ReadReply(buf); err == nil {
			if r.Kind == ':' {
				return strconv.FormatInt(r.Int, 10)
			}
			return string(r.Data)
		}
	}
}

// infoField reads one numeric field of INFO from the server.
func infoField(t testing.TB, addr, section, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(redisDo(t, addr, "INFO", section), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no field %s", section, field)
	return 0
}
