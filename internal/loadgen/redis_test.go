package loadgen

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/internal/tcptest"

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

// fakeServer listens on a loopback port until the test ends and hands every
// connection to serve, each in a goroutine of its own. It returns the address.
func fakeServer(t testing.TB, serve func(c net.Conn)) string {
	t.Helper()
	return tcptest.Serve(t, func(c net.Conn, _ int64) { serve(c) }).Addr()
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

// TestDataTypeCommands runs each data-type command of redis-benchmark's default suite
// against redis-server and checks what it did to the key it works on.
func TestDataTypeCommands(t *testing.T) {
	addr := startRedis(t)
	run := func(op string, n int64) {
		t.Helper()
		mix, err := ParseCommands(op)
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(addr)
		cfg.Mix, cfg.Requests, cfg.Keyspace = mix, n, 1e12
		if rep := mustRun(t, cfg); rep.Requests != n || rep.Errors != 0 {
			t.Fatalf("%s: requests %d errors %d %v", op, rep.Requests, rep.Errors, rep.ErrorsByKind)
		}
	}
	check := func(want string, cmd ...string) {
		t.Helper()
		if got := redisDo(t, addr, cmd...); got != want {
			t.Fatalf("%q = %s, want %s", cmd, got, want)
		}
	}
	run("lpush", 300)
	run("rpush", 200)
	check("500", "LLEN", "mylist")
	check(strings.Repeat("x", 16), "LINDEX", "mylist", "0")
	run("lpop", 100)
	run("rpop", 150)
	check("250", "LLEN", "mylist")
	// Members come from a keyspace of 10^12: 400 random ones are distinct but for a
	// vanishing chance.
	run("sadd", 400)
	check("400", "SCARD", "myset")
	run("spop", 100)
	check("300", "SCARD", "myset")
	run("hset", 400)
	check("400", "HLEN", "myhash")
	check("hash", "TYPE", "myhash")
	run("zadd", 400)
	check("400", "ZCARD", "myzset")
	run("zpopmin", 150)
	check("250", "ZCARD", "myzset")
	if _, err := ParseCommands("lpush,nosuch"); err == nil || !strings.Contains(err.Error(), "zpopmin") {
		t.Fatalf("unknown command error %v does not list the commands", err)
	}
}
