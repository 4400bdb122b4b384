package kv_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/aof"
)

// persistentServer is a served Handler that loaded its append-only file
// when it started and logs to it. stop shuts it down; it runs once, and the
// test's cleanup runs it too.
type persistentServer struct {
	addr   string
	path   string
	policy aof.Fsync
	w      *aof.Writer
	stop   func()
}

// startAOF serves a Handler that logs to a new file in the test's
// temporary directory with the given policy.
func startAOF(t *testing.T, policy aof.Fsync) *persistentServer {
	t.Helper()
	return startPersistent(t, filepath.Join(t.TempDir(), "appendonly.aof"), policy)
}

// restart stops s and serves a new Handler that loads s's file and then
// logs to it, as a restarted server does.
func (s *persistentServer) restart(t *testing.T) *persistentServer {
	t.Helper()
	s.stop()
	return startPersistent(t, s.path, s.policy)
}

// stopAndReadLog stops s, so that every write is in the file, and returns
// the file.
func (s *persistentServer) stopAndReadLog(t *testing.T) string {
	t.Helper()
	s.stop()
	data, err := os.ReadFile(s.path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// rewriteAndWait asks c's server for a BGREWRITEAOF until one is accepted
// (one may be running already) and waits for the rewrite to finish.
func (s *persistentServer) rewriteAndWait(c *rawConn) {
	for c.Do("BGREWRITEAOF")[0] == '-' {
		time.Sleep(5 * time.Millisecond)
	}
	for s.w.RewriteStats().InProgress {
		time.Sleep(5 * time.Millisecond)
	}
}

// waitRewrites waits until s has finished n rewrites, started by cron or
// by a BGREWRITEAOF, and fails the test if that takes over 20 s.
func (s *persistentServer) waitRewrites(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for st := s.w.RewriteStats(); st.Count < n; st = s.w.RewriteStats() {
		if time.Now().After(deadline) {
			t.Fatalf("%d rewrites finished within 20 s, want %d", st.Count, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readLog returns the append-only file at path with each CRLF a space.
func readLog(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(data), "\r\n", " ")
}

func startPersistent(t *testing.T, path string, policy aof.Fsync) *persistentServer {
	t.Helper()
	return startPersistentWith(t, path, policy) // aof_expiry_test.go
}

// writeConcurrently runs conns connections to addr at once; each sends
// cmds(conn, round) for rounds rounds and a BGREWRITEAOF every 50, and
// stops at the first error reply, failing the test.
func writeConcurrently(t *testing.T, addr string, conns, rounds int, cmds func(conn, round int) [][]string) {
	var wg sync.WaitGroup
	for conn := 0; conn < conns; conn++ {
		c := dialRaw(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				for _, cmd := range cmds(conn, i) {
					if r := c.Do(cmd...); strings.HasPrefix(r, "-") {
						t.Errorf("%q: %q", cmd, r)
						return
					}
				}
				if i%50 == 0 {
					c.Do("BGREWRITEAOF")
				}
			}
		}()
	}
	wg.Wait()
}

// rewriteRepeatedly asks the server at addr for a BGREWRITEAOF every
// interval until the function it returns is called, which returns once the
// asking has stopped.
func rewriteRepeatedly(t *testing.T, addr string, interval time.Duration) (stop func()) {
	c := dialRaw(t, addr)
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-quit:
				return
			case <-time.After(interval):
				c.Do("BGREWRITEAOF")
			}
		}
	}()
	return func() {
		close(quit)
		<-stopped
	}
}

// doAll sends cmds in turn and fails the test at the first error reply.
func doAll(t *testing.T, c *rawConn, cmds [][]string) {
	t.Helper()
	for _, cmd := range cmds {
		if r := c.Do(cmd...); strings.HasPrefix(r, "-") {
			t.Fatalf("%q: %q", cmd, r)
		}
	}
}

// keyReader reads the state of keys through the protocol, one string a key.
type keyReader func(t *testing.T, addr string, keys []string) map[string]string

// checkReplay reads keys on s, restarts s from its file and fails for each
// key whose state differs after the replay. It returns the state before.
func checkReplay(t *testing.T, s *persistentServer, keys []string, read keyReader) map[string]string {
	t.Helper()
	before := read(t, s.addr, keys)
	r := s.restart(t)
	after := read(t, r.addr, keys)
	for _, k := range keys {
		if after[k] != before[k] {
			t.Errorf("%s after replay:\n%q\nbefore:\n%q", k, clip(after[k]), clip(before[k]))
		}
	}
	return before
}

// keyspace reads every key's value and expiry through the protocol.
func keyspace(t *testing.T, addr string) map[string]string {
	t.Helper()
	c := dialRaw(t, addr)
	keys := c.Do("KEYS", "*")
	m := map[string]string{}
	rd := bufio.NewReader(strings.NewReader(keys))
	_, _ = rd.ReadString('\n')
	for {
		if _, err := rd.ReadString('\n'); err != nil {
			break
		}
		k, _ := rd.ReadString('\n')
		k = strings.TrimSuffix(k, "\r\n")
		m[k] = c.Do("GET", k) + c.Do("PEXPIRETIME", k)
	}
	return m
}

// checkKeyspace fails unless the keyspace at addr, every key's value and
// expiry, is before, with want keys.
func checkKeyspace(t *testing.T, addr string, before map[string]string, want int) {
	t.Helper()
	after := keyspace(t, addr)
	if fmt.Sprint(after) != fmt.Sprint(before) || len(after) != want {
		t.Errorf("after replay %v\nbefore %v (want %d keys)", after, before, want)
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:40] + "…" + s[len(s)-40:]
	}
	return s
}
