package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/proto/resp"
)

// Under a descriptor limit of 256, --maxclients 10000 becomes 224 with a warning, and
// clients past 224 get Redis's refusal instead of an accept that fails with EMFILE.
func TestMaxClientsCappedToDescriptorLimit(t *testing.T) {
	p := startWrapped(t, []string{"sh", "-c", `ulimit -n 256 && exec "$@"`, "sh"}, "--maxclients", "10000")
	const tries = 240
	var pong, refused int
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range tries {
		c := p.dial(t)
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(resp.AppendCommand(nil, "PING")); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		switch {
		case line == "+PONG\r\n":
			pong++
		case strings.HasPrefix(line, "-ERR max number of clients reached"):
			refused++
		default:
			t.Fatalf("connection %d: reply %q, err %v", len(conns), line, err)
		}
	}
	if pong != 256-config.ReservedFDs || refused != tries-pong {
		t.Errorf("%d answered, %d refused; want %d and %d", pong, refused, 256-config.ReservedFDs, tries-256+config.ReservedFDs)
	}
	p.terminate(t)
	if out := p.stderr.String(); !strings.Contains(out, "maxclients 10000 needs 10032 descriptors but the limit is 256: maxclients reduced to 224") {
		t.Errorf("no warning about the reduced maxclients in:\n%s", out)
	}
}

// TestConfigSetMaxClients: CONFIG SET maxclients applies to connections
// made after it, as Redis's; a value the descriptor limit cannot hold is
// refused with Redis's reason and the most it can.
func TestConfigSetMaxClients(t *testing.T) {
	p := startWrapped(t, []string{"sh", "-c", `ulimit -n 256 && exec "$@"`, "sh"}, "--maxclients", "100")
	admin := p.dial(t)
	r := bufio.NewReader(admin)
	do := func(args ...string) string {
		t.Helper()
		admin.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := admin.Write(resp.AppendCommand(nil, args...)); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	if got := do("CONFIG", "SET", "maxclients", "300"); !strings.HasPrefix(got, "-ERR CONFIG SET failed") ||
		!strings.Contains(got, "The operating system is not able to handle the specified number of clients, try with 224") {
		t.Fatalf("CONFIG SET maxclients 300 under a limit of 256 descriptors: %q", got)
	}
	if got := do("CONFIG", "SET", "maxclients", "1"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET maxclients 1: %q", got)
	}
	ping := func() string {
		c := p.dial(t)
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Write(resp.AppendCommand(nil, "PING")); err != nil {
			return err.Error()
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		return line
	}
	// admin holds the one place (and the readiness check's connection may
	// still be closing): a new client is refused.
	if got := ping(); !strings.HasPrefix(got, "-ERR max number of clients reached") {
		t.Fatalf("a client past maxclients 1: %q", got)
	}
	if got := do("CONFIG", "SET", "maxclients", "10"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET maxclients 10: %q", got)
	}
	if got := ping(); got != "+PONG\r\n" {
		t.Fatalf("a client after maxclients was raised to 10: %q", got)
	}
	if got := do("CONFIG", "GET", "maxclients"); got != "*2\r\n" {
		t.Fatalf("CONFIG GET maxclients: %q", got)
	}
}
