package kv_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestSentinelReconfigurationTransaction: the transaction redis-sentinel
// sends to make a server a replica or a primary (MULTI, SLAVEOF, CONFIG
// REWRITE, CLIENT KILL TYPE normal and pubsub, EXEC) is answered as
// redis-server answers it, and the server goes on serving after it: the
// first REPLICAOF of a fresh server starts its link inside the EXEC.
func TestSentinelReconfigurationTransaction(t *testing.T) {
	dead := strconv.Itoa(freePort(t))
	reconfigure := func(host, port string) [][]string {
		return [][]string{
			{"MULTI"}, {"SLAVEOF", host, port}, {"CONFIG", "REWRITE"},
			{"CLIENT", "KILL", "TYPE", "normal"}, {"CLIENT", "KILL", "TYPE", "pubsub"}, {"EXEC"},
		}
	}
	var steps [][]string
	steps = append(steps, reconfigure("127.0.0.1", dead)...)
	steps = append(steps, []string{"PING"}, []string{"ROLE"})
	steps = append(steps, reconfigure("NO", "ONE")...)
	steps = append(steps, []string{"PING"}, []string{"SET", "k", "v"}, []string{"ROLE"})
	bothServers(t, 2, nil, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		other := dialRaw(t, addr) // a normal client: killed by the first transaction
		other.Do("PING")
		var out []string
		for _, st := range steps {
			reply := c.Do(st...)
			if st[0] == "ROLE" {
				// A replica of a dead port is "connect" between attempts and
				// "connecting" during one, on either server, as timing has it.
				reply = strings.Replace(reply, "$10\r\nconnecting\r\n", "$7\r\nconnect\r\n", 1)
			}
			out = append(out, reply)
		}
		return out
	})
}
