package kv_test

import (
	"strings"
	"testing"
)

// dialInTurn dials n connections to addr, one after another, each
// answering a PING before the next is dialled, so a round-robin server
// puts them on consecutive loops.
func dialInTurn(t *testing.T, addr string, n int) []*rawConn {
	t.Helper()
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = dialRaw(t, addr)
		if got := conns[i].Do("PING"); got != "+PONG\r\n" {
			t.Fatalf("PING: %q", got)
		}
	}
	return conns
}

// TestWatchIgnoresKeylessWrites: FUNCTION LOAD, DELETE, FLUSH and RESTORE
// and SCRIPT FLUSH change no key, so a watched key's EXEC still runs;
// SWAPDB and FLUSHALL of an existing watched key fail it, as in Redis.
func TestWatchIgnoresKeylessWrites(t *testing.T) {
	bothServers(t, 3, nil, func(t *testing.T, addr string) []string {
		conns := dialInTurn(t, addr, 2)
		watcher, writer := conns[0], conns[1]
		lib := "#!lua name=w\nredis.register_function('f', function() return 1 end)"
		var out []string
		for _, write := range [][]string{
			{"FUNCTION", "LOAD", lib}, {"FUNCTION", "DUMP"}, {"FUNCTION", "DELETE", "w"}, {"FUNCTION", "LOAD", lib},
			{"FUNCTION", "FLUSH"}, {"SCRIPT", "LOAD", "return 1"}, {"SCRIPT", "FLUSH"}, {"SET", "k", "0"},
			{"SWAPDB", "0", "1"}, {"FLUSHALL"},
		} {
			out = append(out, watcher.Do("WATCH", "k"))
			reply := writer.Do(write...)
			if len(write) > 1 && write[1] == "DUMP" {
				reply = writer.Do("FUNCTION", "RESTORE", reply[strings.Index(reply, "\n")+1:len(reply)-2], "REPLACE")
			}
			out = append(out, reply, watcher.Do("MULTI"), watcher.Do("GET", "k"), watcher.Do("EXEC"))
		}
		return out
	})
}
