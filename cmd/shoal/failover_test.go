package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/proto/resp"
)

// FAILOVER (Redis 7.0's coordinated failover, kv/failover.go): the primary
// holds its writes, waits for a replica to acknowledge the whole stream,
// becomes its replica and asks it with PSYNC FAILOVER to take over; the
// replica continues the old primary with +CONTINUE. Shoal → Shoal, Shoal
// → redis-server and redis-server → Shoal, each under a pipelined write
// load whose acknowledged writes must all be on the new primary.

// failoverLoad is what the writers of a load were told: every SET
// acknowledged, and how many writes met a replica (-READONLY) after the
// switch.
type failoverLoad struct {
	mu       sync.Mutex
	acked    map[string]string
	readOnly int
	stop     chan struct{}
	wg       sync.WaitGroup
}

// startFailoverLoad runs conns connections to addr, each pipelining depth
// SETs at a time and recording each +OK, until a reply other than +OK
// (the -READONLY of a demoted primary), the connection's end, or stop.
func startFailoverLoad(addr string, conns, depth int) *failoverLoad {
	l := &failoverLoad{acked: map[string]string{}, stop: make(chan struct{})}
	for c := 0; c < conns; c++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer nc.Close()
			rd := bufio.NewReader(nc)
			for batch := 0; ; batch++ {
				select {
				case <-l.stop:
					return
				default:
				}
				var req []byte
				keys := make([]string, depth)
				for i := range keys {
					keys[i] = fmt.Sprintf("fo:%d:%d:%d", c, batch, i)
					req = append(req, resp.AppendCommand(nil, "SET", keys[i], "v"+keys[i])...)
				}
				if _, err := nc.Write(req); err != nil {
					return
				}
				for _, k := range keys {
					line, err := rd.ReadString('\n')
					if err != nil {
						return
					}
					l.mu.Lock()
					switch {
					case line == "+OK\r\n":
						l.acked[k] = "v" + k
					case strings.HasPrefix(line, "-READONLY"):
						l.readOnly++
					default:
						l.mu.Unlock()
						panic(fmt.Sprintf("unexpected reply %q", line))
					}
					l.mu.Unlock()
				}
				l.mu.Lock()
				done := l.readOnly > 0
				l.mu.Unlock()
				if done {
					return
				}
			}
		}()
	}
	return l
}

// waitAcked waits until the load has n writes acknowledged.
func (l *failoverLoad) waitAcked(t *testing.T, n int) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d writes acknowledged", n), func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.acked) >= n
	})
}

// end stops the writers and waits for them.
func (l *failoverLoad) end() {
	close(l.stop)
	l.wg.Wait()
}

// checkOn asserts that every acknowledged SET is on the server at addr.
func (l *failoverLoad) checkOn(t *testing.T, addr string) {
	t.Helper()
	ctx := context.Background()
	c := client(t, addr)
	keys := make([]string, 0, len(l.acked))
	for k := range l.acked {
		keys = append(keys, k)
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		vals, err := c.MGet(ctx, keys[:n]...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if v != l.acked[keys[i]] {
				t.Fatalf("acknowledged SET %s lost in the failover: got %v on the new primary", keys[i], v)
			}
		}
		keys = keys[n:]
	}
}

// waitRole waits until c's INFO replication says role (and, for a slave,
// that its link to the primary at port is up) with no failover running.
func waitRole(t *testing.T, who string, c *redis.Client, role string, port int) map[string]string {
	t.Helper()
	var info map[string]string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		info = replInfo(t, c)
		if info["role"] == role && info["master_failover_state"] == "no-failover" &&
			(role == "master" || info["master_port"] == strconv.Itoa(port) && info["master_link_status"] == "up") {
			return info
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s is not %s (of port %d) within 60 s: %v", who, role, port, info)
	return nil
}

// failoverUnderLoad runs FAILOVER on the primary at primaryAddr while a
// write load runs, and returns the load once the primary is a replica of
// the server at newPort.
func failoverUnderLoad(t *testing.T, primaryAddr string, newPort int, args ...any) *failoverLoad {
	t.Helper()
	primary := client(t, primaryAddr)
	load := startFailoverLoad(primaryAddr, 4, 16)
	load.waitAcked(t, 2000)
	if err := primary.Do(context.Background(), append([]any{"FAILOVER"}, args...)...).Err(); err != nil {
		t.Fatalf("FAILOVER: %v", err)
	}
	waitRole(t, "the old primary", primary, "slave", newPort)
	load.end()
	if load.readOnly == 0 {
		t.Fatal("no write met the demoted primary's -READONLY: the load did not run through the failover")
	}
	return load
}

// TestFailoverShoalToShoal: a Shoal primary with two Shoal replicas hands
// over to the one that catches up first; every write it acknowledged is
// on the new primary, which continued it (sync_partial_ok, no full sync),
// and the other replica follows the old primary, now a replica itself.
func TestFailoverShoalToShoal(t *testing.T) {
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	a := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	b := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	primary, ac, bc := client(t, p.addr()), client(t, a.addr()), client(t, b.addr())
	waitReplicaOnline(t, primary, 2)

	// Which replica wins is a race: look at both after the switch.
	load := startFailoverLoad(p.addr(), 4, 16)
	load.waitAcked(t, 2000)
	if got := do(primary, "FAILOVER"); got != "OK" {
		t.Fatalf("FAILOVER: %s", got)
	}
	var winner, other *shoalProc
	var wc, oc *redis.Client
	waitUntil(t, "a replica promoted", func() bool {
		switch {
		case replInfo(t, ac)["role"] == "master":
			winner, other, wc, oc = a, b, ac, bc
		case replInfo(t, bc)["role"] == "master":
			winner, other, wc, oc = b, a, bc, ac
		}
		return winner != nil
	})
	waitRole(t, "the old primary", primary, "slave", winner.port)
	load.end()
	if load.readOnly == 0 {
		t.Fatal("no write met the demoted primary's -READONLY")
	}
	load.checkOn(t, winner.addr())
	expectSyncs(t, "the new primary", wc, 0, 1)
	if !strings.Contains(p.stderr.String(), "Failover target is synced, failing over") {
		t.Fatalf("the old primary's log does not tell the switch:\n%s", p.stderr.String())
	}

	// The other replica comes back to the old primary (a replica now,
	// as Redis's) and everything converges.
	waitRole(t, "the other replica", oc, "slave", p.port)
	waitCaughtUp(t, wc, primary, p)
	waitCaughtUp(t, primary, oc, other)
	compareDatasets(t, winner.addr(), "", p.addr())
	compareDatasets(t, winner.addr(), "", other.addr())
}

// TestFailoverWaitTimeoutAbortForce: with its only replica stopped
// (SIGSTOP) and behind, a FAILOVER waits (waiting-for-sync, writes held,
// reads served, REPLICAOF and a second FAILOVER refused) until FAILOVER
// ABORT, which lets the held write through; with TIMEOUT it gives up by
// itself; with TIMEOUT and FORCE it hands over anyway once the replica
// runs again.
func TestFailoverWaitTimeoutAbortForce(t *testing.T) {
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	b := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	primary, bc := client(t, p.addr()), client(t, b.addr())
	waitReplicaOnline(t, primary, 1)
	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	t.Cleanup(func() {
		if stopped {
			_ = syscall.Kill(b.cmd.Process.Pid, syscall.SIGCONT)
		}
	})
	if got := do(primary, "SET", "behind", "1"); got != "OK" {
		t.Fatal(got)
	}

	if got := do(primary, "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(b.port+1)); got != "error: ERR FAILOVER target HOST and PORT is not a replica." {
		t.Fatalf("FAILOVER to a port no replica has: %s", got)
	}
	if got := do(primary, "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(b.port), "TIMEOUT", "600000"); got != "OK" {
		t.Fatalf("FAILOVER: %s", got)
	}
	if st := replInfo(t, primary)["master_failover_state"]; st != "waiting-for-sync" {
		t.Fatalf("master_failover_state %q while the replica is stopped", st)
	}
	held := make(chan string, 1)
	writer := client(t, p.addr())
	go func() { held <- do(writer, "SET", "held", "1") }()
	if got := do(primary, "GET", "behind"); got != "1" {
		t.Fatalf("a read during the failover: %s", got)
	}
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"REPLICAOF", "127.0.0.1", "1"}, "error: ERR REPLICAOF not allowed while failing over."},
		{[]any{"FAILOVER"}, "error: ERR FAILOVER already in progress."},
	} {
		if got := do(primary, tc.args...); got != tc.want {
			t.Fatalf("%v during the failover: %s, want %s", tc.args, got, tc.want)
		}
	}
	// A later CLIENT UNPAUSE does not end a failover's hold, as Redis.
	if got := do(primary, "CLIENT", "UNPAUSE"); got != "OK" {
		t.Fatal(got)
	}
	select {
	case got := <-held:
		t.Fatalf("a write answered %q while the failover held writes", got)
	case <-time.After(300 * time.Millisecond):
	}
	if got := do(primary, "FAILOVER", "ABORT"); got != "OK" {
		t.Fatalf("FAILOVER ABORT: %s", got)
	}
	if got := <-held; got != "OK" {
		t.Fatalf("the held write after ABORT: %s", got)
	}
	if info := replInfo(t, primary); info["role"] != "master" || info["master_failover_state"] != "no-failover" {
		t.Fatalf("after ABORT: %v", info)
	}

	// TIMEOUT without FORCE: abandoned.
	if got := do(primary, "FAILOVER", "TIMEOUT", "200"); got != "OK" {
		t.Fatalf("FAILOVER TIMEOUT: %s", got)
	}
	waitUntil(t, "the failover abandoned at its timeout", func() bool {
		return strings.Contains(p.stderr.String(), "Replica never caught up before timeout")
	})
	if info := replInfo(t, primary); info["role"] != "master" || info["master_failover_state"] != "no-failover" {
		t.Fatalf("after the timeout: %v", info)
	}
	if got := do(primary, "SET", "after-timeout", "1"); got != "OK" {
		t.Fatalf("a write after the timeout: %s", got)
	}

	// TIMEOUT and FORCE: the replica, behind, is made primary anyway.
	if got := do(primary, "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(b.port), "TIMEOUT", "200", "FORCE"); got != "OK" {
		t.Fatalf("FAILOVER FORCE: %s", got)
	}
	waitUntil(t, "the forced switch", func() bool {
		return replInfo(t, primary)["master_failover_state"] == "failover-in-progress"
	})
	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	waitRole(t, "the old primary", primary, "slave", b.port)
	if role := replInfo(t, bc)["role"]; role != "master" {
		t.Fatalf("the forced target is %s", role)
	}
	if !strings.Contains(p.stderr.String(), "time out exceeded, failing over") {
		t.Fatalf("the log does not tell the forced switch:\n%s", p.stderr.String())
	}
	waitCaughtUp(t, bc, primary, p)
	if got, want := datasetDigest(t, p.addr(), ""), datasetDigest(t, b.addr(), ""); got != want {
		t.Fatalf("the old primary's data set (digest %s) differs from the new one's (%s)", got, want)
	}
}

// TestFailoverShoalToRedisServer: Shoal's FAILOVER promotes a redis-server
// replica, which continues Shoal's history with +CONTINUE.
func TestFailoverShoalToRedisServer(t *testing.T) {
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	r := startRedisReplica(t, p.port)
	primary, rc := client(t, p.addr()), client(t, r.addr)
	waitReplicaOnline(t, primary, 1)
	_, rport, _ := net.SplitHostPort(r.addr)
	load := failoverUnderLoad(t, p.addr(), atoi(rport), "TO", "127.0.0.1", rport)
	if info := replInfo(t, rc); info["role"] != "master" {
		t.Fatalf("redis-server after the failover: %v", info)
	}
	load.checkOn(t, r.addr)
	expectSyncs(t, "redis-server", rc, 0, 1)
	waitCaughtUp(t, rc, primary, p)
	compareDatasets(t, r.addr, "", p.addr())
}

// TestFailoverRedisServerToShoal: redis-server's FAILOVER promotes a Shoal
// replica: Shoal takes PSYNC <id> <offset> FAILOVER as REPLICAOF NO ONE
// and continues redis-server with +CONTINUE and its new ID.
func TestFailoverRedisServerToShoal(t *testing.T) {
	raddr := redistest.StartServer(t, "--enable-debug-command", "yes")
	_, rport, _ := net.SplitHostPort(raddr)
	s := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+rport)
	rc, sc := client(t, raddr), client(t, s.addr())
	waitReplicaOnline(t, rc, 1)
	load := failoverUnderLoad(t, raddr, s.port)
	info := replInfo(t, sc)
	if info["role"] != "master" || info["master_replid2"] != replInfo(t, rc)["master_replid2"] {
		t.Fatalf("shoal after the failover: %v\nredis-server: %v", info, replInfo(t, rc))
	}
	load.checkOn(t, s.addr())
	expectSyncs(t, "shoal", sc, 0, 1)
	if !strings.Contains(s.stderr.String(), "MASTER MODE enabled (failover request)") {
		t.Fatalf("shoal's log does not tell the failover request:\n%s", s.stderr.String())
	}
	waitCaughtUp(t, sc, rc, s)
	compareDatasets(t, s.addr(), "", raddr)
}

// TestFailoverRefusedInClusterMode: a cluster-enabled node refuses every
// form of FAILOVER, ABORT and bad syntax included, with redis-server's
// error (CLUSTER FAILOVER is the way there).
func TestFailoverRefusedInClusterMode(t *testing.T) {
	skipClusterOnGnet(t)
	ours, ref := client(t, startShoalNode(t, "").addr), client(t, startRedisNode(t).addr)
	for _, args := range [][]any{{"FAILOVER"}, {"FAILOVER", "ABORT"}, {"FAILOVER", "TO", "127.0.0.1", "1"},
		{"FAILOVER", "TIMEOUT", "-1"}, {"FAILOVER", "BOGUS"}} {
		want, got := do(ref, args...), do(ours, args...)
		if !strings.Contains(want, "FAILOVER not allowed in cluster mode") || got != want {
			t.Errorf("%v: shoal %q, redis-server %q", args, got, want)
		}
	}
}

// TestFailoverHoldsExpiry: while a FAILOVER waits for its stopped replica
// (SIGSTOP), the primary's writes are held and so is expiry, as Redis
// keeps the data set static during the pause: a key whose TTL ran out
// reads as missing but stays counted until FAILOVER ABORT, after which it
// is deleted. redis-server as the primary is the reference, run first.
func TestFailoverHoldsExpiry(t *testing.T) {
	for _, primaryKind := range []string{"redis-server", "shoal"} {
		t.Run(primaryKind, func(t *testing.T) {
			var addr string
			var port int
			if primaryKind == "shoal" {
				p := startBinary(t, "--dir", t.TempDir())
				addr, port = p.addr(), p.port
			} else {
				addr = redistest.StartServer(t)
				_, ps, _ := net.SplitHostPort(addr)
				port, _ = strconv.Atoi(ps)
			}
			b := startRedisReplica(t, port)
			primary := client(t, addr)
			waitReplicaOnline(t, primary, 1)
			if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(b.cmd.Process.Pid, syscall.SIGCONT) })
			if got := do(primary, "SET", "soon", "1", "PX", "100"); got != "OK" {
				t.Fatal(got)
			}
			if got := do(primary, "FAILOVER"); got != "OK" {
				t.Fatalf("FAILOVER: %s", got)
			}
			waitUntil(t, "the key's TTL run out", func() bool { return do(primary, "PTTL", "soon") == "-2" })
			time.Sleep(600 * time.Millisecond) // five active expiry cycles (hz 10)
			if got, st := do(primary, "DBSIZE"), replInfo(t, primary)["master_failover_state"]; got != "1" || st != "waiting-for-sync" {
				t.Fatalf("during the failover's wait (%s): DBSIZE %s, want the expired key still counted", st, got)
			}
			if got := do(primary, "FAILOVER", "ABORT"); got != "OK" {
				t.Fatalf("FAILOVER ABORT: %s", got)
			}
			waitUntil(t, "the expired key deleted after the failover", func() bool { return do(primary, "DBSIZE") == "0" })
		})
	}
}
