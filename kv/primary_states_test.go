package kv_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A replica's life as its primary lists it, against redis-server: waiting
// for its snapshot (repl-diskless-sync-delay), receiving a diskless one,
// online waiting for its first ACK (Redis puts a diskless replica online
// at once and starts its stream at that ACK), acknowledged, and receiving
// a snapshot in the disk form without reading it (send_bulk). INFO
// replication's slaveN lines (offset 0 and lag 0 before the first ACK) and
// ROLE (online replicas only) must be Redis's, byte for byte.

// slaveLine polls INFO replication until slave<n> has want (",state=online,"
// say), and returns the line, its lag masked once online (the seconds
// since an event, which a loaded machine may stretch).
func slaveLine(t *testing.T, c *rawConn, n, want string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^slave` + n + `:(.*)\r$`)
	line := ""
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(line, want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("slave%s is not %s within 30 s: %q", n, want, line)
		}
		if m := re.FindStringSubmatch(c.Do("INFO", "replication")); m != nil {
			line = m[1]
		}
	}
	if strings.Contains(line, ",state=online,") {
		line = regexp.MustCompile(`lag=\d+$`).ReplaceAllString(line, "lag=<n>")
	}
	return line
}

// readLine reads a line that starts with prefix, after the newlines a
// primary sends while it waits.
func readLine(t *testing.T, c *rawConn, prefix string) string {
	t.Helper()
	_ = c.C.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		line, err := c.Rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading %s from %s: %v", prefix, c.C.RemoteAddr(), err)
		}
		if line == "\n" {
			continue
		}
		if !strings.HasPrefix(line, prefix) {
			t.Fatalf("%q, want %s", line, prefix)
		}
		return line
	}
}

// readDiskless reads a diskless snapshot: $EOF:<mark>, then bytes up to
// the mark.
func readDiskless(t *testing.T, c *rawConn) {
	t.Helper()
	head := readLine(t, c, "$EOF:")
	mark, ok := strings.CutPrefix(strings.TrimSuffix(head, "\r\n"), "$EOF:")
	if !ok || len(mark) != 40 {
		t.Fatalf("payload header %q, want $EOF:<mark>", head)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte(mark)) {
		n, err := c.Rd.Read(buf)
		if err != nil {
			t.Fatalf("reading the payload after %d bytes: %v", len(got), err)
		}
		got = append(got, buf[:n]...)
	}
}

func TestReplicaStatesAsRedis(t *testing.T) {
	bothServers(t, 1, nil, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		for _, kv := range [][2]string{{"repl-diskless-sync", "yes"}, {"repl-diskless-sync-delay", "3600"},
			{"repl-ping-replica-period", "3600"}, {"rdbcompression", "no"}} {
			if r := c.Do("CONFIG", "SET", kv[0], kv[1]); r != "+OK\r\n" {
				t.Fatalf("CONFIG SET %s: %q", kv[0], r)
			}
		}
		var out []string
		// Waiting for the delay.
		a := dialRaw(t, addr)
		a.Do("REPLCONF", "listening-port", "7001")
		a.Do("REPLCONF", "capa", "eof", "capa", "psync2")
		a.Send(encodeCommand([]string{"PSYNC", "?", "-1"}))
		out = append(out, slaveLine(t, c, "0", ",state=wait_bgsave,"), c.Do("ROLE"))
		// The snapshot, read whole; no ACK yet.
		c.Do("CONFIG", "SET", "repl-diskless-sync-delay", "0")
		readLine(t, a, "+FULLRESYNC ")
		readDiskless(t, a)
		out = append(out, slaveLine(t, c, "0", ",state=online,"), c.Do("ROLE"))
		a.Send(encodeCommand([]string{"REPLCONF", "ACK", "0"}))
		c.Do("SET", "k", "v")
		a.Send(encodeCommand([]string{"REPLCONF", "ACK", "23"})) // SELECT 0 and the SET: 23 + 29
		out = append(out, slaveLine(t, c, "0", ",offset=23,"), c.Do("ROLE"))
		// A snapshot in the disk form that the replica does not read,
		// larger than the sockets hold.
		c.Do("CONFIG", "SET", "repl-diskless-sync", "no")
		val := strings.Repeat("x", 100<<10)
		for i := 0; i < 300; i++ {
			c.Send(encodeCommand([]string{"SET", "big:" + string(rune('a'+i%26)) + strings.Repeat("z", i/26), val}))
		}
		for i := 0; i < 300; i++ {
			if _, err := c.Read(); err != nil {
				t.Fatal(err)
			}
		}
		b := dialRaw(t, addr)
		b.Do("REPLCONF", "listening-port", "7002")
		b.Send(encodeCommand([]string{"PSYNC", "?", "-1"}))
		out = append(out, slaveLine(t, c, "1", ",state=send_bulk,"), c.Do("ROLE"))
		return out
	})
}
