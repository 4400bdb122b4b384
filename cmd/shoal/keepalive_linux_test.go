package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestTCPKeepAliveArmsTheTimer: with tcp-keepalive on (the default, 300 s,
// as Redis) the server's side of a connection has the kernel's keepalive
// timer armed; with 0 it has none. /proc/net/tcp shows the timer of each
// socket (timer_active 2 is keepalive).
func TestTCPKeepAliveArmsTheTimer(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want bool
	}{{"300", true}, {"0", false}} {
		p := startBinary(t, "--tcp-keepalive", tc.arg)
		c := p.dial(t)
		rd := bufio.NewReader(c)
		fmt.Fprint(c, "PING\r\n")
		if line, err := rd.ReadString('\n'); err != nil || line != "+PONG\r\n" {
			t.Fatalf("PING: %q %v", line, err)
		}
		if got := serverKeepAlive(t, p.port, c.LocalAddr().(*net.TCPAddr).Port); got != tc.want {
			t.Errorf("--tcp-keepalive %s: keepalive timer armed %v, want %v", tc.arg, got, tc.want)
		}
		c.Close()
	}
}

// serverKeepAlive reports whether the socket from server port to client
// port has its keepalive timer running, waiting briefly for the
// connection to be idle (a timer of pending data shows until then).
func serverKeepAlive(t *testing.T, port, peer int) bool {
	t.Helper()
	local := fmt.Sprintf(":%04X ", port)
	remote := fmt.Sprintf(":%04X ", peer)
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile("/proc/net/tcp")
		if err != nil {
			t.Skipf("no /proc/net/tcp: %v", err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when ...
			if len(f) < 6 || !strings.HasSuffix(f[1]+" ", local) || !strings.HasSuffix(f[2]+" ", remote) {
				continue
			}
			timer := strings.SplitN(f[5], ":", 2)[0]
			if timer == "02" {
				return true
			}
			if timer == "00" || time.Now().After(deadline) {
				return false
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no socket from port %d to %d in /proc/net/tcp", port, peer)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
