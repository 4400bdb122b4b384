package kv_test

import (
	"strings"
	"testing"
	"time"
)

// TestClientPauseMatchesRedis runs the same CLIENT PAUSE scenarios on
// redis-server and on Shoal and compares what the clients see: the
// argument errors; under WRITE, reads answered at once while a write, a
// PUBLISH and an EXEC holding a write wait, then run in order on UNPAUSE;
// under ALL, a PING held until the pause ends by itself.
func TestClientPauseMatchesRedis(t *testing.T) {
	want := bothServers(t, 2, nil, func(t *testing.T, addr string) []string {
		var got []string
		ctl, b, c := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
		ctl.Do("FLUSHALL")
		for _, cmd := range [][]string{
			{"CLIENT", "PAUSE", "abc"}, {"CLIENT", "PAUSE", "-1"}, {"CLIENT", "PAUSE", "10", "bogus"},
			{"CLIENT", "PAUSE", "10", "write", "extra"}, {"CLIENT", "PAUSE"}, {"CLIENT", "UNPAUSE", "x"},
		} {
			got = append(got, ctl.Do(cmd...))
		}

		// WRITE: b's GET is answered; its SET waits, so c reads no value;
		// d's EXEC, whose queue holds a write, waits too.
		d := dialRaw(t, addr)
		got = append(got, d.Do("MULTI"), d.Do("SET", "q", "1"))
		got = append(got, ctl.Do("CLIENT", "PAUSE", "60000", "WRITE"))
		d.Send(encodeCommand([]string{"EXEC"}))
		var pipe []byte
		for _, cmd := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"GET", "k"}, {"PUBLISH", "ch", "m"}, {"GET", "k"}} {
			pipe = append(pipe, encodeCommand(cmd)...)
		}
		b.Send(pipe)
		r, err := b.Read()
		if err != nil {
			t.Fatalf("%s: the read before the held write: %v", addr, err)
		}
		got = append(got, r)
		got = append(got, c.Do("GET", "k"), c.Do("EXISTS", "k"), c.Do("MULTI"))
		c.Send(encodeCommand([]string{"SET", "other", "1"})) // held too, though queued
		// A wrong arity is answered at once, as Redis checks it first.
		got = append(got, ctl.Do("SET", "k"))
		got = append(got, ctl.Do("GET", "k"), ctl.Do("EXISTS", "q"), ctl.Do("CLIENT", "UNPAUSE"))
		execReply, err := d.Read()
		if err != nil {
			t.Fatalf("%s: the held EXEC after UNPAUSE: %v", addr, err)
		}
		got = append(got, execReply)
		for range 4 {
			r, err := b.Read()
			if err != nil {
				t.Fatalf("%s: replies after UNPAUSE: %v", addr, err)
			}
			got = append(got, r)
		}
		queued, err := c.Read()
		if err != nil {
			t.Fatalf("%s: the queued SET after UNPAUSE: %v", addr, err)
		}
		got = append(got, queued, c.Do("EXEC"))

		// ALL: even PING waits, until the pause ends by itself.
		got = append(got, ctl.Do("CLIENT", "PAUSE", "300", "ALL"))
		start := time.Now()
		got = append(got, b.Do("PING"))
		if waited := time.Since(start); waited < 200*time.Millisecond {
			t.Errorf("%s: PING answered after %v of a 300 ms pause", addr, waited)
		}

		// A client that leaves while held does not trouble the unpause.
		got = append(got, ctl.Do("CLIENT", "PAUSE", "60000", "WRITE"))
		gone := dialRaw(t, addr)
		gone.Send(encodeCommand([]string{"SET", "gone", "1"}))
		if r := ctl.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("%s: PING under WRITE: %q", addr, r)
		}
		gone.C.Close()
		got = append(got, ctl.Do("CLIENT", "UNPAUSE"), b.Do("SET", "after", "1"))
		return got
	})
	if !strings.Contains(strings.Join(want, ""), "$1\r\nv\r\n") {
		t.Fatalf("the scenario never read the held write's value: %q", want)
	}
}
