package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/cluster"
	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/redistest"
)

// clusterNode is one node of a test cluster: a shoal binary or a
// redis-server, both cluster-enabled with an explicit bus port (port +
// 10000 may be past 65535 for the kernel's free ports).
type clusterNode struct {
	addr    string
	busPort int
	shoal   *shoalProc // nil for a redis-server
	dir     string
}

func skipClusterOnGnet(t *testing.T) {
	if os.Getenv("SHOAL_ENGINE") == "gnet" {
		t.Skip("cluster-enabled needs the native engine: the bus is a second listener, which the gnet engine cannot serve")
	}
}

// startShoalNode runs a cluster-enabled shoal in its own directory
// (nodes.conf lives there).
func startShoalNode(t *testing.T, dir string, extra ...string) *clusterNode {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	bus := freePort(t)
	args := append([]string{"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus), "--dir", dir,
		"--cluster-node-timeout", "3000"}, extra...)
	p := startBinary(t, args...)
	return &clusterNode{addr: p.addr(), busPort: bus, shoal: p, dir: dir}
}

func startRedisNode(t *testing.T) *clusterNode {
	t.Helper()
	bus := freePort(t)
	addr := redistest.StartServer(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus), "--cluster-node-timeout", "3000")
	return &clusterNode{addr: addr, busPort: bus}
}

// createCluster runs redis-cli --cluster create over the nodes and checks
// that it reports every slot covered and the nodes agreeing.
func createCluster(t *testing.T, nodes []*clusterNode, extra ...string) {
	t.Helper()
	args := []string{"--cluster", "create"}
	for _, n := range nodes {
		args = append(args, n.addr)
	}
	args = append(append(args, extra...), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[OK] All nodes agree about slots configuration.") ||
		!strings.Contains(string(out), "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli --cluster create: %v\n%s\n%s", err, out, nodeLogs(nodes))
	}
}

func nodeLogs(nodes []*clusterNode) string {
	var b strings.Builder
	for _, n := range nodes {
		if n.shoal != nil {
			fmt.Fprintf(&b, "--- shoal %s:\n%s\n", n.addr, n.shoal.stderr.String())
		}
	}
	return b.String()
}

func cli(t *testing.T, addr string, args ...string) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// waitClusterOK waits until every node says cluster_state:ok and knows
// every other node: the state turns OK after gossip, in wall-clock time
// that depends on the machine's load, so this waits for the outcome with
// a generous hang guard.
func waitClusterOK(t *testing.T, nodes []*clusterNode) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for _, n := range nodes {
		for {
			info := cli(t, n.addr, "CLUSTER", "INFO")
			if strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(nodes))+"\r") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never reached cluster_state:ok with %d nodes:\n%s\n%s", n.addr, len(nodes), info, nodeLogs(nodes))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func checkCluster(t *testing.T, n *clusterNode) {
	t.Helper()
	out, err := exec.Command("redis-cli", "--cluster", "check", n.addr).CombinedOutput()
	if err != nil || strings.Contains(string(out), "[ERR]") || strings.Contains(string(out), "[WARNING]") ||
		!strings.Contains(string(out), "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli --cluster check %s: %v\n%s", n.addr, err, out)
	}
}

// readWriteThrough writes and reads keys over every slot range with
// go-redis's ClusterClient, which follows CLUSTER SLOTS and MOVED.
func readWriteThrough(t *testing.T, nodes []*clusterNode, keys int) {
	t.Helper()
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.addr
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	slotsSeen := map[int]bool{}
	for i := range keys {
		k := "key:" + strconv.Itoa(i)
		slotsSeen[cluster.KeySlot([]byte(k))/(cluster.Slots/len(nodes)+1)] = true
		if err := c.Set(ctx, k, "value:"+strconv.Itoa(i), 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	for i := range keys {
		k := "key:" + strconv.Itoa(i)
		v, err := c.Get(ctx, k).Result()
		if err != nil || v != "value:"+strconv.Itoa(i) {
			t.Fatalf("GET %s = %q, %v", k, v, err)
		}
	}
	if len(slotsSeen) != len(nodes) {
		t.Fatalf("the keys fell in %d of the %d nodes' slot ranges", len(slotsSeen), len(nodes))
	}
	total := 0
	for _, n := range nodes {
		got, _ := strconv.Atoi(cli(t, n.addr, "DBSIZE"))
		if got == 0 {
			t.Errorf("%s holds no key: the writes did not spread", n.addr)
		}
		total += got
	}
	if total != keys {
		t.Fatalf("the nodes hold %d keys in all, %d were written", total, keys)
	}
}

// TestClusterCreateWithRedisCLI: three shoal nodes form a cluster with
// redis-cli --cluster create (ADDSLOTS, SET-CONFIG-EPOCH, MEET to the first
// node only, then gossip until all agree); --cluster check is clean; a
// ClusterClient reads and writes across every node; a node answers MOVED
// for a key it does not serve and redis-cli -c follows it.
func TestClusterCreateWithRedisCLI(t *testing.T) {
	skipClusterOnGnet(t)
	nodes := []*clusterNode{startShoalNode(t, ""), startShoalNode(t, ""), startShoalNode(t, "")}
	for _, n := range nodes {
		if info := cli(t, n.addr, "INFO", "cluster"); !strings.Contains(info, "cluster_enabled:1") {
			t.Fatalf("INFO cluster: %q", info)
		}
	}
	createCluster(t, nodes)
	waitClusterOK(t, nodes)
	checkCluster(t, nodes[1])
	readWriteThrough(t, nodes, 300)

	// "foo" is slot 12182, the third node's; the first answers MOVED.
	c, err := net.Dial("tcp", nodes[0].addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "SET foo bar\r\nMSET a 1 b 2\r\n")
	buf := make([]byte, 512)
	want := "-MOVED 12182 " + nodes[2].addr + "\r\n-CROSSSLOT Keys in request don't hash to the same slot\r\n"
	got := ""
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for len(got) < len(want) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("read: %v after %q", err, got)
		}
		got += string(buf[:n])
	}
	if got != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
	if out := cli(t, nodes[0].addr, "-c", "SET", "foo", "bar"); out != "OK" {
		t.Fatalf("redis-cli -c SET foo: %q", out)
	}
	if out := cli(t, nodes[2].addr, "GET", "foo"); out != "bar" {
		t.Fatalf("GET foo on its owner: %q", out)
	}
}

// TestClusterMixedWithRedisServer: shoal nodes and redis-server 7.0 nodes
// form one cluster over the same bus, which each side's messages must
// pass the other's checks for.
func TestClusterMixedWithRedisServer(t *testing.T) {
	skipClusterOnGnet(t)
	nodes := []*clusterNode{startShoalNode(t, ""), startRedisNode(t), startShoalNode(t, ""), startRedisNode(t)}
	createCluster(t, nodes)
	waitClusterOK(t, nodes)
	checkCluster(t, nodes[1]) // redis-server's view
	checkCluster(t, nodes[2]) // shoal's
	readWriteThrough(t, nodes, 400)
}

// TestClusterRestartKeepsNodesConf: a node stopped and started again in
// the same directory reads nodes.conf: same ID, same slots, and it rejoins.
func TestClusterRestartKeepsNodesConf(t *testing.T) {
	skipClusterOnGnet(t)
	nodes := []*clusterNode{startShoalNode(t, ""), startShoalNode(t, ""), startShoalNode(t, "")}
	createCluster(t, nodes)
	waitClusterOK(t, nodes)
	id := cli(t, nodes[1].addr, "CLUSTER", "MYID")
	conf, err := os.ReadFile(nodes[1].dir + "/nodes.conf")
	if err != nil || !strings.Contains(string(conf), id+" 127.0.0.1:") || !strings.Contains(string(conf), "vars currentEpoch 3 lastVoteEpoch 0") {
		t.Fatalf("nodes.conf: %v\n%s", err, conf)
	}
	nodes[1].shoal.terminate(t)
	nodes[1].shoal = restartOnPort(t, nodes[1].shoal.port, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(nodes[1].busPort),
		"--dir", nodes[1].dir, "--cluster-node-timeout", "3000")
	if got := cli(t, nodes[1].addr, "CLUSTER", "MYID"); got != id {
		t.Fatalf("after a restart the node is %s, was %s", got, id)
	}
	waitClusterOK(t, nodes)
	checkCluster(t, nodes[0])
}

// restartOnPort runs the binary again on the port a stopped one had.
func restartOnPort(t *testing.T, port int, args ...string) *shoalProc {
	t.Helper()
	cmd := exec.Command(shoalBin, append([]string{"--port", strconv.Itoa(port)}, args...)...)
	stderr := new(logtest.Log)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &shoalProc{cmd: cmd, port: port, stderr: stderr, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	if !redistest.WaitPing(p.addr(), 30*time.Second) {
		t.Fatalf("shoal did not start again on port %d; stderr:\n%s", port, stderr.String())
	}
	return p
}

// TestClusterBusDropsBadInput: garbage, a bad signature, a truncated
// message and a message whose length does not fit its gossip count reach
// the bus port; each is dropped with a log line, and the node serves on.
func TestClusterBusDropsBadInput(t *testing.T) {
	skipClusterOnGnet(t)
	n := startShoalNode(t, "")
	bus := net.JoinHostPort("127.0.0.1", strconv.Itoa(n.busPort))
	send := func(b []byte, closeAfter bool) net.Conn {
		c, err := net.Dial("tcp", bus)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		if closeAfter {
			c.Close()
		}
		return c
	}
	// Garbage: the link is closed by the node.
	c := send([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), false)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Read(make([]byte, 16)); err == nil {
		t.Fatal("the node answered garbage on its bus port instead of closing the link")
	}
	waitLog(t, n, "Bad message length or signature received from Cluster bus")

	// A PING that claims 9 gossip entries and carries none.
	msg := make([]byte, 2256)
	copy(msg, "RCmb")
	putU32(msg[4:], 2256)
	msg[9] = 1  // version 1
	msg[15] = 9 // count
	send(msg, false)
	waitLog(t, n, "cluster bus: dropping a bad message")

	// Truncated: a header announcing 4000 bytes, 100 sent, then closed.
	trunc := make([]byte, 100)
	copy(trunc, "RCmb")
	putU32(trunc[4:], 4000)
	send(trunc, true)

	if got := cli(t, n.addr, "CLUSTER", "INFO"); !strings.Contains(got, "cluster_known_nodes:1\r") {
		t.Fatalf("after bad input CLUSTER INFO says:\n%s", got)
	}
	if got := cli(t, n.addr, "PING"); got != "PONG" {
		t.Fatalf("PING: %q", got)
	}
}

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// waitLog waits until the node's log has text (a hang guard, not a timing).
func waitLog(t *testing.T, n *clusterNode, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(n.shoal.stderr.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line %q; stderr:\n%s", text, n.shoal.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterCommandRepliesMatchRedis sends the same CLUSTER commands,
// errors included, to a fresh redis-server node and a fresh shoal node
// and compares the replies byte for byte.
func TestClusterCommandRepliesMatchRedis(t *testing.T) {
	skipClusterOnGnet(t)
	r, s := startRedisNode(t), startShoalNode(t, "")
	cases := [][]string{
		{"CLUSTER", "KEYSLOT", "{user1000}.following"},
		{"CLUSTER", "KEYSLOT", "somekey"},
		{"CLUSTER", "COUNTKEYSINSLOT", "16384"},
		{"CLUSTER", "COUNTKEYSINSLOT", "x"},
		{"CLUSTER", "COUNTKEYSINSLOT", "7"},
		{"CLUSTER", "GETKEYSINSLOT", "7", "-1"},
		{"CLUSTER", "GETKEYSINSLOT", "7", "10"},
		{"CLUSTER", "ADDSLOTS", "16384"},
		{"CLUSTER", "ADDSLOTS", "1", "1"},
		{"CLUSTER", "ADDSLOTSRANGE", "5", "1"},
		{"CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"},
		{"CLUSTER", "ADDSLOTSRANGE", "0", "99"},
		{"CLUSTER", "ADDSLOTS", "50"},
		{"SPUBLISH", "ch13", "m"}, // slot 80, served though the cluster is down
		{"GET", "ch13"},
		{"CLUSTER", "DELSLOTS", "200"},
		{"CLUSTER", "DELSLOTSRANGE", "90", "99"},
		{"CLUSTER", "SETSLOT", "5", "MIGRATING", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "SETSLOT", "500", "MIGRATING", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "SETSLOT", "5", "IMPORTING", "x"},
		{"CLUSTER", "SETSLOT", "5", "NODE", "x"},
		{"CLUSTER", "SETSLOT", "5", "BOGUS"},
		{"CLUSTER", "SETSLOT", "5", "STABLE"},
		{"CLUSTER", "SETSLOT", "x", "STABLE"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "-1"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "5"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "6"},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "FORGET", "x"},
		{"CLUSTER", "REPLICATE", "x"},
		{"CLUSTER", "REPLICAS", "x"},
		{"CLUSTER", "COUNT-FAILURE-REPORTS", "x"},
		{"CLUSTER", "MEET", "nohost", "7000"},
		{"CLUSTER", "MEET", "127.0.0.1", "x"},
		{"CLUSTER", "MEET", "127.0.0.1", "7000", "y"},
		{"CLUSTER", "MEET", "127.0.0.1", "70000"},
		{"CLUSTER", "RESET", "MEDIUM"},
		{"CLUSTER", "FAILOVER"},
		{"CLUSTER", "FAILOVER", "TAKEOVER"},
		{"CLUSTER", "FAILOVER", "BOGUS"},
		{"CLUSTER", "FAILOVER", "FORCE", "X"},
		{"CLUSTER", "FLUSHSLOTS"},
		{"CLUSTER", "SLOTS"},
		{"CLUSTER", "BOGUS"},
		{"CLUSTER", "INFO", "extra"},
		{"CLUSTER"},
		{"SELECT", "1"},
		{"READONLY"},
		{"READWRITE"},
		{"ASKING"},
		{"SET", "foo", "bar"},
		{"MSET", "a", "1", "b", "2"},
		{"GET", "{a}x"},
		{"CLUSTER", "HELP"},
	}
	for _, args := range cases {
		want := rawReply(t, r.addr, args)
		got := rawReply(t, s.addr, args)
		if got != want {
			t.Errorf("%v:\n shoal %q\n redis %q", args, got, want)
		}
	}
}

// rawReply sends one command and returns the reply's bytes as sent.
func rawReply(t *testing.T, addr string, args []string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	fmt.Fprint(&b, "*1\r\n$4\r\nPING\r\n") // the reply ends where +PONG starts
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var got []byte
	buf := make([]byte, 64<<10)
	for !strings.HasSuffix(string(got), "+PONG\r\n") {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("%v: %v after %q", args, err, got)
		}
		got = append(got, buf[:n]...)
	}
	return strings.TrimSuffix(string(got), "+PONG\r\n")
}

// keyIn returns a key whose slot is in [lo, hi] and differs from avoid's.
func keyIn(lo, hi int, avoid string) string {
	for i := 0; ; i++ {
		k := "k" + strconv.Itoa(i)
		s := cluster.KeySlot([]byte(k))
		if s >= lo && s <= hi && (avoid == "" || s != cluster.KeySlot([]byte(avoid))) {
			return k
		}
	}
}

// TestClusterAskTryAgainAndTransactions: an open slot answers ASK for a
// key the migrating node lacks and TRYAGAIN for several keys of which it
// has some; the importing node serves a key only right after ASKING; a
// transaction is refused with MOVED while queueing and with CROSSSLOT at
// EXEC when its keys span slots, as Redis does.
func TestClusterAskTryAgainAndTransactions(t *testing.T) {
	skipClusterOnGnet(t)
	nodes := []*clusterNode{startShoalNode(t, ""), startShoalNode(t, ""), startShoalNode(t, "")}
	createCluster(t, nodes)
	waitClusterOK(t, nodes)
	a, c := nodes[0], nodes[2]
	aID, cID := cli(t, a.addr, "CLUSTER", "MYID"), cli(t, c.addr, "CLUSTER", "MYID")
	// "foo" is slot 12182, c's; c migrates it to a.
	if got := rawReply(t, c.addr, []string{"SET", "{foo}1", "v"}); got != "+OK\r\n" {
		t.Fatalf("SET {foo}1 on its owner: %q", got)
	}
	for _, step := range []struct {
		addr string
		args []string
		want string
	}{
		{c.addr, []string{"CLUSTER", "SETSLOT", "12182", "MIGRATING", aID}, "+OK\r\n"},
		{a.addr, []string{"CLUSTER", "SETSLOT", "12182", "IMPORTING", cID}, "+OK\r\n"},
		{c.addr, []string{"GET", "{foo}1"}, "$1\r\nv\r\n"},
		{c.addr, []string{"GET", "{foo}2"}, "-ASK 12182 " + a.addr + "\r\n"},
		{c.addr, []string{"MGET", "{foo}1", "{foo}2"}, "-TRYAGAIN Multiple keys request during rehashing of slot\r\n"},
		{a.addr, []string{"GET", "{foo}2"}, "-MOVED 12182 " + c.addr + "\r\n"},
	} {
		if got := rawReply(t, step.addr, step.args); got != step.want {
			t.Errorf("%v on %s: %q, want %q", step.args, step.addr, got, step.want)
		}
	}
	// ASKING lets one command through on the importing node.
	conn, err := net.Dial("tcp", a.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want := "+OK\r\n+OK\r\n-MOVED 12182 " + c.addr + "\r\n"
	fmt.Fprint(conn, "ASKING\r\nSET {foo}2 w\r\nGET {foo}2\r\n")
	if got := readN(t, conn, len(want)); got != want {
		t.Fatalf("ASKING, SET, GET on the importing node: %q, want %q", got, want)
	}
	for _, n := range []*clusterNode{a, c} {
		cli(t, n.addr, "CLUSTER", "SETSLOT", "12182", "STABLE")
	}

	k1 := keyIn(0, 5460, "")
	k2 := keyIn(0, 5460, k1)
	remote := keyIn(10923, 16383, "")
	want = "+OK\r\n+QUEUED\r\n-MOVED " + strconv.Itoa(cluster.KeySlot([]byte(remote))) + " " + c.addr +
		"\r\n-EXECABORT Transaction discarded because of previous errors.\r\n" +
		"+OK\r\n+QUEUED\r\n+QUEUED\r\n-CROSSSLOT Keys in request don't hash to the same slot\r\n$-1\r\n"
	fmt.Fprintf(conn, "MULTI\r\nSET %s 1\r\nSET %s 1\r\nEXEC\r\nMULTI\r\nSET %s 1\r\nSET %s 2\r\nEXEC\r\nGET %s\r\n", k1, remote, k1, k2, k1)
	if got := readN(t, conn, len(want)); got != want {
		t.Fatalf("transactions:\n got %q\nwant %q", got, want)
	}
}

func readN(t *testing.T, c net.Conn, n int) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, n)
	got := 0
	for got < n {
		m, err := c.Read(buf[got:])
		if err != nil {
			t.Fatalf("read: %v after %q", err, buf[:got])
		}
		got += m
	}
	return string(buf)
}

// TestClusterWithReplicas: six shoal nodes, created with
// --cluster-replicas 1: each primary gets a replica (CLUSTER REPLICATE,
// then replication), --cluster check is clean, the ClusterClient writes,
// and a replica answers MOVED for its primary's key until READONLY, then
// serves the replicated value.
func TestClusterWithReplicas(t *testing.T) {
	skipClusterOnGnet(t)
	var nodes []*clusterNode
	for range 6 {
		nodes = append(nodes, startShoalNode(t, ""))
	}
	createCluster(t, nodes, "--cluster-replicas", "1")
	waitClusterOK(t, nodes)
	checkCluster(t, nodes[0])
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[0].addr}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	if err := c.Set(ctx, "foo", "bar", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// "foo" is slot 12182: find its primary and that primary's replica,
	// once the replicas' role has reached the first node by gossip.
	var primaryID, replicaAddr, primaryAddr string
	deadline := time.Now().Add(60 * time.Second) // a hang guard
	for primaryID == "" || replicaAddr == "" {
		lines := strings.Split(cli(t, nodes[0].addr, "CLUSTER", "NODES"), "\n")
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) >= 9 && strings.Contains(f[2], "master") && strings.HasSuffix(f[8], "-16383") {
				primaryID, primaryAddr = f[0], strings.Split(f[1], "@")[0]
			}
		}
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) >= 4 && f[3] == primaryID {
				replicaAddr = strings.Split(f[1], "@")[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no primary of slot 16383 with a replica in:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := rawReply(t, replicaAddr, []string{"GET", "foo"}); got != "-MOVED 12182 "+primaryAddr+"\r\n" {
		t.Fatalf("GET foo on the replica without READONLY: %q", got)
	}
	conn, err := net.Dial("tcp", replicaAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := readAfter(t, conn, "READONLY\r\n"); got != "+OK\r\n" {
		t.Fatalf("READONLY: %q", got)
	}
	deadline = time.Now().Add(60 * time.Second)
	for {
		got := readAfter(t, conn, "GET foo\r\n")
		if got == "$3\r\nbar\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica never served foo after READONLY: %q", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := readAfter(t, conn, "SET foo x\r\n"); got != "-MOVED 12182 "+primaryAddr+"\r\n" {
		t.Fatalf("SET on the replica after READONLY: %q", got)
	}
}

// readAfter writes req and returns one reply line (with a bulk's payload).
func readAfter(t *testing.T, c net.Conn, req string) string {
	t.Helper()
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var got []byte
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("read after %q: %v", req, err)
		}
		got = append(got, buf[:n]...)
		s := string(got)
		if strings.HasSuffix(s, "\r\n") && (s[0] != '$' || s == "$-1\r\n" || strings.Count(s, "\r\n") == 2) {
			return s
		}
	}
}

// TestClusterReshard: redis-cli --cluster reshard moves 500 slots and
// their keys from one shoal node to another (SETSLOT IMPORTING/MIGRATING,
// GETKEYSINSLOT, MIGRATE ... KEYS sending RESTORE-ASKING, SETSLOT NODE);
// the check is clean after and every key reads back through a
// ClusterClient. Not under write load yet.
func TestClusterReshard(t *testing.T) {
	skipClusterOnGnet(t)
	nodes := []*clusterNode{startShoalNode(t, ""), startShoalNode(t, ""), startShoalNode(t, "")}
	createCluster(t, nodes)
	waitClusterOK(t, nodes)
	readWriteThrough(t, nodes, 300)
	before, _ := strconv.Atoi(cli(t, nodes[0].addr, "DBSIZE"))
	from, to := cli(t, nodes[2].addr, "CLUSTER", "MYID"), cli(t, nodes[0].addr, "CLUSTER", "MYID")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", "--cluster", "reshard", nodes[0].addr, "--cluster-from", from,
		"--cluster-to", to, "--cluster-slots", "500", "--cluster-yes").CombinedOutput()
	if err != nil || strings.Contains(string(out), "ERR") {
		t.Fatalf("reshard: %v\n%s\n%s", err, out, nodeLogs(nodes))
	}
	waitClusterOK(t, nodes)
	checkCluster(t, nodes[1])
	after, _ := strconv.Atoi(cli(t, nodes[0].addr, "DBSIZE"))
	if after <= before {
		t.Fatalf("the target holds %d keys after the reshard, %d before", after, before)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[1].addr}})
	defer c.Close()
	for i := range 300 {
		k := "key:" + strconv.Itoa(i)
		if v, err := c.Get(ctx, k).Result(); err != nil || v != "value:"+strconv.Itoa(i) {
			t.Fatalf("GET %s after the reshard = %q, %v", k, v, err)
		}
	}
	total := 0
	for _, n := range nodes {
		got, _ := strconv.Atoi(cli(t, n.addr, "DBSIZE"))
		total += got
	}
	if total != 300 {
		t.Fatalf("%d keys in all after the reshard, want 300", total)
	}
}
