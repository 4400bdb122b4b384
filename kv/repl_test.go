package kv_test

import (
	"strconv"
	"strings"
	"testing"
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
