package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/redistest"
)

// Replication with the real redis-server as the primary: shoal syncs
// from it (snapshot on disk or streamed diskless, with masterauth), under
// redis-benchmark's write load, and ends up with every key of every
// database as the primary has it; a dropped link comes back with a partial
// resync; REPLICAOF NO ONE keeps the data and makes shoal writable.

// replDBs are the databases the tests write.
var replDBs = []int{0, 1, 9}

// authClient is a go-redis client of database db at addr.
func authClient(t *testing.T, addr, pass string, db int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: pass, DB: db, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// writeTypes writes every type, with and without expiries, in replDBs;
// round tells the rounds' keys apart.
func writeTypes(t *testing.T, addr, pass, round string) {
	t.Helper()
	ctx := context.Background()
	for _, db := range replDBs {
		p := authClient(t, addr, pass, db).Pipeline()
		k := func(name string) string { return round + ":" + name }
		p.Set(ctx, k("str"), "value "+strconv.Itoa(db), 0)
		p.Set(ctx, k("int"), "12345", 0)
		p.Set(ctx, k("ttl"), "soon", time.Hour)
		p.Set(ctx, k("long"), strings.Repeat("compress me ", 300), 0)
		p.RPush(ctx, k("list"), "a", "1", "b")
		p.HSet(ctx, k("hash"), "f1", "v1", "f2", "2")
		p.SAdd(ctx, k("set"), "a", "b", "c")
		p.SAdd(ctx, k("intset"), 1, 2, 3)
		p.ZAdd(ctx, k("zset"), redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: "b"})
		for i := 0; i < 300; i++ {
			s := strconv.Itoa(i)
			p.RPush(ctx, k("list-big"), "element-"+s)
			p.HSet(ctx, k("hash-big"), "field-"+s, s)
			p.SAdd(ctx, k("set-big"), "member-"+s)
			p.ZAdd(ctx, k("zset-big"), redis.Z{Score: float64(i) / 7, Member: "m-" + s})
		}
		p.PExpire(ctx, k("zset-big"), 3*time.Hour)
		p.Incr(ctx, k("counter"))
		p.Del(ctx, k("str"))
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("writing round %s to database %d: %v", round, db, err)
		}
	}
	// A transaction and a function library: the stream carries MULTI/EXEC
	// and FUNCTION LOAD.
	c := authClient(t, addr, pass, 0)
	if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, round+":tx1", "1", 0)
		p.LPush(ctx, round+":tx2", "x")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	code := "#!lua name=lib" + strings.ReplaceAll(round, "-", "") + "\nredis.register_function('f" + strings.ReplaceAll(round, "-", "") + "', function() return 1 end)"
	if err := c.FunctionLoad(ctx, code).Err(); err != nil {
		t.Fatal(err)
	}
}

// infoFields parses one INFO section into its fields.
func infoFields(t *testing.T, c *redis.Client, section string) map[string]string {
	t.Helper()
	s, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// waitCaughtUp waits until the replica's link is up and it applied the
// primary's whole stream.
func waitCaughtUp(t *testing.T, primary, replica *redis.Client, p0 *shoalProc) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var p, r map[string]string
	proc := p0
	for time.Now().Before(deadline) {
		p, r = infoFields(t, primary, "replication"), infoFields(t, replica, "replication")
		if r["master_link_status"] == "up" && r["slave_repl_offset"] == p["master_repl_offset"] {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the replica did not catch up in 60 s:\nprimary %v\nreplica %v\nits log:\n%s", p, r, proc.stderr.String())
}

// compareDatasets compares every key of every database: type, value
// (DEBUG DIGEST-VALUE) and TTL within a second, then the whole data set
// (DEBUG DIGEST, which covers the expiries exactly).
func compareDatasets(t *testing.T, primaryAddr, pass, replicaAddr string) {
	t.Helper()
	ctx := context.Background()
	total := 0
	for db := 0; db < 16; db++ {
		pc, rc := authClient(t, primaryAddr, pass, db), authClient(t, replicaAddr, "", db)
		pn, rn := pc.DBSize(ctx).Val(), rc.DBSize(ctx).Val()
		if pn != rn {
			t.Errorf("database %d: %d keys on the primary, %d on the replica", db, pn, rn)
		}
		var keys []string
		iter := pc.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		total += len(keys)
		for len(keys) > 0 {
			batch := keys[:min(500, len(keys))]
			keys = keys[len(batch):]
			describe := func(c *redis.Client) []string {
				p := c.Pipeline()
				var cmds []redis.Cmder
				for _, k := range batch {
					cmds = append(cmds, p.Type(ctx, k), p.PTTL(ctx, k), p.Do(ctx, "DEBUG", "DIGEST-VALUE", k))
				}
				if _, err := p.Exec(ctx); err != nil {
					t.Fatalf("describing keys: %v", err)
				}
				out := make([]string, len(cmds))
				for i, c := range cmds {
					switch c := c.(type) {
					case *redis.StatusCmd:
						out[i] = c.Val()
					case *redis.DurationCmd:
						out[i] = strconv.FormatInt(c.Val().Milliseconds(), 10)
					case *redis.Cmd:
						out[i] = fmt.Sprint(c.Val())
					}
				}
				return out
			}
			pd, rd := describe(pc), describe(rc)
			for i := range pd {
				key := batch[i/3]
				if i%3 == 1 {
					a, _ := strconv.ParseInt(pd[i], 10, 64)
					b, _ := strconv.ParseInt(rd[i], 10, 64)
					if (a < 0) != (b < 0) || a-b > 1000 || b-a > 1000 {
						t.Errorf("database %d key %q: TTL %s ms on the primary, %s ms on the replica", db, key, pd[i], rd[i])
					}
					continue
				}
				if pd[i] != rd[i] {
					t.Errorf("database %d key %q: %q on the primary, %q on the replica", db, key, pd[i], rd[i])
				}
			}
		}
	}
	if total < 40 {
		t.Fatalf("only %d keys compared", total)
	}
	pd, rd := datasetDigest(t, primaryAddr, pass), datasetDigest(t, replicaAddr, "")
	if pd != rd {
		t.Errorf("DEBUG DIGEST: primary %s, replica %s", pd, rd)
	}
	pf, _ := authClient(t, primaryAddr, pass, 0).FunctionList(ctx, redis.FunctionListQuery{}).Result()
	rf, _ := authClient(t, replicaAddr, "", 0).FunctionList(ctx, redis.FunctionListQuery{}).Result()
	if len(pf) != len(rf) {
		t.Errorf("%d function libraries on the primary, %d on the replica", len(pf), len(rf))
	}
}

// datasetDigest returns DEBUG DIGEST of the server at addr, waiting as
// long as a loaded machine may need for it.
func datasetDigest(t *testing.T, addr, pass string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: pass, MaxRetries: -1, ReadTimeout: time.Minute})
	defer c.Close()
	d, err := c.Do(context.Background(), "DEBUG", "DIGEST").Text()
	if err != nil {
		t.Fatalf("DEBUG DIGEST of %s: %v", addr, err)
	}
	return d
}

// benchmark runs redis-benchmark's writes against addr and returns a
// wait for it.
func benchmark(t *testing.T, addr, pass string) func() {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	args := []string{"-h", host, "-p", port, "-t", "set,lpush,incr", "-n", "50000", "-P", "16", "-r", "20000", "-q"}
	if pass != "" {
		args = append(args, "-a", pass)
	}
	cmd := exec.Command(redistest.Binary(t, "redis-benchmark"), args...)
	done := make(chan error, 1)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	return func() {
		if err := <-done; err != nil {
			t.Fatalf("redis-benchmark: %v\n%s", err, out.String())
		}
	}
}

func TestReplicaOfRedisServer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		primary   []string
		pass      string
		byCommand bool // REPLICAOF at run time, else --replicaof at startup
	}{
		{"disk-masterauth", []string{"--repl-diskless-sync", "no", "--requirepass", "s3cret"}, "s3cret", true},
		{"diskless", []string{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			primaryAddr := redistest.StartServer(t, append([]string{"--enable-debug-command", "yes"}, tc.primary...)...)
			_, primaryPort, _ := net.SplitHostPort(primaryAddr)
			primary := authClient(t, primaryAddr, tc.pass, 0)
			writeTypes(t, primaryAddr, tc.pass, "before")

			args := []string{"--dir", t.TempDir(), "--enable-debug-command", "yes"}
			if tc.pass != "" {
				args = append(args, "--masterauth", tc.pass)
			}
			wait := benchmark(t, primaryAddr, tc.pass)
			if !tc.byCommand {
				args = append(args, "--replicaof", "127.0.0.1 "+primaryPort)
			}
			p := startBinary(t, args...)
			replica := authClient(t, p.addr(), "", 0)
			if tc.byCommand {
				if r, err := replica.Do(ctx, "REPLICAOF", "127.0.0.1", primaryPort).Text(); r != "OK" {
					t.Fatalf("REPLICAOF: %q %v", r, err)
				}
			}
			writeTypes(t, primaryAddr, tc.pass, "during")
			wait()
			writeTypes(t, primaryAddr, tc.pass, "after")
			waitCaughtUp(t, primary, replica, p)
			compareDatasets(t, primaryAddr, tc.pass, p.addr())

			// ROLE and INFO as clients parse them.
			role, err := replica.Do(ctx, "ROLE").Slice()
			if err != nil || len(role) != 5 || role[0] != "slave" || role[1] != "127.0.0.1" || fmt.Sprint(role[2]) != primaryPort || role[3] != "connected" {
				t.Fatalf("ROLE: %v %v", role, err)
			}
			pi, ri := infoFields(t, primary, "replication"), infoFields(t, replica, "replication")
			if ri["role"] != "slave" || ri["master_host"] != "127.0.0.1" || ri["master_port"] != primaryPort ||
				ri["master_replid"] != pi["master_replid"] || ri["master_repl_offset"] != pi["master_repl_offset"] ||
				fmt.Sprint(role[4]) != ri["slave_repl_offset"] || ri["slave_read_only"] != "1" || ri["master_sync_in_progress"] != "0" {
				t.Fatalf("INFO replication of the replica %v\nof the primary %v\nROLE %v", ri, pi, role)
			}
			if n, _ := strconv.Atoi(ri["master_last_io_seconds_ago"]); n < 0 || n > 11 { // the primary PINGs every 10 s
				t.Fatalf("master_last_io_seconds_ago %q", ri["master_last_io_seconds_ago"])
			}
			if pi["connected_slaves"] != "1" || !strings.Contains(pi["slave0"], "port="+strconv.Itoa(p.port)) {
				t.Fatalf("the primary does not list the replica with its port: %v", pi)
			}
			if err := replica.Set(ctx, "k", "v", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
				t.Fatalf("a client's SET on the replica: %v", err)
			}

			// A dropped link resyncs partially: the primary counts a
			// partial sync and no full one.
			before := infoFields(t, primary, "stats")
			killer, kind := primary, "replica" // the primary drops its replica
			if !tc.byCommand {
				killer, kind = replica, "master" // the replica drops its primary
				if list := replica.ClientList(ctx).Val(); !strings.Contains(list, "addr="+primaryAddr) {
					t.Fatalf("CLIENT LIST of the replica does not show the primary at %s:\n%s", primaryAddr, list)
				}
			}
			if n, err := killer.ClientKillByFilter(ctx, "TYPE", kind).Result(); n != 1 {
				t.Fatalf("CLIENT KILL TYPE %s: %d %v", kind, n, err)
			}
			// (Less than the primary's 1 MB backlog, so that it can
			// continue the stream.)
			writeTypes(t, primaryAddr, tc.pass, "gap")
			waitCaughtUp(t, primary, replica, p)
			after := infoFields(t, primary, "stats")
			if after["sync_full"] != before["sync_full"] || atoi(after["sync_partial_ok"]) != atoi(before["sync_partial_ok"])+1 {
				t.Fatalf("after the link dropped: sync_full %s → %s, sync_partial_ok %s → %s", before["sync_full"], after["sync_full"], before["sync_partial_ok"], after["sync_partial_ok"])
			}
			if !strings.Contains(p.stderr.String(), "partial resynchronization accepted") {
				t.Fatalf("the log does not say the resync was partial:\n%s", p.stderr.String())
			}
			compareDatasets(t, primaryAddr, tc.pass, p.addr())

			// Promoted, it keeps the data and takes writes.
			want, _ := primary.Do(ctx, "DEBUG", "DIGEST").Text()
			if r, err := replica.Do(ctx, "REPLICAOF", "NO", "ONE").Text(); r != "OK" {
				t.Fatalf("REPLICAOF NO ONE: %q %v", r, err)
			}
			if got, _ := replica.Do(ctx, "DEBUG", "DIGEST").Text(); got != want {
				t.Fatalf("after REPLICAOF NO ONE the digest is %s, the primary's %s", got, want)
			}
			if err := replica.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatalf("SET after REPLICAOF NO ONE: %v", err)
			}
			role, _ = replica.Do(ctx, "ROLE").Slice()
			if len(role) != 3 || role[0] != "master" {
				t.Fatalf("ROLE after REPLICAOF NO ONE: %v", role)
			}
			ri = infoFields(t, replica, "replication")
			if ri["role"] != "master" || ri["master_replid2"] != pi["master_replid"] || ri["master_replid"] == pi["master_replid"] {
				t.Fatalf("INFO replication after REPLICAOF NO ONE: %v", ri)
			}
		})
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// fakePrimary accepts replicas and runs the handshake, then serve writes
// what it likes after +FULLRESYNC and closes.
func fakePrimary(t *testing.T, serve func(w *bufio.Writer)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r, w := bufio.NewReader(c), bufio.NewWriter(c)
				for {
					args, err := readCommand(r)
					if err != nil {
						return
					}
					switch strings.ToUpper(args[0]) {
					case "PING":
						w.WriteString("+PONG\r\n")
					case "PSYNC":
						w.WriteString("+FULLRESYNC " + strings.Repeat("ab", 20) + " 100\r\n")
						serve(w)
						w.Flush()
						return
					default:
						w.WriteString("+OK\r\n")
					}
					w.Flush()
				}
			}()
		}
	}()
	return l.Addr().String()
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		if _, err := r.ReadString('\n'); err != nil {
			return nil, err
		}
		s, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args[i] = strings.TrimRight(s, "\r\n")
	}
	return args, nil
}

// TestReplicaKeepsItsDataWhenTheSyncFails: a primary that goes away in
// the middle of the snapshot, or sends one that does not load, leaves the
// replica's data set as it was, and the log says why.
func TestReplicaKeepsItsDataWhenTheSyncFails(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		serve     func(w *bufio.Writer)
	}{
		{"cut-short", "broke off", func(w *bufio.Writer) { w.WriteString("$100000\r\nREDIS0010 only the start") }},
		{"cut-short-diskless", "broke off", func(w *bufio.Writer) {
			w.WriteString("$EOF:" + strings.Repeat("7", 40) + "\r\nREDIS0010 only the start")
		}},
		{"corrupt", "does not load", func(w *bufio.Writer) { w.WriteString("$20\r\nREDIS0010\xfe\x00garbage!!") }},
		{"garbage-header", "bad payload header", func(w *bufio.Writer) { w.WriteString("hello\r\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			_, port, _ := net.SplitHostPort(fakePrimary(t, tc.serve))
			p := startBinary(t, "--dir", t.TempDir())
			c := authClient(t, p.addr(), "", 0)
			c.Set(ctx, "kept", "yes", 0)
			if err := c.Do(ctx, "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(p.stderr.String(), tc.log) {
				if time.Now().After(deadline) {
					t.Fatalf("no %q in the log:\n%s", tc.log, p.stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if v, err := c.Get(ctx, "kept").Result(); v != "yes" {
				t.Fatalf("after the failed sync: GET kept = %q, %v", v, err)
			}
			if st := infoFields(t, c, "replication")["master_link_status"]; st != "down" {
				t.Fatalf("master_link_status %q", st)
			}
			if !regexp.MustCompile(`retrying`).MatchString(p.stderr.String()) {
				t.Fatalf("the replica does not say it retries:\n%s", p.stderr.String())
			}
		})
	}
}

// TestReplicaReportsASyncInProgress: while the snapshot arrives, ROLE says
// sync and INFO replication has Redis's master_sync_* fields.
func TestReplicaReportsASyncInProgress(t *testing.T) {
	ctx := context.Background()
	hold := make(chan struct{})
	_, port, _ := net.SplitHostPort(fakePrimary(t, func(w *bufio.Writer) {
		w.WriteString("\n\n$1000\r\nREDIS0010" + strings.Repeat("x", 241))
		w.Flush()
		<-hold
	}))
	t.Cleanup(func() { close(hold) })
	p := startBinary(t, "--dir", t.TempDir())
	c := authClient(t, p.addr(), "", 0)
	if err := c.Do(ctx, "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info := infoFields(t, c, "replication")
		if info["master_sync_read_bytes"] == "250" {
			want := map[string]string{"master_sync_in_progress": "1", "master_sync_total_bytes": "1000",
				"master_sync_left_bytes": "750", "master_sync_perc": "25.00", "master_link_status": "down"}
			for k, v := range want {
				if info[k] != v {
					t.Errorf("%s: %q, want %q", k, info[k], v)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO replication while syncing: %v", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	role, _ := c.Do(ctx, "ROLE").Slice()
	if len(role) != 5 || role[3] != "sync" || role[4] != int64(-1) {
		t.Fatalf("ROLE while syncing: %v", role)
	}
}

// TestReplicaOfFromTheConfigFile: a configuration file's "replicaof host
// port" and masterauth lines make shoal a replica at startup, CONFIG GET
// reports them, and WAIT on the primary counts the replica: its REPLCONF
// ACKs carry the offset the primary expects.
func TestReplicaOfFromTheConfigFile(t *testing.T) {
	ctx := context.Background()
	primaryAddr := redistest.StartServer(t, "--enable-debug-command", "yes", "--requirepass", "pw", "--repl-diskless-sync-delay", "0")
	_, primaryPort, _ := net.SplitHostPort(primaryAddr)
	primary := authClient(t, primaryAddr, "pw", 0)
	writeTypes(t, primaryAddr, "pw", "before")
	dir := t.TempDir()
	conf := filepath.Join(dir, "shoal.conf")
	port := freePort(t)
	text := "port " + strconv.Itoa(port) + "\nreplicaof 127.0.0.1 " + primaryPort + "\nmasterauth pw\nenable-debug-command yes\ndir " + dir + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shoalBin, conf)
	p := &shoalProc{cmd: cmd, port: port, stderr: new(logtest.Log), done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.done })
	if !redistest.WaitPing(p.addr(), 10*time.Second) {
		t.Fatalf("shoal did not start on %s:\n%s", text, p.stderr.String())
	}
	replica := authClient(t, p.addr(), "", 0)
	waitCaughtUp(t, primary, replica, p)
	if got := replica.ConfigGet(ctx, "replicaof").Val()["replicaof"]; got != "127.0.0.1 "+primaryPort {
		t.Fatalf("CONFIG GET replicaof: %q", got)
	}
	for i := 0; i < 20; i++ {
		primary.Set(ctx, "w"+strconv.Itoa(i), i, 0)
		if n, err := primary.Do(ctx, "WAIT", 1, 5000).Int(); n != 1 {
			t.Fatalf("WAIT 1 after write %d: %d %v (the replica's ACK did not reach the offset)", i, n, err)
		}
	}
	compareDatasets(t, primaryAddr, "pw", p.addr())
	// Without a save policy the sync leaves no file behind, neither the
	// temporary one nor a dump.rdb the next start would load.
	if left, _ := filepath.Glob(filepath.Join(dir, "*.rdb")); len(left) != 0 {
		t.Fatalf("files left in dir: %v", left)
	}
}

// TestReplicaFollowsAPromotedReplica: after a failover (a redis-server
// replica of the same primary is promoted), REPLICAOF the new primary
// continues with a partial resync: it answers +CONTINUE with its new ID,
// which shoal takes as master_replid, the old one as master_replid2.
func TestReplicaFollowsAPromotedReplica(t *testing.T) {
	ctx := context.Background()
	aAddr := redistest.StartServer(t, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	_, aPort, _ := net.SplitHostPort(aAddr)
	bAddr := redistest.StartServer(t, "--enable-debug-command", "yes", "--replicaof", "127.0.0.1", aPort)
	_, bPort, _ := net.SplitHostPort(bAddr)
	a, b := authClient(t, aAddr, "", 0), authClient(t, bAddr, "", 0)
	writeTypes(t, aAddr, "", "before")
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir, "--save", "3600 1", "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+aPort)
	replica := authClient(t, p.addr(), "", 0)
	waitCaughtUp(t, a, replica, p)
	// With a save policy the primary's snapshot is kept as dump.rdb, as
	// Redis keeps it.
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatalf("no dump.rdb after the sync with a save policy: %v", err)
	}
	waitCaughtUp(t, a, b, p)
	oldID := infoFields(t, a, "replication")["master_replid"]

	if err := b.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := replica.Do(ctx, "REPLICAOF", "127.0.0.1", bPort).Err(); err != nil {
		t.Fatal(err)
	}
	writeTypes(t, bAddr, "", "after")
	waitCaughtUp(t, b, replica, p)
	st := infoFields(t, b, "stats")
	if st["sync_partial_ok"] != "1" || st["sync_full"] != "0" {
		t.Fatalf("the promoted primary counts sync_full %s, sync_partial_ok %s; want a partial resync", st["sync_full"], st["sync_partial_ok"])
	}
	bi, ri := infoFields(t, b, "replication"), infoFields(t, replica, "replication")
	if ri["master_replid"] != bi["master_replid"] || ri["master_replid2"] != oldID || ri["second_repl_offset"] != bi["second_repl_offset"] {
		t.Fatalf("after +CONTINUE with a new ID: replica %v\nnew primary %v\nold ID %s", ri, bi, oldID)
	}
	compareDatasets(t, bAddr, "", p.addr())
}

// TestReplicaWithAppendOnlyFileRestartsWithTheData: a replica with
// appendonly yes logs what the sync loaded (a rewrite after the load, as
// Redis restarts its AOF) and what the stream applied, so that, restarted
// without replicaof, it serves the primary's data set.
func TestReplicaWithAppendOnlyFileRestartsWithTheData(t *testing.T) {
	ctx := context.Background()
	primaryAddr := redistest.StartServer(t, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	_, primaryPort, _ := net.SplitHostPort(primaryAddr)
	primary := authClient(t, primaryAddr, "", 0)
	writeTypes(t, primaryAddr, "", "before")
	dir := t.TempDir()
	args := []string{"--dir", dir, "--appendonly", "yes", "--enable-debug-command", "yes"}
	p := startBinary(t, append(args, "--replicaof", "127.0.0.1 "+primaryPort)...)
	replica := authClient(t, p.addr(), "", 0)
	waitCaughtUp(t, primary, replica, p)
	writeTypes(t, primaryAddr, "", "after")
	waitCaughtUp(t, primary, replica, p)
	deadline := time.Now().Add(30 * time.Second)
	for persistenceField(t, replica, "aof_rewrite_in_progress") != "0" || persistenceField(t, replica, "aof_rewrites") == "0" {
		if time.Now().After(deadline) {
			t.Fatalf("no AOF rewrite after the sync:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	want, _ := primary.Do(ctx, "DEBUG", "DIGEST").Text()
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	again := startBinary(t, args...)
	if got, _ := authClient(t, again.addr(), "", 0).Do(ctx, "DEBUG", "DIGEST").Text(); got != want {
		t.Fatalf("restarted from its append-only file the replica's digest is %s, the primary's %s\n%s", got, want, again.stderr.String())
	}
}

// TestReplicaWithAWrongMasterauth: a primary that refuses the password
// keeps the link down and the log says why; CONFIG SET masterauth with the
// right one lets the next attempt sync.
func TestReplicaWithAWrongMasterauth(t *testing.T) {
	ctx := context.Background()
	primaryAddr := redistest.StartServer(t, "--enable-debug-command", "yes", "--requirepass", "right", "--repl-diskless-sync-delay", "0")
	_, primaryPort, _ := net.SplitHostPort(primaryAddr)
	primary := authClient(t, primaryAddr, "right", 0)
	writeTypes(t, primaryAddr, "right", "before")
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--masterauth", "wrong", "--replicaof", "127.0.0.1 "+primaryPort)
	replica := authClient(t, p.addr(), "", 0)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), "unable to AUTH to the primary: -WRONGPASS") {
		if time.Now().After(deadline) {
			t.Fatalf("no AUTH failure in the log:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := infoFields(t, replica, "replication")["master_link_status"]; st != "down" {
		t.Fatalf("master_link_status %q with a wrong password", st)
	}
	if err := replica.ConfigSet(ctx, "masterauth", "right").Err(); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, primary, replica, p)
	compareDatasets(t, primaryAddr, "right", p.addr())
}

// TestReplicaOfNoOneDuringASync: promoted while its link is in the middle
// of a sync, shoal stays a writable primary whatever the stopped link does
// after.
func TestReplicaOfNoOneDuringASync(t *testing.T) {
	ctx := context.Background()
	hold := make(chan struct{})
	_, port, _ := net.SplitHostPort(fakePrimary(t, func(w *bufio.Writer) {
		w.WriteString("$1000\r\nREDIS0010")
		w.Flush()
		<-hold
		w.WriteString(strings.Repeat("x", 991)) // the rest, after the promotion
	}))
	p := startBinary(t, "--dir", t.TempDir())
	c := authClient(t, p.addr(), "", 0)
	if err := c.Do(ctx, "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for infoFields(t, c, "replication")["master_sync_in_progress"] != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("no sync in progress:\n%s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	close(hold)
	time.Sleep(300 * time.Millisecond)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET after REPLICAOF NO ONE: %v", err)
	}
	if role, _ := c.Do(ctx, "ROLE").Slice(); len(role) != 3 || role[0] != "master" {
		t.Fatalf("ROLE: %v", role)
	}
	if info := infoFields(t, c, "replication"); info["role"] != "master" || info["master_sync_in_progress"] != "" {
		t.Fatalf("INFO replication: %v", info)
	}
}

// TestReplicaDropsAPrimaryThatSendsGarbage: after a good snapshot, a
// stream that is not RESP drops the link with the reason in the log; what
// the snapshot and the good commands before the garbage brought stays.
func TestReplicaDropsAPrimaryThatSendsGarbage(t *testing.T) {
	ctx := context.Background()
	source := redistest.StartServer(t)
	writeTypes(t, source, "", "snap")
	host, port, _ := net.SplitHostPort(source)
	file := filepath.Join(t.TempDir(), "source.rdb")
	if out, err := exec.Command(redistest.Binary(t, "redis-cli"), "-h", host, "-p", port, "--rdb", file).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --rdb: %v\n%s", err, out)
	}
	snapshot, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, fakePort, _ := net.SplitHostPort(fakePrimary(t, func(w *bufio.Writer) {
		w.WriteString("$" + strconv.Itoa(len(snapshot)) + "\r\n")
		w.Write(snapshot)
		w.WriteString("*3\r\n$3\r\nSET\r\n$4\r\ngood\r\n$1\r\n1\r\n")
		w.WriteString("*1\r\n$x\r\n")
	}))
	p := startBinary(t, "--dir", t.TempDir())
	c := authClient(t, p.addr(), "", 0)
	if err := c.Do(ctx, "REPLICAOF", "127.0.0.1", fakePort).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), "protocol error in the primary's stream") {
		if time.Now().After(deadline) {
			t.Fatalf("no protocol error in the log:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v := c.Get(ctx, "good").Val(); v != "1" {
		t.Fatalf("the command before the garbage: GET good = %q", v)
	}
	if v := c.LRange(ctx, "snap:list", 0, -1).Val(); strings.Join(v, ",") != "a,1,b" {
		t.Fatalf("the snapshot's list: %q", v)
	}
}

// TestReplicaLogsThePrimarysWritesItRefuses: with replica-ignore-maxmemory
// no, past maxmemory (noeviction) the store refuses the primary's writes
// too; the log says so, with the reply.
func TestReplicaLogsThePrimarysWritesItRefuses(t *testing.T) {
	ctx := context.Background()
	primaryAddr := redistest.StartServer(t, "--repl-diskless-sync-delay", "0")
	_, primaryPort, _ := net.SplitHostPort(primaryAddr)
	primary := authClient(t, primaryAddr, "", 0)
	p := startBinary(t, "--dir", t.TempDir(), "--maxmemory", "2mb", "--replica-ignore-maxmemory", "no", "--replicaof", "127.0.0.1 "+primaryPort)
	replica := authClient(t, p.addr(), "", 0)
	waitCaughtUp(t, primary, replica, p)
	pipe := primary.Pipeline()
	for i := 0; i < 20000; i++ {
		pipe.Set(ctx, "k"+strconv.Itoa(i), strings.Repeat("x", 200), 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, primary, replica, p)
	log := p.stderr.String()
	if !strings.Contains(log, "commands from the primary answered errors") || !strings.Contains(log, "OOM command not allowed") {
		t.Fatalf("no refused write in the log:\n%s", log)
	}
}

// TestShoalReplicaOfShoal: the same with a shoal as the primary (its
// primary side, kv/primary*.go): every key compared after a sync under
// redis-benchmark load, and a link dropped by CLIENT KILL TYPE master
// comes back with a partial resync.
func TestShoalReplicaOfShoal(t *testing.T) {
	ctx := context.Background()
	primaryProc := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes")
	primaryAddr := primaryProc.addr()
	primary := authClient(t, primaryAddr, "", 0)
	writeTypes(t, primaryAddr, "", "before")
	wait := benchmark(t, primaryAddr, "")
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(primaryProc.port))
	replica := authClient(t, p.addr(), "", 0)
	writeTypes(t, primaryAddr, "", "during")
	wait()
	waitCaughtUp(t, primary, replica, p)
	compareDatasets(t, primaryAddr, "", p.addr())

	before := infoFields(t, primary, "stats")
	if n, err := replica.ClientKillByFilter(ctx, "TYPE", "master").Result(); n != 1 {
		t.Fatalf("CLIENT KILL TYPE master: %d %v", n, err)
	}
	writeTypes(t, primaryAddr, "", "gap")
	waitCaughtUp(t, primary, replica, p)
	after := infoFields(t, primary, "stats")
	if after["sync_full"] != before["sync_full"] || atoi(after["sync_partial_ok"]) != atoi(before["sync_partial_ok"])+1 {
		t.Fatalf("after the link dropped: sync_full %s → %s, sync_partial_ok %s → %s", before["sync_full"], after["sync_full"], before["sync_partial_ok"], after["sync_partial_ok"])
	}
	compareDatasets(t, primaryAddr, "", p.addr())
}
