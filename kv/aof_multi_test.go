package kv_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/aof"
)

// TestAOFLogsExecAsTransaction: an EXEC's writes are logged between MULTI
// and EXEC records (nothing for an EXEC without writes, a failed one or a
// discarded one), BGREWRITEAOF inside EXEC is scheduled as in Redis, and a
// replay rebuilds the keyspace.
func TestAOFLogsExecAsTransaction(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	c := dialRaw(t, s.addr)
	for _, step := range [][2]string{
		{"MULTI", "+OK\r\n"}, {"SET a 1", "+QUEUED\r\n"}, {"INCR a", "+QUEUED\r\n"}, {"SET b x NX", "+QUEUED\r\n"},
		{"INCR b", "+QUEUED\r\n"}, {"EXEC", "*4\r\n+OK\r\n:2\r\n+OK\r\n-ERR value is not an integer or out of range\r\n"},
		{"MULTI", "+OK\r\n"}, {"GET a", "+QUEUED\r\n"}, {"EXEC", "*1\r\n$1\r\n2\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET c 1", "+QUEUED\r\n"}, {"DISCARD", "+OK\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET b y NX", "+QUEUED\r\n"}, {"EXEC", "*1\r\n$-1\r\n"},
		{"MULTI", "+OK\r\n"}, {"BGREWRITEAOF", "+QUEUED\r\n"}, {"SET d 4", "+QUEUED\r\n"},
		{"EXEC", "*2\r\n+Background append only file rewriting scheduled\r\n+OK\r\n"},
	} {
		if got := c.Do(strings.Split(step[0], " ")...); got != step[1] {
			t.Fatalf("%s = %q, want %q", step[0], got, step[1])
		}
	}
	before := keyspace(t, s.addr)
	log := strings.ReplaceAll(s.stopAndReadLog(t), "\r\n", " ")
	want := "*1 $5 MULTI *3 $3 SET $1 a $1 1 *2 $4 INCR $1 a *3 $3 SET $1 b $1 x *1 $4 EXEC "
	if !strings.Contains(log, want) || strings.Count(log, "MULTI") != 2 || strings.Contains(log, "$1 c") {
		t.Fatalf("the log %q\nlacks %q or has a MULTI too many", log, want)
	}
	checkKeyspace(t, s.restart(t).addr, before, 3)
}

// TestAOFReplayOfConcurrentTransactions: clients on two loops run
// transactions on shared keys while BGREWRITEAOF runs again and again; a
// server that loads the file has the same keyspace, so no rewrite split a
// transaction and the records kept the order the writes were applied in.
func TestAOFReplayOfConcurrentTransactions(t *testing.T) {
	s := startAOF(t, aof.FsyncEverySec)
	stopRewrites := rewriteRepeatedly(t, s.addr, 3*time.Millisecond)
	var wg sync.WaitGroup
	for conn := 0; conn < 6; conn++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialRaw(t, s.addr)
			for round := 0; round < 60; round++ {
				var req []byte
				cmds := [][]string{{"MULTI"}, {"INCR", "total"}, {"APPEND", "log", fmt.Sprintf("%d.%d;", conn, round)},
					{"SET", fmt.Sprintf("own%d", conn), fmt.Sprint(round)}, {"INCRBY", "total", "2"}, {"EXEC"}}
				for _, cmd := range cmds {
					req = append(req, encodeCommand(cmd)...)
				}
				c.Send(req)
				for range cmds {
					if r, err := c.Read(); err != nil || strings.HasPrefix(r, "-") {
						t.Errorf("conn %d: %q %v", conn, r, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	stopRewrites()
	before := keyspace(t, s.addr)
	time.Sleep(50 * time.Millisecond) // let a last rewrite finish
	checkKeyspace(t, s.restart(t).addr, before, 8)
}
