package server_test

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
)

// remoteAddress gives the loopback interface an extra, non-loopback
// address (10.123.77.1) for the test's duration, so a connection from it
// looks, by its address, like one from another host: Redis and Shoal both
// judge the peer's IP, not the interface. It needs root.
func remoteAddress(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to add an address to lo")
	}
	const ip = "10.123.77.1"
	_ = exec.Command("ip", "addr", "del", ip+"/32", "dev", "lo").Run() // left over by a killed run
	if out, err := exec.Command("ip", "addr", "add", ip+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Skipf("ip addr add: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", ip+"/32", "dev", "lo").Run() })
	return ip
}

// exchangeFrom connects from src to addr, sends PING and returns the
// first reply line, and for a refusal everything up to the close.
func exchangeFrom(t *testing.T, src, addr string) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("PING\r\n"))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(c)
	line, _ := rd.ReadString('\n')
	if strings.HasPrefix(line, "-DENIED") {
		rest, _ := io.ReadAll(rd) // a refusal closes: expect nothing more, then EOF
		line += string(rest)
	}
	return line
}

// TestProtectedModeRefusesOtherHosts: with protected mode on (the default)
// and no password, a client from a non-loopback address gets redis-server
// 7.0's DENIED text and a close, even with the server bound to every
// address; loopback clients, a password, or protected-mode no let it in.
// Each case is run against redis-server too and must read the same.
func TestProtectedModeRefusesOtherHosts(t *testing.T) {
	remote := remoteAddress(t)
	for _, tc := range []struct {
		name       string
		redisArgs  []string
		opts       kv.Options
		src        string
		wantDenied bool
	}{
		{"remote, defaults", nil, kv.Options{}, remote, true},
		{"loopback, defaults", nil, kv.Options{}, "127.0.0.1", false},
		{"remote, password", []string{"--requirepass", "p"}, kv.Options{RequirePass: "p"}, remote, false},
		{"remote, protected-mode no", []string{"--protected-mode", "no"}, kv.Options{DisableProtectedMode: true}, remote, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			redisAddr := startRedisOn(t, "0.0.0.0", tc.redisArgs...)
			st := startShoalOn(t, "0.0.0.0:0", tc.opts)
			want := exchangeFrom(t, tc.src, redisAddr)
			got := exchangeFrom(t, tc.src, st)
			if got != want {
				t.Fatalf("shoal answered %.80q, redis-server %.80q", got, want)
			}
			if denied := strings.HasPrefix(got, "-DENIED Redis is running in protected mode"); denied != tc.wantDenied {
				t.Fatalf("denied=%v, want %v: %.80q", denied, tc.wantDenied, got)
			}
		})
	}
}

// TestProtectedModeConfig: CONFIG GET/SET protected-mode, and switching it
// off lets a remote client in.
func TestProtectedModeConfig(t *testing.T) {
	remote := remoteAddress(t)
	addr := startShoalOn(t, "0.0.0.0:0", kv.Options{})
	_, port, _ := net.SplitHostPort(addr)
	admin := dialRaw(t, "127.0.0.1:"+port)
	if r := admin.Do("CONFIG", "GET", "protected-mode"); r != "*2\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n" {
		t.Fatalf("CONFIG GET: %q", r)
	}
	if r := admin.Do("CONFIG", "SET", "protected-mode", "maybe"); !strings.Contains(r, "argument must be 'yes' or 'no'") {
		t.Fatalf("CONFIG SET maybe: %q", r)
	}
	if r := admin.Do("CONFIG", "SET", "protected-mode", "no"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET no: %q", r)
	}
	if got := exchangeFrom(t, remote, addr); got != "+PONG\r\n" {
		t.Fatalf("remote client after protected-mode no: %q", got)
	}
}

func startRedisOn(t *testing.T, bind string, extra ...string) string {
	t.Helper()
	addr := startRedis(t, append([]string{"--bind", bind}, extra...)...)
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(bind, port)
}

func startShoalOn(t *testing.T, addr string, o kv.Options) string {
	t.Helper()
	return shoaltest.Start(t, shoaltest.Options{KV: o, Loop: eventloop.Options{Addr: addr, Loops: 1}}).Addr
}
