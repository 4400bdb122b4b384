package eventloop_test

import (
	"bufio"
	"errors"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
)

// cycleEndProbe answers each read with "x" and what AtCycleEnd returned,
// and with "end" from the cycle-end function if it runs.
type cycleEndProbe struct{}

func (cycleEndProbe) OnTraffic(c *eventloop.Conn, in []byte) int {
	err := c.AtCycleEnd(func(c *eventloop.Conn) { c.WriteString("end\n") })
	switch {
	case err == nil:
		c.WriteString("queued\n")
	case errors.Is(err, eventloop.ErrNoCycleEnd):
		c.WriteString("none\n")
	default:
		c.WriteString(err.Error() + "\n")
	}
	return len(in)
}

// TestAtCycleEndPerEngine: the native engine (plain and TLS) runs a
// cycle-end function after the cycle's traffic; gnet has no cycle end and
// says so with ErrNoCycleEnd, running nothing (the caller takes another
// path).
func TestAtCycleEndPerEngine(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		s := e.start(t, cycleEndProbe{}, eventloop.Options{Loops: 1})
		c := dialServer(t, s)
		if _, err := c.Write([]byte("a")); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(c)
		want := []string{"queued\n", "end\n"}
		if e.name == "gnet" {
			want = []string{"none\n"}
		}
		for _, w := range want {
			if line, err := rd.ReadString('\n'); line != w {
				t.Fatalf("got %q (%v), want %q", line, err, w)
			}
		}
	})
}
