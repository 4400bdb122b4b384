package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/redistest"
)

// Failover by the real redis-sentinel: a primary and two replicas watched
// by three sentinels; the primary is killed -9 under writes acknowledged
// with WAIT 1; a replica is promoted, go-redis's FailoverClient follows
// it, the other replica and then the restarted old primary replicate from
// it, and no acknowledged write is lost.

const (
	sentinelMaster     = "mymaster"
	sentinelDownAfter  = 1000 * time.Millisecond
	sentinelFailoverTO = 10 * time.Second
)

// dataNode is one data server of the failover topology: its port, its
// configuration file (which CONFIG REWRITE rewrites), the flags it was
// started with, and the running process.
type dataNode struct {
	redis bool // redis-server instead of shoal, for the reference run
	port  int
	conf  string
	args  []string
	proc  *shoalProc
}

func (n *dataNode) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

// start runs the node's server (again) on its port with its configuration
// file first and its flags, and waits until it answers PING; the cleanup
// kills it by PID.
func (n *dataNode) start(t *testing.T) {
	t.Helper()
	bin := shoalBin
	args := append([]string{n.conf, "--port", strconv.Itoa(n.port)}, n.args...)
	if !n.redis {
		args = append(args, "--repl-diskless-sync-delay", "0") // sync at once (main_test.go: startWrapped)
	}
	if n.redis {
		bin = redistest.Binary(t, "redis-server")
		args = append(args, "--bind", "127.0.0.1", "--save", "", "--daemonize", "no")
	}
	cmd := exec.Command(bin, args...)
	log := new(logtest.Log)
	cmd.Stderr, cmd.Stdout = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &shoalProc{cmd: cmd, port: n.port, stderr: log, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	n.proc = p
	if !redistest.WaitPing(n.addr(), 15*time.Second) {
		t.Fatalf("%s did not answer PING on %s; its log:\n%s", bin, n.addr(), log.String())
	}
}

// sentinelProc is one running redis-sentinel.
type sentinelProc struct {
	port int
	log  *logtest.Log
	c    *redis.SentinelClient
}

// startSentinel runs redis-sentinel with its own configuration file in a
// temporary directory, monitoring the primary at primaryPort with quorum 2.
func startSentinel(t *testing.T, bin string, primaryPort int) *sentinelProc {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
daemonize no
logfile ""
sentinel monitor %s 127.0.0.1 %d 2
sentinel down-after-milliseconds %s %d
sentinel failover-timeout %s %d
sentinel parallel-syncs %s 1
`, port, dir, sentinelMaster, primaryPort, sentinelMaster, sentinelDownAfter.Milliseconds(),
		sentinelMaster, sentinelFailoverTO.Milliseconds(), sentinelMaster)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, conf)
	log := new(logtest.Log)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if !redistest.WaitPing(addr, 10*time.Second) {
		t.Fatalf("redis-sentinel did not answer on %s; its log:\n%s", addr, log.String())
	}
	s := &sentinelProc{port: port, log: log, c: redis.NewSentinelClient(&redis.Options{Addr: addr})}
	t.Cleanup(func() { s.c.Close() })
	return s
}

func (s *sentinelProc) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// masterAddr is the primary's address as the sentinel has it now.
func (s *sentinelProc) masterAddr(ctx context.Context) string {
	a, err := s.c.GetMasterAddrByName(ctx, sentinelMaster).Result()
	if err != nil || len(a) != 2 {
		return ""
	}
	return net.JoinHostPort(a[0], a[1])
}

// roleOf returns ROLE's first element and, for a replica, its primary's
// port and link state.
func roleOf(ctx context.Context, addr string) (role string, primaryPort int64, state string) {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	v, err := c.Do(ctx, "ROLE").Slice()
	if err != nil || len(v) == 0 {
		return "", 0, ""
	}
	role, _ = v[0].(string)
	if role == "slave" && len(v) >= 4 {
		primaryPort, _ = v[2].(int64)
		state, _ = v[3].(string)
	}
	return role, primaryPort, state
}

// waitFor polls cond every 100 ms until it holds or within passes; then it
// fails with what describe says.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool, describe func() string) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < within {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v\n%s", what, within, describe())
	return 0
}

// sentinelViewProblem says what is wrong in what a sentinel parsed from
// the servers' INFO ("" for nothing): the primary's role, run id and
// replica count, each replica's flags, link, primary, priority and run id.
func sentinelViewProblem(s *sentinelProc, primaryPort int) string {
	ctx := context.Background()
	m, err := s.c.Master(ctx, sentinelMaster).Result()
	if err != nil {
		return err.Error()
	}
	if m["flags"] != "master" || m["role-reported"] != "master" || len(m["runid"]) != 40 || m["num-slaves"] != "2" {
		return fmt.Sprintf("SENTINEL MASTER: %v", m)
	}
	replicas, err := s.c.Replicas(ctx, sentinelMaster).Result()
	if err != nil {
		return err.Error()
	}
	if len(replicas) != 2 {
		return fmt.Sprintf("SENTINEL REPLICAS: %d replicas", len(replicas))
	}
	for _, r := range replicas {
		if r["flags"] != "slave" || r["role-reported"] != "slave" || r["master-link-status"] != "ok" ||
			r["master-port"] != strconv.Itoa(primaryPort) || r["slave-priority"] != "100" || len(r["runid"]) != 40 {
			return fmt.Sprintf("SENTINEL REPLICAS: %v", r)
		}
	}
	o, err := s.c.Sentinels(ctx, sentinelMaster).Result()
	if err != nil || len(o) != 2 {
		return fmt.Sprintf("SENTINEL SENTINELS: %d other sentinels (%v)", len(o), err)
	}
	return ""
}

// ackedWriter writes through a FailoverClient, each SET followed by WAIT 1;
// a write counts as acknowledged only when WAIT reported a replica.
type ackedWriter struct {
	mu      sync.Mutex
	acked   map[string]string
	ackedAt []time.Time
	errs    int
	lastErr error
	stop    chan struct{}
	done    chan struct{}
}

func startWriter(sentinels []string) (*ackedWriter, *redis.Client) {
	w := &ackedWriter{acked: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	c := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: sentinelMaster, SentinelAddrs: sentinels,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 3 * time.Second, WriteTimeout: time.Second,
		MaxRetries: -1,
	})
	go func() {
		defer close(w.done)
		ctx := context.Background()
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			key, val := "w:"+strconv.Itoa(i), strconv.Itoa(i)
			err := c.Set(ctx, key, val, 0).Err()
			var n int64
			if err == nil {
				n, err = c.Do(ctx, "WAIT", 1, 1000).Int64()
			}
			w.mu.Lock()
			if err != nil {
				w.errs++
				w.lastErr = err
			} else if n >= 1 {
				w.acked[key] = val
				w.ackedAt = append(w.ackedAt, time.Now())
			}
			w.mu.Unlock()
			if err != nil {
				time.Sleep(50 * time.Millisecond)
			} else {
				time.Sleep(2 * time.Millisecond) // a steady load, not a benchmark
			}
		}
	}()
	return w, c
}

// failures describes the failed writes, for a test's failure message.
func (w *ackedWriter) failures() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("%d writes failed, the last with %v", w.errs, w.lastErr)
}

// ackedSince counts the writes acknowledged after at.
func (w *ackedWriter) ackedSince(at time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, t := range w.ackedAt {
		if t.After(at) {
			n++
		}
	}
	return n
}

func (w *ackedWriter) halt() {
	close(w.stop)
	<-w.done
}

// TestSentinelFailover: shoal primary and replicas under redis-sentinel.
func TestSentinelFailover(t *testing.T) {
	sentinelFailover(t, false)
}

// TestSentinelFailoverRedisReference runs the same scenario on redis-server,
// the reference the shoal run is judged against.
func TestSentinelFailoverRedisReference(t *testing.T) {
	if testing.Short() {
		t.Skip("the reference run is not needed in -short mode")
	}
	sentinelFailover(t, true)
}

func sentinelFailover(t *testing.T, useRedis bool) {
	sentinelBin := redistest.Tool(t, "redis-sentinel", redistest.RequireEnv, "install redis-sentinel")
	ctx := context.Background()

	// A primary and two replicas, each started from its own config file.
	nodes := make([]*dataNode, 3)
	for i := range nodes {
		dir := t.TempDir()
		conf := filepath.Join(dir, "node.conf")
		if err := os.WriteFile(conf, []byte("dir "+dir+"\nenable-debug-command yes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		nodes[i] = &dataNode{redis: useRedis, port: freePort(t), conf: conf}
		if i > 0 {
			nodes[i].args = []string{"--replicaof", "127.0.0.1 " + strconv.Itoa(nodes[0].port)}
		}
		nodes[i].start(t)
	}
	logs := func() string {
		var b strings.Builder
		for i, n := range nodes {
			fmt.Fprintf(&b, "--- node %d (%s) log:\n%s\n", i, n.addr(), n.proc.stderr.String())
		}
		return b.String()
	}
	primary := authClient(t, nodes[0].addr(), "", 0)
	waitFor(t, 30*time.Second, "both replicas online", func() bool {
		f := infoFields(t, primary, "replication")
		return f["connected_slaves"] == "2" && strings.Contains(f["slave0"], "state=online") && strings.Contains(f["slave1"], "state=online")
	}, logs)

	// Three sentinels that find the replicas and each other.
	var sentinels []*sentinelProc
	var sentinelAddrs []string
	for range 3 {
		s := startSentinel(t, sentinelBin, nodes[0].port)
		sentinels = append(sentinels, s)
		sentinelAddrs = append(sentinelAddrs, s.addr())
	}
	sentinelLogs := func() string {
		var b strings.Builder
		for i, s := range sentinels {
			fmt.Fprintf(&b, "--- sentinel %d (%s) log:\n%s\n", i, s.addr(), s.log.String())
		}
		return b.String() + logs()
	}
	// Every sentinel sees 2 replicas and 2 other sentinels, and what it
	// parsed from the servers' INFO is right.
	problem := ""
	took := waitFor(t, 30*time.Second, "every sentinel sees the topology", func() bool {
		for _, s := range sentinels {
			if problem = sentinelViewProblem(s, nodes[0].port); problem != "" {
				return false
			}
		}
		return true
	}, func() string { return problem + "\n" + sentinelLogs() })
	t.Logf("sentinels saw the topology after %v", took.Round(time.Millisecond))

	// Writes through the FailoverClient, then the primary dies.
	w, fc := startWriter(sentinelAddrs)
	t.Cleanup(func() { fc.Close() })
	defer func() {
		select {
		case <-w.stop:
		default:
			w.halt()
		}
	}()
	waitFor(t, 10*time.Second, "writes acknowledged by WAIT 1 before the kill", func() bool {
		return w.ackedSince(time.Time{}) >= 50
	}, func() string { return w.failures() + "\n" + logs() })
	nodes[0].proc.kill(t)

	// A replica is promoted: every sentinel names it and it says master.
	// Under load Sentinel may fail over again (a PING to the new primary
	// unanswered for down-after); every later step follows whichever node
	// the sentinels name when it is checked, as a client would.
	current := func() *dataNode {
		a := sentinels[0].masterAddr(ctx)
		if a == "" {
			return nil
		}
		for _, s := range sentinels[1:] {
			if s.masterAddr(ctx) != a {
				return nil
			}
		}
		for _, n := range nodes {
			if role, _, _ := roleOf(ctx, a); n.addr() == a && role == "master" {
				return n
			}
		}
		return nil
	}
	var newPrimary *dataNode
	took = waitFor(t, 30*time.Second, "a replica promoted", func() bool {
		newPrimary = current()
		return newPrimary != nil && newPrimary != nodes[0]
	}, sentinelLogs)
	t.Logf("promoted %s %v after the kill (down-after %v)", newPrimary.addr(), took.Round(time.Millisecond), sentinelDownAfter)

	// The FailoverClient keeps writing, to the new primary.
	switched := time.Now()
	waitFor(t, 30*time.Second, "writes acknowledged after the switch", func() bool {
		return w.ackedSince(switched) >= 20
	}, func() string { return w.failures() + "\n" + sentinelLogs() })

	// replicateIt reports whether every node of live other than the
	// current primary is its connected replica, and sets newPrimary.
	replicateIt := func(live []*dataNode) bool {
		if newPrimary = current(); newPrimary == nil {
			return false
		}
		for _, n := range live {
			if n == newPrimary {
				continue
			}
			if _, port, state := roleOf(ctx, n.addr()); port != int64(newPrimary.port) || state != "connected" {
				return false
			}
		}
		return true
	}
	// The other replica follows the new primary.
	waitFor(t, 30*time.Second, "the other replica follows the new primary", func() bool {
		return replicateIt(nodes[1:])
	}, sentinelLogs)

	// The old primary comes back on its port with its old flags: Sentinel
	// makes it a replica of the new primary.
	nodes[0].start(t)
	took = waitFor(t, 40*time.Second, "the restarted old primary replicates the new one", func() bool {
		return replicateIt(nodes) && newPrimary != nodes[0]
	}, sentinelLogs)
	t.Logf("the old primary was a replica of %s %v after its restart", newPrimary.addr(), took.Round(time.Millisecond))
	if n := strings.Count(sentinels[0].log.String(), "+switch-master"); n != 1 {
		t.Logf("sentinel 0 switched masters %d times (a failover more under load)", n)
	}
	if conf, err := os.ReadFile(nodes[0].conf); err != nil || !strings.Contains(string(conf), "replicaof 127.0.0.1 "+strconv.Itoa(newPrimary.port)) {
		t.Errorf("the old primary's config file after Sentinel's CONFIG REWRITE (%v):\n%s", err, conf)
	}
	w.halt()

	// Every acknowledged write is on the new primary; the data sets agree.
	w.mu.Lock()
	acked := w.acked
	errs := w.errs
	w.mu.Unlock()
	t.Logf("%d writes acknowledged, %d failed during the failover", len(acked), errs)
	np := authClient(t, newPrimary.addr(), "", 0)
	lost := 0
	for k, v := range acked {
		if got, err := np.Get(ctx, k).Result(); err != nil || got != v {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged %s=%s: the new primary has %q (%v)", k, v, got, err)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged writes lost", lost, len(acked))
	}
	for _, n := range nodes {
		if n == newPrimary {
			continue
		}
		waitCaughtUp(t, np, authClient(t, n.addr(), "", 0), n.proc)
		compareDatasets(t, newPrimary.addr(), "", n.addr())
	}
}
