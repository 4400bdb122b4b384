package main

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/cluster"
)

// addReplica joins n to the cluster of existing as a replica of the
// primary primaryID, with redis-cli --cluster add-node --cluster-slave
// (CLUSTER MEET, then CLUSTER REPLICATE on n).
func addReplica(t *testing.T, existing, n *clusterNode, primaryID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", "--cluster", "add-node", n.addr, existing.addr,
		"--cluster-slave", "--cluster-master-id", primaryID).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[OK] New node added correctly.") {
		t.Fatalf("redis-cli --cluster add-node %s as a replica of %s: %v\n%s", n.addr, primaryID, err, out)
	}
}

// nodeLine returns the CLUSTER NODES line about id as seen from addr, ""
// if it is not there.
func nodeLine(t *testing.T, addr, id string) string {
	t.Helper()
	for _, l := range strings.Split(cli(t, addr, "CLUSTER", "NODES"), "\n") {
		if strings.HasPrefix(l, id+" ") {
			return l
		}
	}
	return ""
}

// waitNodeRole waits until every node of seers says in CLUSTER NODES that id
// is a primary (primaryOf "") or a replica of primaryOf, and not failed.
func waitNodeRole(t *testing.T, seers []*clusterNode, id, primaryOf string, all []*clusterNode) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a hang guard
	for _, n := range seers {
		for {
			f := strings.Fields(nodeLine(t, n.addr, id))
			ok := len(f) >= 4 && !strings.Contains(f[2], "fail")
			if ok && primaryOf == "" {
				ok = strings.Contains(f[2], "master") && f[3] == "-"
			} else if ok {
				ok = strings.Contains(f[2], "slave") && f[3] == primaryOf
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never saw %s as %s; CLUSTER NODES:\n%s\n%s", n.addr, id, roleWord(primaryOf),
					cli(t, n.addr, "CLUSTER", "NODES"), nodeLogs(all))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func roleWord(primaryOf string) string {
	if primaryOf == "" {
		return "a primary"
	}
	return "a replica of " + primaryOf
}

// waitSynced waits until the replica has reached the offset the primary
// had when asked (INFO replication's master_repl_offset on both), so that
// a kill of the primary loses no write acknowledged before that.
func waitSynced(t *testing.T, primary, replica string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard
	for {
		p, r := replOffset(t, primary), replOffset(t, replica)
		// At least p, not exactly: with writes going on, the replica may
		// have more by the time it is asked (on a quiet machine the two
		// readings were seldom equal, and the wait ran out).
		if p > 0 && r >= p && strings.Contains(cli(t, replica, "INFO", "replication"), "master_link_status:up") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s at offset %d never reached its primary %s's %d", replica, r, primary, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func replOffset(t *testing.T, addr string) int64 {
	t.Helper()
	for _, l := range strings.Split(cli(t, addr, "INFO", "replication"), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "master_repl_offset:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// killNode sends SIGKILL to a node: a shoal by its process, a
// redis-server by the process_id it reports.
func killNode(t *testing.T, n *clusterNode) {
	t.Helper()
	if n.shoal != nil {
		n.shoal.kill(t)
		return
	}
	pid := 0
	for _, l := range strings.Split(cli(t, n.addr, "INFO", "server"), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			pid, _ = strconv.Atoi(v)
		}
	}
	if pid <= 0 {
		t.Fatalf("no process_id from %s", n.addr)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// workload writes keys through a ClusterClient until stopped, counting the
// writes acknowledged, so that a test can see the client keep working
// through a failover and check what was acknowledged.
type workload struct {
	c       *redis.ClusterClient
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	acked   []int
	errs    atomic.Int64
	lastErr atomic.Value
}

func startWorkload(addrs []string) *workload {
	w := &workload{
		c: redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16,
			ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, DialTimeout: 2 * time.Second}),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := w.c.Set(ctx, "w:"+strconv.Itoa(i), strconv.Itoa(i), 0).Err()
			cancel()
			if err != nil {
				w.errs.Add(1)
				w.lastErr.Store(err.Error())
				time.Sleep(20 * time.Millisecond)
				continue
			}
			w.mu.Lock()
			w.acked = append(w.acked, i)
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *workload) ackedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// waitProgress waits until more writes than now are acknowledged: the
// client works (again).
func (w *workload) waitProgress(t *testing.T, more int, nodes []*clusterNode) {
	t.Helper()
	target := w.ackedCount() + more
	deadline := time.Now().Add(2 * time.Minute) // a hang guard
	for w.ackedCount() < target {
		if time.Now().After(deadline) {
			t.Fatalf("the ClusterClient made no progress: %d writes acknowledged, %d errors, last %v\n%s",
				w.ackedCount(), w.errs.Load(), w.lastErr.Load(), nodeLogs(nodes))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *workload) close() []int {
	close(w.stop)
	<-w.done
	w.c.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked
}

// slotOwners returns the ID of each slot's primary as addr sees it.
func slotOwners(t *testing.T, addr string) []string {
	t.Helper()
	owners := make([]string, cluster.Slots)
	for _, l := range strings.Split(cli(t, addr, "CLUSTER", "NODES"), "\n") {
		f := strings.Fields(l)
		if len(f) < 9 || !strings.Contains(f[2], "master") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a < 0 || b >= cluster.Slots {
				continue
			}
			for j := a; j <= b; j++ {
				owners[j] = f[0]
			}
		}
	}
	return owners
}

// TestClusterFailoverElectionMixed: primaries shoal, redis-server, shoal;
// a shoal replica of the first and a redis-server replica of the third.
// kill -9 of the first primary: its shoal replica is elected by the votes
// of a redis-server and a shoal primary. kill -9 of the third: its
// redis-server replica is elected, a shoal primary voting. The
// ClusterClient's writes resume after each, every write acknowledged
// before a kill (once replicated) reads back, and the first primary,
// restarted, rejoins as a replica of the node that replaced it.
func TestClusterFailoverElectionMixed(t *testing.T) {
	skipClusterOnGnet(t)
	primaries := []*clusterNode{startShoalNode(t, ""), startRedisNode(t), startShoalNode(t, "")}
	createCluster(t, primaries)
	waitClusterOK(t, primaries)
	ids := make([]string, 3)
	for i, n := range primaries {
		ids[i] = cli(t, n.addr, "CLUSTER", "MYID")
	}
	shoalReplica, redisReplica := startShoalNode(t, ""), startRedisNode(t)
	addReplica(t, primaries[0], shoalReplica, ids[0])
	addReplica(t, primaries[0], redisReplica, ids[2])
	all := append(append([]*clusterNode{}, primaries...), shoalReplica, redisReplica)
	shoalReplicaID, redisReplicaID := cli(t, shoalReplica.addr, "CLUSTER", "MYID"), cli(t, redisReplica.addr, "CLUSTER", "MYID")
	waitNodeRole(t, all, shoalReplicaID, ids[0], all)
	waitNodeRole(t, all, redisReplicaID, ids[2], all)
	waitClusterOK(t, all)

	addrs := []string{primaries[1].addr, shoalReplica.addr, redisReplica.addr}
	w := startWorkload(addrs)
	w.waitProgress(t, 200, all)
	before := w.ackedCount() // acknowledged before the primary's offset is read next
	waitSynced(t, primaries[0].addr, shoalReplica.addr)

	killNode(t, primaries[0])
	waitNodeRole(t, []*clusterNode{primaries[1], primaries[2], shoalReplica, redisReplica}, shoalReplicaID, "", all)
	if !strings.Contains(shoalReplica.shoal.stderr.String(), "failover election won") {
		t.Fatalf("the shoal replica was promoted without winning an election:\n%s", shoalReplica.shoal.stderr.String())
	}
	if role := cli(t, shoalReplica.addr, "ROLE"); !strings.HasPrefix(role, "master") {
		t.Fatalf("ROLE of the promoted replica: %q", role)
	}
	w.waitProgress(t, 200, all)
	alive := []*clusterNode{primaries[1], primaries[2], shoalReplica, redisReplica}
	waitClusterOKAmong(t, alive)

	// The redis-server replica of the shoal primary: a shoal primary (the
	// one just promoted) votes for it.
	waitSynced(t, primaries[2].addr, redisReplica.addr)
	killNode(t, primaries[2])
	waitNodeRole(t, []*clusterNode{primaries[1], shoalReplica, redisReplica}, redisReplicaID, "", all)
	w.waitProgress(t, 200, all)
	waitClusterOKAmong(t, []*clusterNode{primaries[1], shoalReplica, redisReplica})
	if !strings.Contains(shoalReplica.shoal.stderr.String(), "failover auth granted") {
		t.Fatalf("the promoted shoal node never voted:\n%s", shoalReplica.shoal.stderr.String())
	}

	acked := w.close()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, i := range acked[:before] {
		k := "w:" + strconv.Itoa(i)
		if v, err := c.Get(ctx, k).Result(); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("GET %s after the failovers = %q, %v (acknowledged and replicated before the kill)", k, v, err)
		}
	}

	// The first primary comes back: it learns that its slots have a new
	// owner with a greater config epoch and becomes its replica.
	old := primaries[0]
	old.shoal = restartOnPort(t, old.shoal.port, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(old.busPort),
		"--dir", old.dir, "--cluster-node-timeout", "3000")
	waitNodeRole(t, []*clusterNode{old, primaries[1], shoalReplica}, ids[0], shoalReplicaID, all)
	waitSynced(t, shoalReplica.addr, old.addr)
	conn := old.shoal.dial(t)
	defer conn.Close()
	readAfter(t, conn, "READONLY\r\n")
	checked := 0
	owners := slotOwners(t, old.addr)
	for _, i := range acked[:before] {
		k, v := "w:"+strconv.Itoa(i), strconv.Itoa(i)
		if owners[cluster.KeySlot([]byte(k))] != shoalReplicaID {
			continue
		}
		if got := readAfter(t, conn, "GET "+k+"\r\n"); got != "$"+strconv.Itoa(len(v))+"\r\n"+v+"\r\n" {
			t.Fatalf("GET %s on the old primary, now a replica: %q", k, got)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no acknowledged key fell in the slots of the promoted replica")
	}

	// Restarted again, a replica now in its nodes.conf, it replicates the
	// primary named there.
	conn.Close()
	old.shoal.terminate(t)
	old.shoal = restartOnPort(t, old.shoal.port, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(old.busPort),
		"--dir", old.dir, "--cluster-node-timeout", "3000")
	waitSynced(t, shoalReplica.addr, old.addr)
	if !strings.Contains(old.shoal.stderr.String(), "replicating my primary") {
		t.Fatalf("the restarted replica did not start replicating from nodes.conf:\n%s", old.shoal.stderr.String())
	}
}

// waitClusterOKAmong waits for cluster_state:ok on the given nodes (some
// of the cluster's nodes are down: the known-node count is not checked).
func waitClusterOKAmong(t *testing.T, nodes []*clusterNode) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a hang guard
	for _, n := range nodes {
		for !strings.Contains(cli(t, n.addr, "CLUSTER", "INFO"), "cluster_state:ok") {
			if time.Now().After(deadline) {
				t.Fatalf("%s never reached cluster_state:ok:\n%s\n%s", n.addr, cli(t, n.addr, "CLUSTER", "NODES"), nodeLogs(nodes))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// manualFailover sends CLUSTER FAILOVER [option] to the replica n and
// waits until every node in seers sees it a primary and its old primary
// its replica.
func manualFailover(t *testing.T, n *clusterNode, option string, seers, all []*clusterNode) {
	t.Helper()
	id := cli(t, n.addr, "CLUSTER", "MYID")
	f := strings.Fields(nodeLine(t, n.addr, id))
	if len(f) < 4 || f[3] == "-" {
		t.Fatalf("%s is not a replica: %v", n.addr, f)
	}
	oldPrimary := f[3]
	args := []string{"CLUSTER", "FAILOVER"}
	if option != "" {
		args = append(args, option)
	}
	if got := cli(t, n.addr, args...); got != "OK" {
		t.Fatalf("%v on %s: %q", args, n.addr, got)
	}
	waitNodeRole(t, seers, id, "", all)
	waitNodeRole(t, seers, oldPrimary, id, all)
}

// TestClusterManualFailover: CLUSTER FAILOVER between every pair of
// kinds: a shoal replica of a shoal primary, a redis-server replica of a
// shoal primary (shoal holds its writes on MFSTART and sends the paused
// offset), a shoal replica of a redis-server primary; then FORCE and
// TAKEOVER back. The ClusterClient writes all along the coordinated ones
// and no acknowledged write is lost; TAKEOVER's node takes writes as soon
// as it answered.
func TestClusterManualFailover(t *testing.T) {
	skipClusterOnGnet(t)
	primaries := []*clusterNode{startShoalNode(t, ""), startShoalNode(t, ""), startRedisNode(t)}
	createCluster(t, primaries)
	waitClusterOK(t, primaries)
	ids := make([]string, 3)
	for i, n := range primaries {
		ids[i] = cli(t, n.addr, "CLUSTER", "MYID")
	}
	replicas := []*clusterNode{startShoalNode(t, ""), startRedisNode(t), startShoalNode(t, "")}
	for i, r := range replicas {
		addReplica(t, primaries[0], r, ids[i])
	}
	all := append(append([]*clusterNode{}, primaries...), replicas...)
	for i, r := range replicas {
		waitNodeRole(t, all, cli(t, r.addr, "CLUSTER", "MYID"), ids[i], all)
	}
	waitClusterOK(t, all)

	w := startWorkload([]string{primaries[0].addr})
	w.waitProgress(t, 100, all)
	for i, r := range replicas {
		manualFailover(t, r, "", all, all)
		w.waitProgress(t, 100, all)
		if i == 1 && !strings.Contains(primaries[1].shoal.stderr.String(), "manual failover requested by replica") {
			t.Fatalf("the shoal primary did not serve the redis-server replica's MFSTART:\n%s", primaries[1].shoal.stderr.String())
		}
	}
	acked := w.close()
	checkAckedThrough(t, all, acked)

	// FORCE: the old primary of the first shard, a replica now, takes it
	// back without its primary's handshake; TAKEOVER: without an election.
	waitSynced(t, replicas[0].addr, primaries[0].addr)
	manualFailover(t, primaries[0], "FORCE", all, all)
	waitSynced(t, replicas[1].addr, primaries[1].addr)
	if got := cli(t, primaries[1].addr, "CLUSTER", "FAILOVER", "TAKEOVER"); got != "OK" {
		t.Fatalf("CLUSTER FAILOVER TAKEOVER: %q", got)
	}
	k := keyIn(5461, 10922, "")
	if got := cli(t, primaries[1].addr, "SET", k, "taken"); got != "OK" {
		t.Fatalf("SET %s on the node right after its TAKEOVER: %q", k, got)
	}
	waitNodeRole(t, all, ids[1], "", all)
	waitNodeRole(t, all, cli(t, replicas[1].addr, "CLUSTER", "MYID"), ids[1], all)
	checkAckedThrough(t, all, acked)
	waitClusterOK(t, all)
	checkCluster(t, primaries[2])
}

// checkAckedThrough reads every acknowledged write of a workload back through a
// ClusterClient.
func checkAckedThrough(t *testing.T, nodes []*clusterNode, acked []int) {
	t.Helper()
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.addr
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, i := range acked {
		k := "w:" + strconv.Itoa(i)
		if v, err := c.Get(ctx, k).Result(); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("GET %s = %q, %v: an acknowledged write is lost (%d acknowledged)", k, v, err, len(acked))
		}
	}
}
