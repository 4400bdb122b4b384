package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

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
	if pong != 256-reservedFDs || refused != tries-pong {
		t.Errorf("%d answered, %d refused; want %d and %d", pong, refused, 256-reservedFDs, tries-256+reservedFDs)
	}
	p.terminate(t)
	if out := p.stderr.String(); !strings.Contains(out, "maxclients 10000 needs 10032 descriptors but the limit is 256: maxclients reduced to 224") {
		t.Errorf("no warning about the reduced maxclients in:\n%s", out)
	}
}
