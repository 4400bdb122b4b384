package kv_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/server"
	"github.com/shoalkv/shoal/store"
)

// startPersistentWith is startPersistent with settings given as flags.
func startPersistentWith(t *testing.T, path string, policy aof.Fsync, flags ...string) *persistentServer {
	t.Helper()
	params := config.New(config.Params())
	if err := params.ParseFlags(flag.NewFlagSet("t", flag.ContinueOnError), flags, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	st := store.New(store.Options{Shards: 16})
	h := kv.New(st, kv.Options{Params: params})
	if _, err := h.LoadAOF(path, true); err != nil {
		t.Fatal(err)
	}
	w, err := aof.Open(path, policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.AttachAOF(w, true)
	srv, err := eventloop.NewServer(server.New(h), eventloop.Options{Addr: "127.0.0.1:0", Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
			h.Close()
			_ = w.Close()
			st.Close()
		})
	}
	t.Cleanup(stop)
	return &persistentServer{addr: srv.Addr().String(), path: path, policy: policy, w: w, stop: stop}
}

// waitFor polls cond every 10 ms for up to 20 s and fails the test with
// what if it never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 20 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// delRecord is the log's record of DEL (or UNLINK) key, CRLFs as spaces.
func delRecord(name, key string) string {
	return fmt.Sprintf("*2 $%d %s $%d %s ", len(name), name, len(key), key)
}

// TestAOFLogsDeletionsOfExpiredKeys: every key Shoal deletes because its
// TTL ran out is logged as DEL, as Redis 7.0 logs it: met by a read (GET),
// by a write that then does nothing (SET XX), by a command of a
// transaction (inside its MULTI/EXEC, as Redis puts it), by the active cycle,
// and as UNLINK with lazyfree-lazy-expire yes; a write that recreates an
// expired key follows its DEL. The file then loads to the same data set.
func TestAOFLogsDeletionsOfExpiredKeys(t *testing.T) {
	s := startPersistentWith(t, filepath.Join(t.TempDir(), "appendonly.aof"), aof.FsyncAlways, "--enable-debug-command", "yes")
	c := dialRaw(t, s.addr)
	doAll(t, c, [][]string{{"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, {"SET", "keep", "1"}})
	for _, k := range []string{"read", "write", "multi", "first", "again"} {
		doAll(t, c, [][]string{{"SET", k, "old", "PX", "30"}})
	}
	waitFor(t, "the keys' TTL ran out", func() bool { return c.Do("PTTL", "again") == ":-2\r\n" })
	log := readLog(t, s.path)
	if strings.Contains(log, "DEL") {
		t.Fatalf("with the active expirer off, a DEL was logged before any key was met: %q", log)
	}
	for _, step := range [][2]string{
		{"GET read", "$-1\r\n"}, {"SET write new XX", "$-1\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET x 1", "+QUEUED\r\n"}, {"INCR multi", "+QUEUED\r\n"}, {"EXEC", "*2\r\n+OK\r\n:1\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET first new XX", "+QUEUED\r\n"}, {"SET y 1", "+QUEUED\r\n"}, {"EXEC", "*2\r\n$-1\r\n+OK\r\n"},
		{"SET again new", "+OK\r\n"},
	} {
		if got := c.Do(strings.Fields(step[0])...); got != step[1] {
			t.Fatalf("%s = %q, want %q", step[0], got, step[1])
		}
	}
	log = readLog(t, s.path)
	for _, want := range []string{
		delRecord("DEL", "read"), delRecord("DEL", "write"),
		"*1 $5 MULTI *3 $3 SET $1 x $1 1 " + delRecord("DEL", "multi"),
		"*1 $5 MULTI " + delRecord("DEL", "first") + "*3 $3 SET $1 y $1 1 *1 $4 EXEC ",
		delRecord("DEL", "again") + "*3 $3 SET $5 again $3 new ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%q", want, log)
		}
	}

	// The active cycle, back on: DEL, and UNLINK with lazyfree-lazy-expire.
	doAll(t, c, [][]string{{"SET", "active", "1", "PX", "20"}, {"DEBUG", "SET-ACTIVE-EXPIRE", "1"}})
	waitFor(t, "the active expirer logged DEL active", func() bool {
		return strings.Contains(readLog(t, s.path), delRecord("DEL", "active"))
	})
	doAll(t, c, [][]string{{"CONFIG", "SET", "lazyfree-lazy-expire", "yes"}, {"SET", "lazy", "1", "PX", "20"}})
	waitFor(t, "the active expirer logged UNLINK lazy", func() bool {
		return strings.Contains(readLog(t, s.path), delRecord("UNLINK", "lazy"))
	})
	if got := c.Do("CONFIG", "GET", "lazyfree-lazy-expire"); got != "*2\r\n$20\r\nlazyfree-lazy-expire\r\n$3\r\nyes\r\n" {
		t.Errorf("CONFIG GET lazyfree-lazy-expire = %q", got)
	}
	before := keyspace(t, s.addr)
	checkKeyspace(t, s.restart(t).addr, before, 5) // keep, x, multi, y, again
}

// TestAOFLogsEvictions: keys evicted under maxmemory are logged as DEL
// (UNLINK with lazyfree-lazy-eviction yes), so the file loads to the data
// set the server held, without the evicted keys.
func TestAOFLogsEvictions(t *testing.T) {
	for _, lazy := range []string{"no", "yes"} {
		t.Run("lazyfree-lazy-eviction="+lazy, func(t *testing.T) {
			s := startPersistentWith(t, filepath.Join(t.TempDir(), "appendonly.aof"), aof.FsyncEverySec,
				"--maxmemory-policy", "allkeys-random", "--lazyfree-lazy-eviction", lazy)
			c := dialRaw(t, s.addr)
			used := infoInt(t, c, "used_memory")
			doAll(t, c, [][]string{{"CONFIG", "SET", "maxmemory", fmt.Sprint(used + 256<<10)}})
			value := strings.Repeat("v", 1000)
			n := 0
			for ; infoInt(t, c, "evicted_keys") < 50; n++ {
				if n > 100000 {
					t.Fatal("nothing was evicted after 100000 writes of 1 KB")
				}
				doAll(t, c, [][]string{{"SET", fmt.Sprintf("k:%d", n), value}})
			}
			name := "DEL"
			if lazy == "yes" {
				name = "UNLINK"
			}
			before := keyspace(t, s.addr)
			log := s.stopAndReadLog(t)
			log = strings.ReplaceAll(log, "\r\n", " ")
			evicted := 0
			for i := 0; i < n; i++ {
				k := fmt.Sprintf("k:%d", i)
				_, kept := before[k]
				logged := strings.Contains(log, delRecord(name, k))
				if kept == logged {
					t.Fatalf("%s kept %v, its %s logged %v", k, kept, name, logged)
				}
				if logged {
					evicted++
				}
			}
			if evicted < 50 {
				t.Fatalf("%d evictions logged, want at least 50", evicted)
			}
			checkKeyspace(t, startPersistentWith(t, s.path, aof.FsyncEverySec).addr, before, len(before))
		})
	}
}

// infoInt returns an integer field of INFO.
func infoInt(t *testing.T, c *rawConn, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(c.Do("INFO"), "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			var n int64
			if _, err := fmt.Sscan(v, &n); err != nil {
				t.Fatalf("INFO %s: %q", name, v)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", name)
	return 0
}

// TestAOFExpiryUnderConcurrentWrites: clients on two loops write keys with
// TTLs of a few milliseconds, overwrite and append to them while the
// active expirer and their own reads delete them (an APPEND to a key gone
// makes one without a TTL); once every TTL has run out, the file loads to the same data set: each DEL is logged in the
// order the store applied it among the writes of its key.
func TestAOFExpiryUnderConcurrentWrites(t *testing.T) {
	s := startPersistentWith(t, filepath.Join(t.TempDir(), "appendonly.aof"), aof.FsyncEverySec, "--hz", "100")
	writeConcurrently(t, s.addr, 4, 400, func(conn, round int) [][]string {
		k := fmt.Sprintf("k:%d", round%13)
		return [][]string{
			{"SET", k, fmt.Sprint(round), "PX", fmt.Sprint(1 + round%3)},
			{"APPEND", k, "x"},
			{"GET", k},
			{"INCR", fmt.Sprintf("n:%d", round%7)},
			{"PEXPIRE", fmt.Sprintf("n:%d", round%7), fmt.Sprint(1 + round%5)},
			{"SET", fmt.Sprintf("p:%d", conn), k},
		}
	})
	time.Sleep(50 * time.Millisecond) // every TTL given was at most 5 ms
	before := keyspace(t, s.addr)
	checkKeyspace(t, s.restart(t).addr, before, len(before))
}
