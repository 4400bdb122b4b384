package kv_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
)

// FuzzServer sends arbitrary bytes to a live server. Whatever arrives, the
// server must answer with well-formed RESP, close the connection when the
// client half-closes, and keep serving other clients.
func FuzzServer(f *testing.F) {
	for _, steps := range diffCases {
		var seed []byte
		for _, st := range steps {
			seed = append(seed, encodeCommand(st.args)...)
		}
		f.Add(seed)
	}
	for _, s := range []string{"PING\r\n", "*1\r\n$abc\r\n", "SET \"a b\r\n", "*2\r\n$3\r\nGET\r\n$100\r\nab",
		"HELLO 3\r\nGET x\r\nCLIENT LIST\r\n", "*0\r\n*-1\r\n", "\r\n\r\n", "ECHO \"\\x41\\n\"\r\n"} {
		f.Add([]byte(s))
	}
	srv := startShoal(f, kv.Options{}, eventloop.Options{Loops: 2})
	f.Fuzz(func(t *testing.T, input []byte) {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// As long as a raw read waits: a seed (hostile-integers) builds a
		// 512 MiB string, which under -race on a loaded machine takes
		// longer than 5 s.
		_ = c.SetDeadline(time.Now().Add(shoaltest.ReadTimeout))
		go func() {
			_, _ = c.Write(input)
			_ = c.(*net.TCPConn).CloseWrite()
		}()
		rd := bufio.NewReader(c)
		for {
			var sb strings.Builder
			err := readReply(rd, &sb)
			if errors.Is(err, io.EOF) && sb.Len() == 0 {
				break
			}
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("server neither answered nor closed: %v; input began %q", err, input[:min(len(input), 300)])
				}
				t.Fatalf("malformed reply stream after %q: %v", sb.String(), err)
			}
		}
		probe := dialRaw(t, srv.addr)
		if r := probe.Do("PING"); r == "" || (r[0] != '+' && r[0] != '-') {
			t.Fatalf("server unhealthy after input: PING = %q", r)
		}
	})
}

// hostileTemplates are commands taking an offset, count, length or TTL; "A"
// and "B" are replaced by the fuzzed integers. Key s holds "hello", n holds
// 42, m is missing.
var hostileTemplates = [][]string{
	{"SETRANGE", "s", "A", "x"}, {"SETRANGE", "m", "A", "xy"}, {"SETRANGE", "s", "A", ""}, {"SETRANGE", "n", "A", "B"},
	{"GETRANGE", "s", "A", "B"}, {"GETRANGE", "m", "A", "B"}, {"SUBSTR", "s", "A", "B"},
	{"EXPIRE", "s", "A"}, {"PEXPIRE", "s", "A"}, {"EXPIREAT", "s", "A"}, {"PEXPIREAT", "s", "A"},
	{"EXPIRE", "s", "A", "GT"}, {"PEXPIRE", "s", "A", "LT"}, {"EXPIREAT", "m", "A", "NX"}, {"PEXPIREAT", "s", "A", "XX"},
	{"SET", "s", "v", "EX", "A"}, {"SET", "s", "v", "PX", "A"}, {"SET", "s", "v", "EXAT", "A"}, {"SET", "s", "v", "PXAT", "A"},
	{"SET", "m", "v", "NX", "GET", "PX", "A"}, {"SETEX", "s", "A", "v"}, {"PSETEX", "m", "A", "v"},
	{"GETEX", "s", "EX", "A"}, {"GETEX", "s", "PX", "A"}, {"GETEX", "s", "EXAT", "A"}, {"GETEX", "m", "PXAT", "A"},
	{"INCRBY", "n", "A"}, {"DECRBY", "n", "A"}, {"INCRBY", "m", "A"}, {"DECRBY", "m", "A"}, {"INCRBYFLOAT", "n", "A"},
	{"SET", "n", "A"}, {"SCAN", "A", "COUNT", "B"}, {"SCAN", "0", "COUNT", "A", "MATCH", "*"},
	{"SELECT", "A"}, {"HELLO", "A"}, {"CLIENT", "KILL", "ID", "A"}, {"CLIENT", "LIST", "ID", "A", "B"},
	{"CONFIG", "SET", "maxmemory", "A"},
}

// hostileSeeds are the integers (and near-integers) that break naive
// arithmetic. MaxStringLen-1 is left out: it builds a 512 MiB string, and
// the differential test covers it.
var hostileSeeds = []string{"-9223372036854775808", "-9223372036854775807", "-536870913", "-1", "0", "1",
	"536870912", "536870913", "9223372036854775806", "9223372036854775807", "9223372036854775808",
	"-9223372036854775809", "18446744073709551615", "4102444800000", "1e3", ""}

// FuzzHostileIntegers sends each command that takes an offset, count,
// length or TTL with fuzzed integers, twice (so INCRBY can overflow the
// first result), between setup and follow-up reads. The server must answer
// every command with well-formed RESP and keep serving.
func FuzzHostileIntegers(f *testing.F) {
	for ti := range hostileTemplates {
		for i, a := range hostileSeeds {
			f.Add(uint8(ti), a, a)
			f.Add(uint8(ti), a, hostileSeeds[(i+len(hostileSeeds)/2)%len(hostileSeeds)])
		}
	}
	srv := startShoal(f, kv.Options{}, eventloop.Options{Loops: 2})
	f.Fuzz(func(t *testing.T, ti uint8, a, b string) {
		tmpl := hostileTemplates[int(ti)%len(hostileTemplates)]
		cmd := make([]string, len(tmpl))
		for i, arg := range tmpl {
			switch arg {
			case "A":
				cmd[i] = a
			case "B":
				cmd[i] = b
			default:
				cmd[i] = arg
			}
		}
		script := [][]string{{"MSET", "s", "hello", "n", "42"}, {"DEL", "m"}, cmd, cmd,
			{"GET", "s"}, {"STRLEN", "s"}, {"GET", "n"}, {"PTTL", "s"}, {"TTL", "s"}, {"EXPIRETIME", "s"},
			{"GETRANGE", "s", "0", "-1"}, {"CONFIG", "SET", "maxmemory", "0"}}
		var all []byte
		for _, c := range script {
			all = append(all, encodeCommand(c)...)
		}
		r := dialRaw(t, srv.addr)
		r.Send(all)
		for _, c := range script {
			reply, err := r.Read()
			if err != nil {
				t.Fatalf("%q after %q: %v (partial %q)", c, cmd, err, reply)
			}
		}
		if got := dialRaw(t, srv.addr).Do("PING"); got != "+PONG\r\n" {
			t.Fatalf("server unhealthy after %q: PING = %q", cmd, got)
		}
	})
}
