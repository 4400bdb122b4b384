package kv_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/aof"
)

// TestAOFReplayMatchesMemory: eight connections on two loops write the same
// few keys at once (SET, INCR, APPEND, EXPIRE, DEL) under appendfsync
// always while BGREWRITEAOF runs again and again. Every connection's
// replies come back in order, and a server that loads the file ends up
// with exactly the keyspace the first one had: writes to one key were
// logged in the order the store applied them, and no rewrite lost or
// doubled a write.
func TestAOFReplayMatchesMemory(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	var wg sync.WaitGroup
	stopRewrites := rewriteRepeatedly(t, s.addr, 5*time.Millisecond)
	for conn := 0; conn < 8; conn++ {
		c := dialRaw(t, s.addr)
		nc, rd := c.C, c.Rd
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 30; round++ {
				var req []byte
				var want []string
				add := func(reply string, args ...string) {
					req = append(req, encodeCommand(args)...)
					want = append(want, reply)
				}
				for i := 0; i < 10; i++ {
					hot := fmt.Sprintf("hot%d", i%3)
					own := fmt.Sprintf("own%d", conn)
					val := fmt.Sprintf("%d-%d-%d", conn, round, i)
					add("+OK", "SET", hot, val)
					add("", "INCR", "counter")
					add("", "APPEND", "log", val+";")
					add("+OK", "SET", own, val, "EX", "1000")
					add("$"+fmt.Sprint(len(val)), "GET", own)
					add("", "EXPIRE", hot, "500")
					if i == 9 {
						add("", "DEL", fmt.Sprintf("hot%d", (round+conn)%3))
					}
				}
				if _, err := nc.Write(req); err != nil {
					t.Error(err)
					return
				}
				for j, w := range want {
					line, err := rd.ReadString('\n')
					if err != nil {
						t.Error(err)
						return
					}
					if strings.HasPrefix(line, "-") || (w != "" && strings.TrimSuffix(line, "\r\n") != w) {
						t.Errorf("conn %d reply %d: %q, want %q", conn, j, line, w)
						return
					}
					if line[0] == '$' {
						if _, err := rd.ReadString('\n'); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}
			// QUIT after pipelined writes: every reply, then the close.
			if _, err := nc.Write(append(encodeCommand([]string{"SET", "q", "1"}), encodeCommand([]string{"QUIT"})...)); err != nil {
				t.Error(err)
				return
			}
			for _, w := range []string{"+OK\r\n", "+OK\r\n"} {
				if line, err := rd.ReadString('\n'); err != nil || line != w {
					t.Errorf("conn %d around QUIT: %q %v", conn, line, err)
					return
				}
			}
			if _, err := rd.ReadByte(); err != io.EOF {
				t.Errorf("conn %d not closed after QUIT: %v", conn, err)
			}
		}()
	}
	wg.Wait()
	stopRewrites()
	before := keyspace(t, s.addr)
	info := dialRaw(t, s.addr).Do("INFO", "persistence")
	s.stop()
	if !strings.Contains(info, "aof_enabled:1") {
		t.Fatalf("INFO persistence:\n%s", info)
	}
	after := keyspace(t, s.restart(t).addr)
	if len(before) == 0 || len(after) != len(before) {
		t.Fatalf("%d keys after replay, %d before", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %q after replay, %q before", k, clip(after[k]), clip(v))
		}
	}
	t.Logf("%d keys; %s", len(before), strings.Fields(info[strings.Index(info, "aof_rewrites:"):])[0])
}

// TestAOFReadersSeeOnlyDurableValues: under appendfsync always, one
// connection pipelines SETs of ever new values while another reads the key
// over and over: every value a GET returns was already written and synced
// when the reply arrived, as with Redis, which syncs before it writes any
// reply.
func TestAOFReadersSeeOnlyDurableValues(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	w := dialRaw(t, s.addr)
	nc, rd := w.C, w.Rd
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var req []byte
			for j := 0; j < 16; j++ {
				req = append(req, encodeCommand([]string{"SET", "k", fmt.Sprintf("value-%d-%d", i, j)})...)
			}
			if _, err := nc.Write(req); err != nil {
				t.Error(err)
				return
			}
			for j := 0; j < 16; j++ {
				if _, err := rd.ReadString('\n'); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	r := dialRaw(t, s.addr)
	seen := 0
	for i := 0; i < 300; i++ {
		reply := r.Do("GET", "k")
		if !strings.HasPrefix(reply, "$") || reply == "$-1\r\n" {
			continue
		}
		durable := s.w.Durable() // the file started empty: offsets are file offsets
		val := reply[strings.Index(reply, "\r\n")+2 : len(reply)-2]
		b, err := os.ReadFile(s.path)
		if err != nil {
			t.Fatal(err)
		}
		at := bytes.Index(b, []byte("\r\n"+val+"\r\n"))
		if at < 0 || int64(at+len(val)+4) > durable {
			t.Fatalf("GET returned %q (at file offset %d) while only %d bytes were synced", val, at, durable)
		}
		seen++
	}
	close(stop)
	wg.Wait()
	if seen == 0 {
		t.Fatal("no GET saw a value")
	}
}

// TestAOFLogsExecAsTransaction: an EXEC's writes are logged between MULTI
// and EXEC records (nothing for an EXEC without writes, a failed one or a
// discarded one), BGREWRITEAOF inside EXEC is scheduled as in Redis, and a
// replay rebuilds the keyspace.
//
// The log is read before the transaction that schedules the rewrite: once
// cron has run it, the file is the rewritten one, with no MULTI at all.
// Under appendfsync always every reply before came after its records were
// synced, so the file holds them all by then.
func TestAOFLogsExecAsTransaction(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	c := dialRaw(t, s.addr)
	doSteps := func(steps [][2]string) {
		t.Helper()
		for _, step := range steps {
			if got := c.Do(strings.Split(step[0], " ")...); got != step[1] {
				t.Fatalf("%s = %q, want %q", step[0], got, step[1])
			}
		}
	}
	doSteps([][2]string{
		{"MULTI", "+OK\r\n"}, {"SET a 1", "+QUEUED\r\n"}, {"INCR a", "+QUEUED\r\n"}, {"SET b x NX", "+QUEUED\r\n"},
		{"INCR b", "+QUEUED\r\n"}, {"EXEC", "*4\r\n+OK\r\n:2\r\n+OK\r\n-ERR value is not an integer or out of range\r\n"},
		{"MULTI", "+OK\r\n"}, {"GET a", "+QUEUED\r\n"}, {"EXEC", "*1\r\n$1\r\n2\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET c 1", "+QUEUED\r\n"}, {"DISCARD", "+OK\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET b y NX", "+QUEUED\r\n"}, {"EXEC", "*1\r\n$-1\r\n"},
	})
	log := readLog(t, s.path)
	want := "*1 $5 MULTI *3 $3 SET $1 a $1 1 *2 $4 INCR $1 a *3 $3 SET $1 b $1 x *1 $4 EXEC "
	if !strings.HasSuffix(log, want) || strings.Count(log, "MULTI") != 1 || strings.Contains(log, "$1 c") {
		t.Fatalf("the log %q\nis not %q alone", log, want)
	}
	doSteps([][2]string{
		{"MULTI", "+OK\r\n"}, {"BGREWRITEAOF", "+QUEUED\r\n"}, {"SET d 4", "+QUEUED\r\n"},
		{"EXEC", "*2\r\n+Background append only file rewriting scheduled\r\n+OK\r\n"},
	})
	// Scheduled, the rewrite starts after the EXEC: its snapshot has d, and
	// no MULTI is left to follow it. A rewrite started at the BGREWRITEAOF
	// would have left the SET of d in the tail, inside a MULTI.
	s.waitRewrites(t, 1)
	log = readLog(t, s.path)
	for _, set := range []string{"*3 $3 SET $1 a $1 2 ", "*3 $3 SET $1 b $1 x ", "*3 $3 SET $1 d $1 4 "} {
		if !strings.Contains(log, set) || strings.Contains(log, "MULTI") {
			t.Fatalf("the rewritten log %q\nlacks %q or has a MULTI", log, set)
		}
	}
	before := keyspace(t, s.addr)
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
