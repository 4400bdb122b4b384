package kv_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A node told REPLICAOF ends the blocking commands still waiting on it
// (BLPOP, BZPOPMIN, XREAD BLOCK, WAIT) with Redis's UNBLOCKED error and
// closes their connections, as redis-server's disconnectAllBlockedClients:
// the pipeline sent after them is dropped.
func TestReplicaOfUnblocksBlockedClientsAsRedis(t *testing.T) {
	bothServers(t, 1, nil, func(t *testing.T, addr string) []string {
		ctl := dialRaw(t, addr)
		ctl.Do("XADD", "s", "1-1", "f", "v")
		var blocked []*rawConn
		for _, cmd := range [][]string{{"BLPOP", "list", "0"}, {"BZPOPMIN", "zset", "0"},
			{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}, {"WAIT", "1", "0"}} {
			c := dialRaw(t, addr)
			c.Send(append(encodeCommand(cmd), encodeCommand([]string{"PING"})...))
			blocked = append(blocked, c)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(ctl.Do("INFO", "clients"), "blocked_clients:"+strconv.Itoa(len(blocked))+"\r\n") {
			if time.Now().After(deadline) {
				t.Fatalf("not every client blocked: %q", ctl.Do("INFO", "clients"))
			}
			time.Sleep(10 * time.Millisecond)
		}
		out := []string{ctl.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(freePort(t)))}
		for _, c := range blocked {
			reply, err := c.Read()
			if err != nil {
				t.Fatalf("reading the blocked command's reply: %v", err)
			}
			rest, err := c.ReadUntilClose()
			if err != nil {
				t.Fatalf("after the reply: %q %v", rest, err)
			}
			out = append(out, reply, rest)
		}
		gauge := regexp.MustCompile(`blocked_clients:\d+`).FindString(ctl.Do("INFO", "clients"))
		return append(out, gauge, ctl.Do("REPLICAOF", "NO", "ONE"))
	})
}
