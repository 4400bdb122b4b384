package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

// startRedis runs a throwaway redis-server on a free loopback port and stops
// it by PID when the test ends.
func startRedis(t *testing.T) string { return redistest.StartServer(t) }

// exchange sends in on a fresh connection and returns everything the server
// writes until it closes the connection.
func exchange(t *testing.T, addr string, in []byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(in); err != nil {
		t.Fatalf("write: %v", err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read after %q: %v", out, err)
	}
	return out
}

// simulate answers in the way redis-server would if its protocol layer were
// this package: PING, ECHO and QUIT are answered, a protocol error is sent
// and ends the stream.
func simulate(in []byte, p *Parser) []byte {
	var out []byte
	for {
		args, n, err := p.Parse(in)
		if errors.Is(err, ErrIncomplete) {
			return out
		}
		var pe *ProtocolError
		if errors.As(err, &pe) {
			return AppendError(out, pe.Error())
		}
		in = in[n:]
		if len(args) == 0 {
			continue
		}
		switch name := strings.ToUpper(string(args[0])); {
		case name == "PING" && len(args) == 1:
			out = AppendSimpleString(out, "PONG")
		case (name == "PING" || name == "ECHO") && len(args) == 2:
			out = AppendBulk(out, args[1])
		case name == "PING" || name == "ECHO":
			out = AppendError(out, "ERR wrong number of arguments for '"+strings.ToLower(name)+"' command")
		case name == "QUIT":
			return AppendSimpleString(out, "OK")
		default: // Redis's text, for short arguments
			msg := "ERR unknown command '" + string(args[0]) + "', with args beginning with: "
			for _, a := range args[1:] {
				msg += "'" + string(a) + "' "
			}
			out = AppendError(out, msg)
		}
	}
}

// TestProtocolMatchesRedisServer sends the same bytes to a real redis-server 7
// and to Parser, and compares the replies byte for byte: protocol error texts
// and the arguments of quirky but valid streams. Streams that Redis accepts
// end in QUIT, so every exchange ends with the server closing.
func TestProtocolMatchesRedisServer(t *testing.T) {
	addr := startRedis(t)
	huge := strings.Repeat("1", 70000)
	inputs := []string{
		// Multibulk count.
		"*x\r\n", "*\r\n", "*+1\r\n", "*01\r\n", "*-0\r\n", "*1 \r\n", "*3000000000\r\n",
		"*99999999999999999999\r\n", "*" + huge,
		// Bulk length.
		"*1\r\n$x\r\n", "*1\r\n$-1\r\n", "*1\r\n$\r\n", "*1\r\n$536870913\r\n", "*1\r\n$01\r\n",
		"*1\r\n$" + huge,
		// Wrong type byte, including CR which Redis prints as a space.
		"*1\r\n:1\r\n", "*1\r\n\r\n", "*2\r\n$4\r\nECHO\r\n+a\r\n",
		"*2\r\n$4\r\nECHO\r\n$1\r\na\r\n*1\r\nfoo\r\n",
		// Inline.
		`ECHO "abc` + "\r\n", `ECHO 'abc` + "\r\n", `ECHO "a"b` + "\r\n", `ECHO 'a'b` + "\r\n",
		`ECHO "abc\` + "\r\n", `ECHO 'abc\'` + "\r\n", strings.Repeat("a", 70000),
		// Valid commands, then an error.
		"PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n",
		// Valid, quirky streams.
		"*1\rX$4\rYPING\r\nQUIT\r\n",
		"*1\r\n$4\r\nPINGxyQUIT\r\n",
		"\r\n\n   \r\n*0\r\n*-1\r\n*-7\r\nPING\r\nQUIT\r\n",
		`ECHO "a\x41\xzz\n\r\t\b\a\\\"\q"` + "\r\nQUIT\r\n",
		`ECHO 'it\'s "x" \n'` + "\r\nQUIT\r\n",
		`ECHO ab"c d"` + "\r\nQUIT\r\n",
		`ECHO ""` + "\r\nQUIT\r\n",
		"ECHO a\vb\r\n\vECHO\fx\r\nECHO \"q\"\vx\r\n\f\vECHO\ty\r\nQUIT\r\n",
		"PING a\rb\r\nQUIT\n",
	}
	for _, in := range inputs {
		p := Parser{Limits: &Limits{MaxMultibulkLen: math.MaxInt32}} // Redis 7 for authenticated clients
		want := simulate([]byte(in), &p)
		got := exchange(t, addr, []byte(in))
		if !bytes.Equal(got, want) {
			t.Errorf("input %.60q:\n redis-server: %q\n resp:         %q", in, got, want)
		}
	}

	// Before AUTH Redis has tighter limits.
	if got := exchange(t, addr, []byte("CONFIG SET requirepass pw\r\nQUIT\r\n")); string(got) != "+OK\r\n+OK\r\n" {
		t.Fatalf("CONFIG SET requirepass: %q", got)
	}
	for _, in := range []string{"*11\r\n", "*1\r\n$16385\r\n", "*1\r\n$x\r\n"} {
		p := Parser{Limits: &Limits{MaxMultibulkLen: math.MaxInt32}, Unauthenticated: true}
		want := simulate([]byte(in), &p)
		got := exchange(t, addr, []byte(in))
		if !bytes.Equal(got, want) {
			t.Errorf("unauthenticated input %.60q:\n redis-server: %q\n resp:         %q", in, got, want)
		}
	}
}
