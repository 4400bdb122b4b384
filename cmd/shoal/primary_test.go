package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
)

// Replication with shoal as the primary: the real redis-server (and a
// shoal) started as its replica gets a full sync and then the stream,
// under redis-benchmark's write load, and ends with every key of every
// database as shoal has it; a dropped link comes back with a partial
// resync; WAIT counts the replica's ACKs; a stalled replica is dropped at
// the replica class's output limit with shoal's memory bounded.

// redisReplica is a redis-server started as a replica of primaryPort.
type redisReplica struct {
	addr string
	cmd  *exec.Cmd
	dir  string
}

// startRedisReplica runs redis-server --replicaof 127.0.0.1 primaryPort on
// a free port; the cleanup kills it by its PID.
func startRedisReplica(t *testing.T, primaryPort int, extra ...string) *redisReplica {
	t.Helper()
	port, dir := freePort(t), t.TempDir()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", dir + "/log", "--enable-debug-command", "yes",
		"--replicaof", "127.0.0.1", strconv.Itoa(primaryPort)}, extra...)
	cmd := exec.Command(redistest.Binary(t, "redis-server"), args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT) // if a test stopped it
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if !redistest.WaitPing(addr, 10*time.Second) {
		t.Fatalf("redis-server did not start")
	}
	return &redisReplica{addr: addr, cmd: cmd, dir: dir}
}

// benchmarkWrites runs redis-benchmark's set, lpush, incr and hset against
// addr and returns a wait for it.
func benchmarkWrites(t *testing.T, addr string) func() {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(redistest.Binary(t, "redis-benchmark"), "-h", host, "-p", port,
		"-t", "set,lpush,incr,hset", "-n", "50000", "-P", "16", "-r", "10000", "-q")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return func() {
		if err := <-done; err != nil {
			t.Fatalf("redis-benchmark: %v\n%s", err, out.String())
		}
	}
}

// waitReplicaAcked writes a key and waits until the primary's first
// replica acknowledged it: its stream flows. (A diskless replica is listed
// online, as Redis lists it, before its first ACK starts the stream.)
func waitReplicaAcked(t *testing.T, primary *redis.Client) {
	t.Helper()
	if err := primary.Set(context.Background(), "acked-mark", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the replica acknowledged the stream", func() bool {
		pi := infoFields(t, primary, "replication")
		return strings.Contains(pi["slave0"], ",offset="+pi["master_repl_offset"]+",")
	})
}

// waitReplicaOnline waits until the primary lists n replicas online.
func waitReplicaOnline(t *testing.T, primary *redis.Client, n int) map[string]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var pi map[string]string
	for time.Now().Before(deadline) {
		pi = infoFields(t, primary, "replication")
		online := 0
		for i := 0; i < atoi(pi["connected_slaves"]); i++ {
			if strings.Contains(pi["slave"+strconv.Itoa(i)], "state=online") {
				online++
			}
		}
		if online == n {
			return pi
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%d replicas not online in 30 s: %v", n, pi)
	return nil
}

func TestRedisServerReplicatesShoal(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no-aof", nil},
		{"aof", []string{"--appendonly", "yes"}},
		{"disk-payload", []string{"--repl-diskless-sync", "no"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p := startBinary(t, append([]string{"--dir", t.TempDir(), "--enable-debug-command", "yes"}, tc.args...)...)
			primary := authClient(t, p.addr(), "", 0)
			writeTypes(t, p.addr(), "", "before")
			wait := benchmarkWrites(t, p.addr())
			r := startRedisReplica(t, p.port)
			replica := authClient(t, r.addr, "", 0)
			writeTypes(t, p.addr(), "", "during")
			wait()
			writeTypes(t, p.addr(), "", "after")
			waitCaughtUp(t, primary, replica, p)
			compareDatasets(t, p.addr(), "", r.addr)

			// ROLE, INFO and CLIENT LIST as Sentinel and clients read them.
			pi := waitReplicaOnline(t, primary, 1)
			ri := infoFields(t, replica, "replication")
			if pi["master_replid"] != ri["master_replid"] || pi["repl_backlog_active"] != "1" || pi["repl_backlog_size"] != "1048576" ||
				!strings.HasPrefix(pi["slave0"], "ip=127.0.0.1,port="+strings.Split(r.addr, ":")[1]+",state=online,offset=") {
				t.Fatalf("INFO replication of shoal %v\nof the replica %v", pi, ri)
			}
			if first, hist, off := atoi(pi["repl_backlog_first_byte_offset"]), atoi(pi["repl_backlog_histlen"]), atoi(pi["master_repl_offset"]); first+hist-1 != off || hist > 1<<20 {
				t.Fatalf("backlog from %d, %d bytes, offset %d", first, hist, off)
			}
			if n, err := primary.Do(ctx, "WAIT", "1", "2000").Int(); n != 1 {
				t.Fatalf("WAIT 1 2000 after the writes: %d %v", n, err)
			}
			role, err := primary.Do(ctx, "ROLE").Slice()
			if err != nil || len(role) != 3 || role[0] != "master" {
				t.Fatalf("ROLE: %v %v", role, err)
			}
			if list, _ := role[2].([]any); len(list) != 1 || fmt.Sprint(list[0].([]any)[:2]) != "[127.0.0.1 "+strings.Split(r.addr, ":")[1]+"]" {
				t.Fatalf("ROLE's replicas: %v", role[2])
			}
			if list := primary.ClientList(ctx).Val(); !strings.Contains(list, "flags=S ") {
				t.Fatalf("CLIENT LIST shows no replica:\n%s", list)
			}

			// The link dropped by shoal comes back with a partial resync.
			expectPartialResync(t, p.addr(), primary, replica, primary, "replica", p)
			compareDatasets(t, p.addr(), "", r.addr)
		})
	}
}

// TestShoalReplicatesShoal: a shoal replica of a shoal primary converges
// under load and continues partially after its link drops.
// expectPartialResync has killer drop the replication link (CLIENT KILL
// TYPE typ: "replica" on the primary, "master" on the replica), writes to
// the primary at addr while it is down, and checks that the link came back
// with a partial resync: the primary's sync_partial_ok went up by one,
// sync_full did not. A replica that does not catch up fails the test with
// logOf's log.
func expectPartialResync(t *testing.T, addr string, primary, replica, killer *redis.Client, typ string, logOf *shoalProc) {
	t.Helper()
	before := infoFields(t, primary, "stats")
	if n, err := killer.ClientKillByFilter(context.Background(), "TYPE", typ).Result(); n != 1 {
		t.Fatalf("CLIENT KILL TYPE %s: %d %v", typ, n, err)
	}
	writeTypes(t, addr, "", "gap")
	waitCaughtUp(t, primary, replica, logOf)
	after := infoFields(t, primary, "stats")
	if after["sync_full"] != before["sync_full"] || atoi(after["sync_partial_ok"]) != atoi(before["sync_partial_ok"])+1 {
		t.Fatalf("after the link dropped: sync_full %s → %s, sync_partial_ok %s → %s", before["sync_full"], after["sync_full"], before["sync_partial_ok"], after["sync_partial_ok"])
	}
}

func TestShoalReplicatesShoal(t *testing.T) {
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	primary := authClient(t, p.addr(), "", 0)
	writeTypes(t, p.addr(), "", "before")
	wait := benchmarkWrites(t, p.addr())
	rp := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	replica := authClient(t, rp.addr(), "", 0)
	writeTypes(t, p.addr(), "", "during")
	wait()
	writeTypes(t, p.addr(), "", "after")
	waitCaughtUp(t, primary, replica, rp)
	compareDatasets(t, p.addr(), "", rp.addr())

	expectPartialResync(t, p.addr(), primary, replica, replica, "master", rp)
	compareDatasets(t, p.addr(), "", rp.addr())
}

// TestStalledReplicaIsDropped: a replica that stops reading (SIGSTOP) is
// dropped once its pending stream passes the replica class's hard limit,
// and shoal's memory stays bounded; resumed, it syncs again in full.
func TestStalledReplicaIsDropped(t *testing.T) {
	ctx := context.Background()
	const hard = 16 << 20
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes",
		"--client-output-buffer-limit", "replica 16mb 8mb 60", "--repl-backlog-size", "1mb")
	primary := authClient(t, p.addr(), "", 0)
	writeTypes(t, p.addr(), "", "before")
	r := startRedisReplica(t, p.port)
	waitReplicaOnline(t, primary, 1)
	waitReplicaAcked(t, primary)
	base := processRSS(t, p.cmd.Process.Pid)
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// 200 MB of writes, over the same 100 keys: the data set stays small,
	// the stream does not.
	value := strings.Repeat("v", 100<<10)
	dropped := false
	for i := 0; i < 2000 && !dropped; i++ {
		if err := primary.Set(ctx, "big:"+strconv.Itoa(i%100), value, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			dropped = infoFields(t, primary, "replication")["connected_slaves"] == "0"
		}
	}
	if !dropped {
		t.Fatalf("the stalled replica was not dropped: %v", infoFields(t, primary, "replication"))
	}
	rss := processRSS(t, p.cmd.Process.Pid)
	if rss > base+4*hard+32<<20 {
		t.Fatalf("RSS %d MB with the replica stalled, %d MB before; the limit is %d MB", rss>>20, base>>20, hard>>20)
	}
	t.Logf("RSS %d MB before the stall, %d MB once the replica was dropped (limit %d MB)", base>>20, rss>>20, hard>>20)
	if !strings.Contains(p.stderr.String(), "class=replica") || !strings.Contains(p.stderr.String(), "hard limit 16777216") {
		t.Fatalf("the log does not say why the replica was dropped:\n%s", p.stderr.String())
	}
	// Resumed, the replica finds its link gone and syncs in full.
	if err := r.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	replica := authClient(t, r.addr, "", 0)
	waitCaughtUp(t, primary, replica, p)
	compareDatasets(t, p.addr(), "", r.addr)
}

// TestFullSyncWhileWritesGoOn: the snapshot of a full sync is encoded
// while redis-benchmark writes (writes copy the shards they reach first),
// and the replica still ends up with shoal's data set exactly.
func TestFullSyncWhileWritesGoOn(t *testing.T) {
	ctx := context.Background()
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	primary := authClient(t, p.addr(), "", 0)
	for _, db := range []int{0, 2} {
		c := authClient(t, p.addr(), "", db)
		for batch := 0; batch < 100; batch++ {
			args := make([]any, 0, 2000)
			for i := 0; i < 1000; i++ {
				args = append(args, "fill:"+strconv.Itoa(batch*1000+i), strconv.Itoa(i))
			}
			if err := c.MSet(ctx, args...).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	wait := benchmarkWrites(t, p.addr())
	time.Sleep(100 * time.Millisecond) // the benchmark is writing
	r := startRedisReplica(t, p.port)
	replica := authClient(t, r.addr, "", 0)
	wait()
	waitCaughtUp(t, primary, replica, p)
	compareDatasets(t, p.addr(), "", r.addr)
	m := regexp.MustCompile(`synchronization with replica succeeded.*shards_copied_by_writes=(\d+)`).FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("no full sync in the log:\n%s", p.stderr.String())
	}
	t.Logf("shards encoded by writes during the snapshot: %s", m[1])
}

// TestPrimaryInfoReplicationMatchesRedis: a primary's INFO replication,
// ROLE and CLIENT LIST line of its replica have redis-server's fields, in
// its order and formats, each with a redis-server replica attached.
func TestPrimaryInfoReplicationMatchesRedis(t *testing.T) {
	ctx := context.Background()
	redisAddr := redistest.StartServer(t)
	_, redisPort, _ := net.SplitHostPort(redisAddr)
	rp, _ := strconv.Atoi(redisPort)
	p := startBinary(t, "--dir", t.TempDir())
	type view struct {
		fields []string // INFO replication's names, and slave0's
		role   string
		flags  string
	}
	describe := func(addr string, port int) view {
		t.Helper()
		c := authClient(t, addr, "", 0)
		c.Set(ctx, "k", "v", 0)
		startRedisReplica(t, port)
		waitReplicaOnline(t, c, 1)
		if n, err := c.Do(ctx, "WAIT", "1", "5000").Int(); n != 1 {
			t.Fatalf("WAIT on %s: %d %v", addr, n, err)
		}
		info := c.Info(ctx, "replication").Val()
		var v view
		for _, line := range strings.Split(info, "\r\n") {
			k, val, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			v.fields = append(v.fields, k)
			if k == "slave0" {
				v.fields = append(v.fields, regexp.MustCompile(`=[^,]*`).ReplaceAllString(val, ""))
			}
		}
		role, _ := c.Do(ctx, "ROLE").Slice()
		v.role = regexp.MustCompile(`\d+`).ReplaceAllString(fmt.Sprintf("%T %v", role[1], role), "N")
		for _, line := range strings.Split(c.ClientList(ctx).Val(), "\n") {
			if strings.Contains(line, "flags=S") {
				v.flags = strings.Join(regexp.MustCompile(`(flags|cmd)=[^ ]*`).FindAllString(line, -1), " ")
			}
		}
		return v
	}
	want, got := describe(redisAddr, rp), describe(p.addr(), p.port)
	if fmt.Sprint(got.fields) != fmt.Sprint(want.fields) {
		t.Errorf("INFO replication fields:\nshoal %v\nredis %v", got.fields, want.fields)
	}
	if got.role != want.role {
		t.Errorf("ROLE:\nshoal %s\nredis %s", got.role, want.role)
	}
	if got.flags == "" || got.flags != want.flags {
		t.Errorf("CLIENT LIST of a replica:\nshoal %q\nredis %q", got.flags, want.flags)
	}
}
