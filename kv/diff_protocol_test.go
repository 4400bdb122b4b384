package kv_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestProtocolErrorsMatchRedis sends malformed and inline input to both
// servers and compares everything each sends back before closing.
func TestProtocolErrorsMatchRedis(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	cases := map[string]string{
		"bad bulk length":       "*1\r\n$abc\r\n",
		"bad multibulk length":  "*abc\r\n",
		"expected dollar":       "*1\r\nx\r\n",
		"negative bulk":         "*1\r\n$-5\r\n",
		"huge multibulk":        "*3000000000\r\n",
		"huge bulk":             "*1\r\n$600000000\r\n",
		"bulk max int64":        "*1\r\n$9223372036854775807\r\n",
		"bulk past int64":       "*1\r\n$9223372036854775808\r\n",
		"bulk min int64":        "*1\r\n$-9223372036854775808\r\n",
		"multibulk max int64":   "*9223372036854775807\r\n",
		"multibulk past int64":  "*9223372036854775808\r\n",
		"bulk proto max plus 1": "*1\r\n$536870913\r\n",
		"unbalanced quotes":     "SET \"a b\r\n",
		"commands before error": "PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n",
		"quit discards rest":    "*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n",
		"quit inline":           "PING\r\nQUIT\r\nPING\r\n",
		"closing quote":         "ECHO \"a\"b\r\n",
		"http post":             "POST / HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"http host header":      "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			want := sendAndDrain(t, redisAddr, input)
			have := sendAndDrain(t, shoal.addr, input)
			if want != have {
				t.Errorf("input %q\nredis: %q\nshoal: %q", input, want, have)
			}
		})
	}
}

func sendAndDrain(t *testing.T, addr, input string) string {
	t.Helper()
	conn := dialRaw(t, addr)
	conn.Send([]byte(input))
	out, err := conn.ReadUntilClose()
	if errors.Is(err, syscall.ECONNRESET) {
		// The server closed with our unread input still queued: the
		// kernel resets, possibly after delivering the reply.
		err = nil
	}
	if err != nil {
		t.Fatalf("%s: reading until close: %v (got %q)", addr, err, out)
	}
	return out
}

// TestInlineCommandsMatchRedis compares inline (telnet-style) commands that
// do not close the connection.
func TestInlineCommandsMatchRedis(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	inputs := []string{
		"PING\r\n", "PING\n", "\r\n\r\nPING\r\n", "SET a b\r\n", "GET a\r\n", "ECHO \"a\\x41b\\n\"\r\n",
		"ECHO 'single quoted'\r\n", "  ECHO   spaced   \r\n", "FOO bar\r\n", "GET\r\n", "ECHO \"\"\r\n",
	}
	ref, got := dialRaw(t, redisAddr), dialRaw(t, shoal.addr)
	for _, in := range inputs {
		ref.Send([]byte(in))
		got.Send([]byte(in))
		want, err := ref.Read()
		if err != nil {
			t.Fatalf("redis %q: %v", in, err)
		}
		have, err := got.Read()
		if err != nil {
			t.Fatalf("shoal %q: %v", in, err)
		}
		if want != have {
			t.Errorf("inline %q\nredis: %q\nshoal: %q", in, want, have)
		}
	}
}

// TestRequirePassMatchesRedis compares the authentication flow with a
// password set on both servers.
func TestRequirePassMatchesRedis(t *testing.T) {
	redisAddr := startRedis(t, "--requirepass", "secret")
	shoal := startShoal(t, kv.Options{RequirePass: "secret"}, eventloop.Options{})
	steps := []step{
		c("GET a"), c("FOO"), c("GET"), c("PING"), c("CLIENT ID"), c("CLIENT FOO"), c("HELLO 3"), c("HELLO"),
		c("HELLO 3 AUTH default wrong"), c("AUTH wrong"), c("AUTH bob secret"), c("AUTH default wrong"),
		c("SELECT 0"), c("ECHO x"), c("CONFIG GET maxmemory"), c("COMMAND COUNT"), c("RESET"), c("GET a"),
		c("AUTH secret"), c("GET a"), c("RESET"), c("GET a"), c("HELLO 3 AUTH default secret", maskInts),
		c("GET a"), c("RESET"), c("HELLO 2 AUTH default secret SETNAME x", maskInts), c("CLIENT GETNAME"),
		c("AUTH default secret"), c("AUTH wrong"), c("GET a"), c("CONFIG GET requirepass"),
	}
	runDiffSteps(t, redisAddr, shoal.addr, steps)
	// QUIT works before authenticating.
	for _, addr := range []string{redisAddr, shoal.addr} {
		if out := sendAndDrain(t, addr, "*1\r\n$4\r\nQUIT\r\n"); out != "+OK\r\n" {
			t.Errorf("%s: QUIT unauthenticated: %q", addr, out)
		}
	}
}

func runDiffSteps(t *testing.T, redisAddr, shoalAddr string, steps []step) {
	t.Helper()
	ref, got := dialRaw(t, redisAddr), dialRaw(t, shoalAddr)
	for i, st := range steps {
		want, have := ref.Do(st.args...), got.Do(st.args...)
		if !equalReplies(st.mode, want, have) {
			t.Errorf("step %d %q:\nredis: %q\nshoal: %q", i, strings.Join(st.args, " "), want, have)
		}
	}
}

// TestInfoSectionsMatchRedis compares INFO's section headers, in order,
// and that every field name Shoal reports is one Redis reports too.
func TestInfoSectionsMatchRedis(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	headers := func(info string) (hs []string, fields map[string]bool) {
		fields = map[string]bool{}
		for _, line := range strings.Split(info, "\r\n") {
			if strings.HasPrefix(line, "# ") {
				hs = append(hs, line)
			} else if k, _, ok := strings.Cut(line, ":"); ok {
				fields[k] = true
			}
		}
		return hs, fields
	}
	wantHeaders, redisFields := headers(dialRaw(t, redisAddr).Do("INFO", "everything"))
	gotHeaders, shoalFields := headers(dialRaw(t, shoal.addr).Do("INFO", "everything"))
	if strings.Join(wantHeaders, ",") != strings.Join(gotHeaders, ",") {
		t.Errorf("sections:\nredis: %v\nshoal: %v", wantHeaders, gotHeaders)
	}
	for f := range shoalFields {
		if !redisFields[f] && f != "go_version" && f != "maxmemory_human" {
			t.Errorf("INFO field %q is not one redis-server reports", f)
		}
	}
}

// TestUnauthenticatedLimitsMatchRedis checks Redis's tighter request limits
// before AUTH (at most 10 arguments, 16 KiB bulks) and that they lift after.
func TestUnauthenticatedLimitsMatchRedis(t *testing.T) {
	redisAddr := startRedis(t, "--requirepass", "secret")
	shoal := startShoal(t, kv.Options{RequirePass: "secret"}, eventloop.Options{})
	many := make([]string, 12)
	for i := range many {
		many[i] = "k"
	}
	many[0] = "EXISTS"
	for name, input := range map[string]string{
		"eleven args": string(encodeCommand(many)),
		"big bulk":    string(encodeCommand([]string{"ECHO", strings.Repeat("x", 20000)})),
	} {
		t.Run(name, func(t *testing.T) {
			if want, have := sendAndDrain(t, redisAddr, input), sendAndDrain(t, shoal.addr, input); want != have {
				t.Errorf("redis: %q\nshoal: %q", want, have)
			}
		})
	}
	for _, addr := range []string{redisAddr, shoal.addr} {
		conn := dialRaw(t, addr)
		conn.Do("AUTH", "secret")
		conn.Do("SET", "k", "v")
		if r := conn.Do(many...); r != ":11\r\n" {
			t.Errorf("%s: after AUTH, EXISTS with 11 keys = %q", addr, r)
		}
	}
}
