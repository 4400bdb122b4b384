package kv_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/aof"
)

// streamKeyspace reads each stream key through the protocol: its type,
// length and entries.
func streamKeyspace(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	c := dialRaw(t, addr)
	m := map[string]string{}
	for _, k := range keys {
		m[k] = c.Do("TYPE", k) + c.Do("XLEN", k) + c.Do("XRANGE", k, "-", "+")
	}
	return m
}

// TestAOFStreamReplay: concurrent XADDs with generated IDs and
// approximate trims, deletes, exact trims and XSETID, with rewrites in
// between; the log holds the IDs XADD generated and the trims as the exact
// ones they came to, and a server that loads it has the same streams.
func TestAOFStreamReplay(t *testing.T) {
	s := startAOF(t, aof.FsyncEverySec)
	keys := []string{"st0", "st1", "st2", "ex0", "ex1", "ex2", "ex3", "capped", "minid", "emptied"}
	writeConcurrently(t, s.addr, 4, 120, func(conn, i int) [][]string {
		k := fmt.Sprintf("st%d", (conn+i)%3)
		return [][]string{
			{"XADD", k, "*", "conn", fmt.Sprint(conn), "i", fmt.Sprint(i)},
			{"XADD", "capped", "MAXLEN", "~", "50", "*", "f", strings.Repeat("v", i%30)},
			{"XADD", "minid", "MINID", "~", "0", "LIMIT", "10", "*", "f", "v"},
			{"XADD", fmt.Sprintf("ex%d", conn), fmt.Sprintf("%d-*", i/2), "n", fmt.Sprint(i)},
			{"XTRIM", "capped", "MAXLEN", "=", "80"},
			{"XDEL", fmt.Sprintf("ex%d", conn), fmt.Sprintf("%d-%d", max(i-5, 0)/2, max(i-5, 0)%2)},
		}
	})
	c := dialRaw(t, s.addr)
	s.rewriteAndWait(c)
	doAll(t, c, [][]string{
		{"XADD", "emptied", "1-1", "f", "v"}, {"XADD", "emptied", "2-1", "f", "v"}, {"XDEL", "emptied", "1-1", "2-1"},
		{"XSETID", "emptied", "5-5", "ENTRIESADDED", "9", "MAXDELETEDID", "2-1"},
		{"XADD", "capped", "MAXLEN", "~", "10", "*", "last", "1"}, {"XTRIM", "minid", "MINID", "~", "1", "LIMIT", "3"},
	})
	before := checkReplay(t, s, keys, streamKeyspace)
	if !strings.HasPrefix(before["emptied"], "+stream\r\n:0\r\n") {
		t.Errorf("emptied before the restart: %q", before["emptied"])
	}
	// The file after the rewrite: no generated ID or approximate trim left.
	log := s.restart(t).stopAndReadLog(t)
	for _, bad := range []string{"$1\r\n*\r\n", "$1\r\n~\r\n", "-*\r\n"} {
		if strings.Contains(log, bad) {
			t.Errorf("the log holds %q", bad)
		}
	}
	if !strings.Contains(log, "$1\r\n=\r\n") || !strings.Contains(log, "XSETID") {
		t.Errorf("the log lacks the rewritten trims or XSETID: %.300q", log)
	}
}
