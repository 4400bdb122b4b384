package kv_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReplicaOfRepliesAsRedis: REPLICAOF and SLAVEOF, their errors, the
// read-only replica's -READONLY (also inside MULTI), -MASTERDOWN with
// replica-serve-stale-data no, and ROLE of a primary, byte for byte as
// redis-server 7.0 answers them. The primary named is a port nobody
// listens on, so both stay replicas whose link is down.
func TestReplicaOfRepliesAsRedis(t *testing.T) {
	dead := strconv.Itoa(freePort(t))
	steps := [][]string{
		{"REPLICAOF"}, {"REPLICAOF", "a"}, {"SLAVEOF", "a", "b", "c"},
		{"REPLICAOF", "127.0.0.1", "abc"}, {"REPLICAOF", "127.0.0.1", "-1"}, {"REPLICAOF", "127.0.0.1", "65536"},
		{"REPLICAOF", "127.0.0.1", "99999999999999999999"}, {"REPLICAOF", "127.0.0.1", "1.5"},
		{"REPLICAOF", "no", "one"}, {"ROLE"}, {"ROLE", "x"},
		{"SET", "k", "v"},
		{"REPLICAOF", "127.0.0.1", dead}, {"REPLICAOF", "127.0.0.1", dead}, {"SLAVEOF", "127.0.0.1", dead},
		{"SET", "k", "v2"}, {"INCR", "n"}, {"GET", "k"}, {"DEL", "k"},
		{"MULTI"}, {"SET", "k", "v3"}, {"GET", "k"}, {"EXEC"},
		{"CONFIG", "GET", "replicaof"}, {"CONFIG", "GET", "replica-read-only"}, {"CONFIG", "GET", "slave-read-only"},
		{"CONFIG", "SET", "replica-read-only", "no"}, {"SET", "k", "local"}, {"GET", "k"},
		{"CONFIG", "SET", "replica-serve-stale-data", "no"},
		{"GET", "k"}, {"PING"}, {"INFO", "nosuchsection"}, {"CONFIG", "SET", "replica-serve-stale-data", "yes"}, {"GET", "k"},
		{"CONFIG", "SET", "replica-read-only", "yes"},
		{"SLAVEOF", "NO", "ONE"}, {"ROLE"}, {"SET", "k", "writable"}, {"GET", "k"}, {"SLAVEOF", "no", "one"},
		{"CLIENT", "KILL", "TYPE", "master"}, {"CLIENT", "LIST", "TYPE", "master"},
		{"CONFIG", "SET", "repl-timeout", "0"}, {"CONFIG", "SET", "replica-priority", "-1"}, {"CONFIG", "SET", "replicaof", "1 2"},
	}
	bothServers(t, 2, nil, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		var out []string
		for _, st := range steps {
			out = append(out, c.Do(st...))
		}
		return out
	})
}

// TestReplicaInfoFields: INFO replication of a replica whose link is down
// has Redis's fields in Redis's order.
func TestReplicaInfoFields(t *testing.T) {
	dead := strconv.Itoa(freePort(t))
	fields := bothServers(t, 1, nil, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		var out []string
		for _, when := range []string{"primary", "replica", "promoted"} {
			switch when {
			case "replica":
				c.Do("REPLICAOF", "127.0.0.1", dead)
			case "promoted":
				c.Do("REPLICAOF", "NO", "ONE")
			}
			for _, line := range strings.Split(c.Do("INFO", "replication"), "\r\n") {
				if name, _, ok := strings.Cut(line, ":"); ok {
					out = append(out, when+" "+name)
				}
			}
		}
		return out
	})
	if len(fields) < 20 {
		t.Fatalf("too few fields: %q", fields)
	}
}

// TestReplicaListsItsPrimaryAsRedis: on a replica whose link is up, CLIENT
// LIST TYPE master shows the primary's connection with Redis's flags (M),
// db and command fields, CLIENT LIST TYPE normal does not list it, and
// HELLO says role replica.
func TestReplicaListsItsPrimaryAsRedis(t *testing.T) {
	primary := startRedis(t, "--repl-diskless-sync-delay", "0")
	_, port, _ := strings.Cut(primary, ":")
	bothServers(t, 1, nil, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		c.Do("REPLICAOF", "127.0.0.1", port)
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(c.Do("INFO", "replication"), "master_link_status:up") {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the link to %s did not come up", addr, primary)
			}
			time.Sleep(50 * time.Millisecond)
		}
		var out []string
		for _, f := range strings.Fields(c.Do("CLIENT", "LIST", "TYPE", "master")) {
			if name, _, _ := strings.Cut(f, "="); name == "flags" || name == "db" || name == "multi" || name == "sub" {
				out = append(out, f)
			}
		}
		hello := strings.Fields(c.Do("HELLO", "2"))
		for i, f := range hello {
			if f == "role" && i+2 < len(hello) { // raw RESP: role, $len, value
				out = append(out, "HELLO role "+hello[i+2])
			}
		}
		normal := c.Do("CLIENT", "LIST", "TYPE", "normal")
		out = append(out, "normal clients: "+strconv.Itoa(strings.Count(normal, "\n")))
		c.Do("REPLICAOF", "NO", "ONE")
		return out
	})
}
