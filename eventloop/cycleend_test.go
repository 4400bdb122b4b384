package eventloop

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// cycleEnder answers each line with "seen N" at once and, through a
// function queued with AtCycleEnd, "end N:K", where K is how many lines
// the loop had taken, over all connections, when the function ran. For a
// line "twice" the function queues another, which answers "again".
type cycleEnder struct {
	mu    sync.Mutex
	lines int
	errs  []error
}

func (h *cycleEnder) OnTraffic(c *Conn, in []byte) int {
	return eachLine(in, func(line []byte) bool {
		cmd := strings.TrimSpace(string(line))
		h.mu.Lock()
		h.lines++
		n := h.lines
		h.mu.Unlock()
		fmt.Fprintf(c, "seen %d\n", n)
		err := c.AtCycleEnd(func(c *Conn) {
			h.mu.Lock()
			k := h.lines
			h.mu.Unlock()
			fmt.Fprintf(c, "end %d:%d\n", n, k)
			if cmd == "twice" {
				_ = c.AtCycleEnd(func(c *Conn) { c.WriteString("again\n") })
			}
		})
		if err != nil {
			h.mu.Lock()
			h.errs = append(h.errs, err)
			h.mu.Unlock()
		}
		return true
	})
}

// TestAtCycleEndRunsAfterTheCycleBeforeItsOutput: a pipeline of three
// lines arrives in one read; the three cycle-end functions run after all
// three lines were taken (K = 3 for each), in the order queued, and their
// output follows the lines' in the same stream.
func TestAtCycleEndRunsAfterTheCycleBeforeItsOutput(t *testing.T) {
	h := &cycleEnder{}
	s := startServer(t, h, Options{Loops: 1})
	c := dial(t, s)
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute)) // a hang guard only
	if _, err := c.Write([]byte("a\nb\nc\n")); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	var got []string
	for len(got) < 6 {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, strings.TrimSpace(line))
	}
	want := "seen 1,seen 2,seen 3,end 1:3,end 2:3,end 3:3"
	if strings.Join(got, ",") != want {
		t.Fatalf("got %q, want %q (one read of three lines, then the cycle's end)", got, want)
	}
}

// TestAtCycleEndBeforeGracefulClose: a function queued by a cycle-end
// function runs too; and when the peer half-closes right after its last
// line, the connection's close waits for that line's cycle-end function,
// whose output the peer gets before the EOF.
func TestAtCycleEndBeforeGracefulClose(t *testing.T) {
	h := &cycleEnder{}
	s := startServer(t, h, Options{Loops: 1})
	c := dial(t, s)
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute)) // a hang guard only
	if _, err := c.Write([]byte("twice\n")); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	for _, want := range []string{"seen 1\n", "end 1:1\n", "again\n"} {
		if line, err := rd.ReadString('\n'); line != want {
			t.Fatalf("got %q (%v), want %q", line, err, want)
		}
	}
	if _, err := c.Write([]byte("last\n")); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(rd)
	if err != nil || string(got) != "seen 2\nend 2:2\n" {
		t.Fatalf("before the close the peer got %q (%v), want the line's reply and the cycle-end output", got, err)
	}
}
