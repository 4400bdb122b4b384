package kv_test

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/rdb"
)

// seenTime matches XINFO STREAM FULL's seen-time values: a replay creates
// consumers anew, at its own time, as Redis's does.
var seenTime = regexp.MustCompile(`(\$9\r\nseen-time\r\n):\d+\r\n`)

// groupKeyspace reads each stream with its groups as XINFO STREAM FULL
// shows them: every pending entry with its owner, delivery time and
// count, every consumer and its PEL, the groups' last IDs; seen times
// masked, and entries-read and lag too (Redis 7.0's propagation, an
// XCLAIM with LASTID, moves a group's last ID but not its read counter).
func groupKeyspace(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	c := dialRaw(t, addr)
	m := map[string]string{}
	counters := regexp.MustCompile(`(\$(12\r\nentries-read|3\r\nlag)\r\n)(:\d+|\$-1)\r\n`)
	for _, k := range keys {
		full := seenTime.ReplaceAllString(c.Do("XINFO", "STREAM", k, "FULL", "COUNT", "0"), "${1}:T\r\n")
		m[k] = counters.ReplaceAllString(full, "${1}N\r\n")
	}
	return m
}

// TestAOFStreamGroupsReplay: consumer groups driven by every command that
// changes them (XGROUP's subcommands, XREADGROUP with and without NOACK,
// history reads, XACK, XCLAIM with its options, XAUTOCLAIM over a deleted
// entry) from concurrent clients, with a rewrite in between; a server
// that loads the log has the same PELs, owners, delivery times and counts,
// consumers and last IDs. The log holds XREADGROUP as the XCLAIMs Redis
// propagates, never XREADGROUP itself.
func TestAOFStreamGroupsReplay(t *testing.T) {
	s := startAOF(t, aof.FsyncEverySec)
	keys := []string{"q0", "q1", "q2"}
	c := dialRaw(t, s.addr)
	for _, k := range keys {
		doAll(t, c, [][]string{{"XGROUP", "CREATE", k, "workers", "$", "MKSTREAM"}, {"XGROUP", "CREATE", k, "audit", "0"}})
	}
	writeConcurrently(t, s.addr, 4, 60, func(conn, i int) [][]string {
		k := keys[(conn+i)%3]
		consumer := []string{"alice", "bob", "carol"}[conn%3]
		cmds := [][]string{
			{"XADD", k, "*", "conn", string(rune('a' + conn)), "i", strings.Repeat("x", i%7)},
			{"XREADGROUP", "GROUP", "workers", consumer, "COUNT", "2", "STREAMS", k, ">"},
			{"XREADGROUP", "GROUP", "audit", "auditor", "NOACK", "COUNT", "1", "STREAMS", k, ">"},
		}
		switch i % 6 {
		case 1:
			cmds = append(cmds, []string{"XREADGROUP", "GROUP", "workers", consumer, "STREAMS", k, "0"})
		case 2:
			cmds = append(cmds, []string{"XAUTOCLAIM", k, "workers", "dave", "0", "-", "COUNT", "1"})
		case 3:
			cmds = append(cmds, []string{"XGROUP", "SETID", k, "audit", "$"})
		case 4:
			cmds = append(cmds, []string{"XGROUP", "CREATECONSUMER", k, "workers", "idle-one"})
		}
		return cmds
	})
	doAll(t, c, [][]string{
		{"XADD", "q0", "*", "f", "v"}, {"XREADGROUP", "GROUP", "workers", "erin", "STREAMS", "q0", ">"},
		{"XCLAIM", "q1", "workers", "frank", "0", "0-1", "FORCE"},
		{"XGROUP", "DELCONSUMER", "q2", "workers", "idle-one"},
	})
	s.rewriteAndWait(c)
	// After the rewrite: claims with every option, acks, a group moved back.
	pending := c.Do("XPENDING", "q1", "workers", "-", "+", "3")
	ids := regexp.MustCompile(`\$\d+\r\n(\d+-\d+)\r\n`).FindAllStringSubmatch(pending, -1)
	if len(ids) < 3 {
		t.Fatalf("q1's PEL: %q", pending)
	}
	doAll(t, c, [][]string{
		{"XCLAIM", "q1", "workers", "gina", "0", ids[0][1], "TIME", "1700000000000", "RETRYCOUNT", "9", "JUSTID"},
		{"XCLAIM", "q1", "workers", "gina", "0", ids[1][1], "IDLE", "5000", "LASTID", "99999999999999-0"},
		{"XACK", "q1", "workers", ids[2][1]}, {"XDEL", "q2", "0-1"},
		{"XDEL", "q1", ids[1][1]}, {"XAUTOCLAIM", "q1", "workers", "hank", "0", "-", "COUNT", "1000"},
		{"XGROUP", "SETID", "q2", "audit", "0", "ENTRIESREAD", "0"},
		{"XREADGROUP", "GROUP", "audit", "auditor", "COUNT", "3", "STREAMS", "q2", ">"},
		{"XGROUP", "CREATE", "q2", "late", "0"}, {"XGROUP", "DESTROY", "q0", "audit"},
	})
	before := groupKeyspace(t, s.addr, keys)
	s = s.restart(t)
	after := groupKeyspace(t, s.addr, keys)
	for _, k := range keys {
		if i := firstDifference(before[k], after[k]); i >= 0 {
			t.Errorf("%s after replay differs at byte %d:\nbefore: %q\nafter:  %q", k, i, around(before[k], i), around(after[k], i))
		}
	}
	if !strings.Contains(before["q1"], "hank") || !strings.Contains(before["q0"], "erin") {
		t.Errorf("q1 lacks the claims: %.500q", before["q1"])
	}
	log := s.stopAndReadLog(t)
	if strings.Contains(strings.ToUpper(log), "XREADGROUP") {
		t.Errorf("the log holds XREADGROUP")
	}
	for _, want := range []string{"$5\r\nFORCE\r\n", "$6\r\nLASTID\r\n", "$5\r\nSETID\r\n", "CREATECONSUMER"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}

// TestStreamGroupsDumpRestoreWithRedis: a stream with groups, pending
// entries and consumers made on redis-server and DUMPed restores on Shoal
// to the same XINFO STREAM FULL and DUMPs back to the same bytes, and one
// made on Shoal restores on redis-server to the same XINFO STREAM FULL.
func TestStreamGroupsDumpRestoreWithRedis(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	build := [][]string{
		{"XADD", "s", "1-1", "a", "1"}, {"XADD", "s", "2-1", "b", "2"}, {"XADD", "s", "3-1", "c", "3"}, {"XADD", "s", "4-1", "d", "4"},
		{"XGROUP", "CREATE", "s", "g1", "0"}, {"XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "4"}, {"XGROUP", "CREATE", "s", "g0", "1-1"},
		{"XREADGROUP", "GROUP", "g1", "zoe", "COUNT", "2", "STREAMS", "s", ">"}, {"XREADGROUP", "GROUP", "g1", "al", "STREAMS", "s", ">"},
		{"XCLAIM", "s", "g1", "bo", "0", "2-1", "RETRYCOUNT", "5", "TIME", "1600000000000"}, {"XGROUP", "CREATECONSUMER", "s", "g2", "idle"},
		{"XREADGROUP", "GROUP", "g0", "x", "NOACK", "STREAMS", "s", ">"}, {"XDEL", "s", "3-1"},
	}
	for _, proto := range []int{2, 3} {
		ref, got := dialFresh(t, redisAddr, proto), dialFresh(t, shoal.addr, proto)
		for _, cmd := range build {
			if r := ref.Do(cmd...); r[0] == '-' {
				t.Fatalf("redis %q: %q", cmd, r)
			}
		}
		payload := ref.Do("DUMP", "s")
		body := payload[strings.Index(payload, "\r\n")+2 : len(payload)-2]
		if r := got.Do("RESTORE", "s", "0", body); r != "+OK\r\n" {
			t.Fatalf("RESTORE on Shoal: %q", r)
		}
		full := []string{"XINFO", "STREAM", "s", "FULL"}
		if want, have := ref.Do(full...), got.Do(full...); want != have {
			t.Errorf("resp%d XINFO STREAM FULL after RESTORE:\nredis: %q\nshoal: %q", proto, want, have)
		}
		if have := got.Do("DUMP", "s"); have != payload {
			t.Errorf("resp%d DUMP of the restored stream:\nredis: %q\nshoal: %q", proto, payload, have)
		}
		// The other way: built on Shoal, restored on redis-server.
		ref.Do("DEL", "t")
		got.Do("DEL", "t")
		for _, cmd := range build {
			cmd = append([]string(nil), cmd...)
			switch cmd[0] {
			case "XGROUP":
				cmd[2] = "t"
			case "XREADGROUP":
				cmd[len(cmd)-2] = "t"
			default:
				cmd[1] = "t"
			}
			if r := got.Do(cmd...); r[0] == '-' {
				t.Fatalf("shoal %q: %q", cmd, r)
			}
		}
		ours := got.Do("DUMP", "t")
		if r := ref.Do("RESTORE", "t", "0", ours[strings.Index(ours, "\r\n")+2:len(ours)-2]); r != "+OK\r\n" {
			t.Fatalf("RESTORE on redis-server: %q", r)
		}
		full[2] = "t"
		if want, have := ref.Do(full...), got.Do(full...); want != have {
			t.Errorf("resp%d XINFO STREAM FULL of Shoal's stream restored on redis:\nredis: %q\nshoal: %q", proto, want, have)
		}
	}
}

// TestStreamGroupsRestoreRefusesBadPEL: payloads whose groups Redis would
// refuse, or could not serve (a pending entry no consumer owns), are
// refused with an error, never loaded.
func TestStreamGroupsRestoreRefusesBadPEL(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	ref, got := dialFresh(t, redisAddr, 2), dialFresh(t, shoal.addr, 2)
	for _, cmd := range [][]string{{"XADD", "s", "1-1", "a", "1"}, {"XGROUP", "CREATE", "s", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}} {
		ref.Do(cmd...)
	}
	payload := ref.Do("DUMP", "s")
	body := []byte(payload[strings.Index(payload, "\r\n")+2 : len(payload)-2])
	// The consumer's one pending ID is the 16 bytes after its seen time
	// and count: change its last byte (1-1 becomes 1-2, in no PEL).
	at := strings.LastIndex(string(body), "\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01")
	if at < 0 {
		t.Fatalf("no raw ID 1-1 in %q", body)
	}
	bad := append([]byte(nil), body...)
	bad[at+15] = 2
	// RESTORE checks the payload's CRC: recompute it as DUMP would.
	if r := got.Do("RESTORE", "bad", "0", string(withDumpChecksum(t, bad))); !strings.HasPrefix(r, "-") {
		t.Errorf("RESTORE of a consumer PEL ID missing from the group's: %q", r)
	}
	if r := got.Do("EXISTS", "bad"); r != ":0\r\n" {
		t.Errorf("EXISTS after a refused RESTORE: %q", r)
	}
}

// withDumpChecksum returns a DUMP payload with its last 8 bytes, the
// CRC-64, recomputed over the rest.
func withDumpChecksum(t *testing.T, payload []byte) []byte {
	t.Helper()
	if len(payload) < 10 {
		t.Fatalf("payload of %d bytes", len(payload))
	}
	body := payload[:len(payload)-8]
	return binary.LittleEndian.AppendUint64(append([]byte(nil), body...), rdb.CRC64(body))
}

// firstDifference is the offset of the first byte where a and b differ, or
// -1 if they are equal.
func firstDifference(a, b string) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// around is s from 150 bytes before i to 150 after.
func around(s string, i int) string { return s[max(i-150, 0):min(i+150, len(s))] }

// TestStreamGroupsReachRedisReplica: a redis-server replica of a Shoal
// primary gets the groups by the full sync's snapshot (RDB type 19 with
// groups, PELs and consumers), then follows what XREADGROUP (served at
// once, and parked then served by an XADD), XCLAIM, XAUTOCLAIM, XACK and
// XGROUP do through the propagated XCLAIMs, until its groups show what
// the primary's show: the same pending entries, owners, delivery times
// and counts, consumers and last IDs.
func TestStreamGroupsReachRedisReplica(t *testing.T) {
	primary := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	c := dialRaw(t, primary.addr)
	doAll(t, c, [][]string{
		{"XADD", "s", "1-1", "a", "1"}, {"XADD", "s", "2-1", "b", "2"}, {"XGROUP", "CREATE", "s", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">"}, {"XGROUP", "CREATECONSUMER", "s", "g", "idle"},
	})
	host, port := hostPort(t, primary.addr)
	replica := dialRaw(t, startRedis(t, "--replicaof", host, port))
	same := func(what string) {
		t.Helper()
		read := func(conn *rawConn) string {
			full := seenTime.ReplaceAllString(conn.Do("XINFO", "STREAM", "s", "FULL"), "${1}:T\r\n")
			return regexp.MustCompile(`(\$(12\r\nentries-read|3\r\nlag)\r\n)(:\d+|\$-1)\r\n`).ReplaceAllString(full, "${1}N\r\n")
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			want, have := read(c), read(replica)
			if want == have {
				return
			}
			if time.Now().After(deadline) {
				i := firstDifference(want, have)
				t.Fatalf("%s: the replica's groups differ at byte %d:\nprimary: %q\nreplica: %q", what, i, around(want, i), around(have, i))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	same("after the full sync")
	blocked := dialRaw(t, primary.addr)
	blocked.Send(encodeCommand([]string{"XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">"}))
	waitForBlocked(t, c, 0) // the entry 2-1 is there: served at once
	if r := mustRead(t, blocked); !strings.Contains(r, "2-1") {
		t.Fatalf("XREADGROUP: %q", r)
	}
	blocked.Send(encodeCommand([]string{"XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">"}))
	waitForBlocked(t, c, 1)
	doAll(t, c, [][]string{{"XADD", "s", "3-1", "c", "3"}})
	if r := mustRead(t, blocked); !strings.Contains(r, "3-1") {
		t.Fatalf("the parked XREADGROUP: %q", r)
	}
	doAll(t, c, [][]string{
		{"XADD", "s", "4-1", "d", "4"}, {"XADD", "s", "5-1", "e", "5"},
		{"XREADGROUP", "GROUP", "g", "carol", "NOACK", "COUNT", "1", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"},
		{"XCLAIM", "s", "g", "dave", "0", "1-1", "RETRYCOUNT", "4", "TIME", "1600000000000"},
		{"XDEL", "s", "2-1"}, {"XAUTOCLAIM", "s", "g", "erin", "0", "-", "COUNT", "2"},
		{"XACK", "s", "g", "5-1"}, {"XGROUP", "DELCONSUMER", "s", "g", "idle"},
		{"XGROUP", "CREATE", "s", "g2", "$"}, {"XGROUP", "SETID", "s", "g", "3-1"},
	})
	same("after the propagated writes")
}
