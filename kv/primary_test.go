package kv_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/waittest"
	"github.com/shoalkv/shoal/kv"
)

// The primary side of replication, spoken to by hand: the replica's
// handshake, the snapshot, the stream's records (what each write did, as
// the append-only file has them) and its offsets, +CONTINUE from the
// backlog, and WAIT.

// fakeReplica is a raw connection that has run PSYNC: it reads the
// stream and counts its bytes.
type fakeReplica struct {
	*rawConn
	id     string
	offset int64 // the stream's offset of the last byte read
}

var fullResync = regexp.MustCompile(`^\+FULLRESYNC ([0-9a-f]{40}) (\d+)\r\n$`)

// syncReplica connects to addr as a replica (REPLCONF, PSYNC ? -1) and
// reads the snapshot.
func syncReplica(t *testing.T, addr string, port string) *fakeReplica {
	t.Helper()
	c := dialRaw(t, addr)
	for _, args := range [][]string{{"REPLCONF", "listening-port", port}, {"REPLCONF", "capa", "psync2"}} {
		if r := c.Do(args...); r != "+OK\r\n" {
			t.Fatalf("%q: %q", args, r)
		}
	}
	line := c.Do("PSYNC", "?", "-1")
	m := fullResync.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("PSYNC ? -1: %q", line)
	}
	off, _ := strconv.ParseInt(m[2], 10, 64)
	head, err := c.Rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		t.Fatalf("payload header %q %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	payload := make([]byte, n)
	if _, err := io.ReadFull(c.Rd, payload); err != nil || !strings.HasPrefix(string(payload), "REDIS0010") {
		t.Fatalf("payload of %d bytes: %q... %v", n, payload[:min(n, 16)], err)
	}
	return &fakeReplica{rawConn: c, id: m[1], offset: off}
}

// next reads the stream's next command.
func (r *fakeReplica) next(t *testing.T) string {
	t.Helper()
	rec, err := r.Read()
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	r.offset += int64(len(rec))
	return rec
}

// expect reads the stream's next records, skipping PINGs, and compares them.
func (r *fakeReplica) expect(t *testing.T, want ...[]string) {
	t.Helper()
	for _, w := range want {
		got := r.next(t)
		for got == "*1\r\n$4\r\nPING\r\n" {
			got = r.next(t)
		}
		if exp := string(encodeCommand(w)); got != exp {
			t.Fatalf("stream: %q, want %q", got, exp)
		}
	}
}

func infoField(t *testing.T, c *rawConn, name string) string {
	t.Helper()
	info := c.Do("INFO", "replication")
	m := regexp.MustCompile(`(?m)^` + name + `:(.*)\r$`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no %s in %q", name, info)
	}
	return m[1]
}

func TestReplicaStreamCarriesEffects(t *testing.T) {
	s := startShoal(t, kv.Options{}, eventloop.Options{})
	c := dialRaw(t, s.addr)
	c.Do("SET", "before", "1")
	if got := infoField(t, c, "master_repl_offset"); got != "0" {
		t.Fatalf("master_repl_offset %s without replicas: the stream must not be produced", got)
	}
	if got := infoField(t, c, "repl_backlog_active"); got != "0" {
		t.Fatalf("repl_backlog_active %s without replicas", got)
	}
	r := syncReplica(t, s.addr, "7777")

	c.Do("SET", "a", "1")
	c.Do("SET", "ttl", "x", "EX", "100")
	pxat := c.Do("PEXPIRETIME", "ttl")
	c.Do("SELECT", "3")
	c.Do("INCRBYFLOAT", "f", "1.5")
	c.Do("SET", "nx", "1", "NX")
	c.Do("SET", "nx", "2", "NX") // did nothing: not in the stream
	c.Do("SADD", "s", "m1", "m2")
	popped := c.Do("SPOP", "s")
	r.expect(t,
		[]string{"SELECT", "0"},
		[]string{"SET", "a", "1"},
		[]string{"SET", "ttl", "x", "PXAT", strings.Trim(pxat, ":\r\n")},
		[]string{"SELECT", "3"},
		[]string{"SET", "f", "1.5"},
		[]string{"SET", "nx", "1"},
		[]string{"DEL", "s"}, // as the file has it: a replay keeps expired keys
		[]string{"SADD", "s", "m1", "m2"},
		[]string{"SREM", "s", popped[strings.Index(popped, "\n")+1 : len(popped)-2]},
	)

	// A blocked pop served by another client's push: the push, then the pop.
	b := dialRaw(t, s.addr)
	b.Send(encodeCommand([]string{"BLPOP", "q", "5"}))
	time.Sleep(100 * time.Millisecond)
	c.Do("SELECT", "0")
	c.Do("RPUSH", "q", "v")
	if got, _ := b.Read(); got != "*2\r\n$1\r\nq\r\n$1\r\nv\r\n" {
		t.Fatalf("BLPOP: %q", got)
	}
	r.expect(t, []string{"SELECT", "0"}, []string{"RPUSH", "q", "v"}, []string{"LPOP", "q"})

	// A transaction and a script: their records between MULTI and EXEC,
	// as the append-only file has them.
	c.Do("MULTI")
	c.Do("SET", "t1", "1")
	c.Do("SELECT", "5")
	c.Do("SET", "t2", "2")
	if got := c.Do("EXEC"); got != "*3\r\n+OK\r\n+OK\r\n+OK\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	c.Do("EVAL", "redis.call('set', KEYS[1], '1'); redis.call('set', KEYS[2], '2')", "2", "e1", "e2")
	r.expect(t, []string{"MULTI"}, []string{"SET", "t1", "1"}, []string{"SELECT", "5"}, []string{"SET", "t2", "2"}, []string{"EXEC"},
		[]string{"MULTI"}, []string{"SET", "e1", "1"}, []string{"SET", "e2", "2"}, []string{"EXEC"})

	// The offset counts the stream's bytes; ROLE and INFO list the replica.
	deadline := time.Now().Add(5 * time.Second)
	for infoField(t, c, "master_repl_offset") != strconv.FormatInt(r.offset, 10) {
		if time.Now().After(deadline) {
			t.Fatalf("master_repl_offset %s, the replica read up to %d", infoField(t, c, "master_repl_offset"), r.offset)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := infoField(t, c, "slave0"); !strings.HasPrefix(got, "ip=127.0.0.1,port=7777,state=online,offset=") {
		t.Fatalf("slave0:%s", got)
	}
	if got := c.Do("ROLE"); !strings.HasPrefix(got, fmt.Sprintf("*3\r\n$6\r\nmaster\r\n:%d\r\n*1\r\n*3\r\n$9\r\n127.0.0.1\r\n$4\r\n7777\r\n", r.offset)) {
		t.Fatalf("ROLE: %q", got)
	}

	// Reconnected, it continues from the backlog with the bytes it lacks.
	r.C.Close()
	c.Do("SET", "gap", "1")
	r2 := dialRaw(t, s.addr)
	if got := r2.Do("PSYNC", r.id, strconv.FormatInt(r.offset+1, 10)); got != "+CONTINUE\r\n" {
		t.Fatalf("PSYNC %s %d: %q", r.id, r.offset+1, got)
	}
	cont := &fakeReplica{rawConn: r2, id: r.id, offset: r.offset}
	cont.expect(t, []string{"SET", "gap", "1"})
	// Another history, or an offset the backlog no longer holds: in full.
	for _, args := range [][]string{{"PSYNC", strings.Repeat("a", 40), "1"}, {"PSYNC", r.id, "0"}} {
		if got := dialRaw(t, s.addr).Do(args...); !fullResync.MatchString(got) {
			t.Fatalf("%q: %q", args, got)
		}
	}
	if got := c.Do("INFO", "stats"); !strings.Contains(got, "sync_full:3\r\nsync_partial_ok:1\r\nsync_partial_err:2\r\n") {
		t.Fatalf("INFO stats: %q", got)
	}
}

func TestWaitParksUntilTheReplicaAcknowledges(t *testing.T) {
	s := startShoal(t, kv.Options{}, eventloop.Options{})
	c := dialRaw(t, s.addr)
	if got := c.Do("WAIT", "0", "0"); got != ":0\r\n" {
		t.Fatalf("WAIT 0 0: %q", got)
	}
	if got := c.Do("WAIT", "1", "-1"); got != "-ERR timeout is negative\r\n" {
		t.Fatalf("WAIT 1 -1: %q", got)
	}
	r := syncReplica(t, s.addr, "7778")
	c.Do("SET", "k", "v")
	r.expect(t, []string{"SELECT", "0"}, []string{"SET", "k", "v"})

	// No ACK: the timeout answers, and the loop serves others meanwhile.
	start := time.Now()
	c.Send(encodeCommand([]string{"WAIT", "1", "1000"}))
	if got := dialRaw(t, s.addr).Do("PING"); got != "+PONG\r\n" || time.Since(start) >= time.Second {
		t.Fatalf("PING while WAIT is parked: %q after %v", got, time.Since(start))
	}
	if got, _ := c.Read(); got != ":0\r\n" || time.Since(start) < time.Second {
		t.Fatalf("WAIT 1 1000 without ACK: %q after %v", got, time.Since(start))
	}

	// WAIT asks for ACKs (REPLCONF GETACK *); the ACK answers it.
	c.Send(encodeCommand([]string{"WAIT", "1", "5000"}))
	for {
		rec := r.next(t)
		if rec == string(encodeCommand([]string{"REPLCONF", "GETACK", "*"})) {
			break
		}
	}
	r.Send(encodeCommand([]string{"REPLCONF", "ACK", strconv.FormatInt(r.offset, 10)}))
	if got, _ := c.Read(); got != ":1\r\n" {
		t.Fatalf("WAIT 1 5000 after the ACK: %q", got)
	}
	if got := c.Do("CLIENT", "KILL", "TYPE", "replica"); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL TYPE replica: %q", got)
	}
	if _, err := r.ReadUntilClose(); err != nil {
		t.Fatalf("the killed replica's connection: %v", err)
	}
}

func TestMinReplicasToWriteRefusesWrites(t *testing.T) {
	s := startShoal(t, kv.Options{}, eventloop.Options{})
	c := dialRaw(t, s.addr)
	configure(t, c, "min-replicas-to-write", "1", "0")
	want := "-NOREPLICAS Not enough good replicas to write.\r\n"
	if got := c.Do("SET", "k", "v"); got != want {
		t.Fatalf("SET without replicas: %q", got)
	}
	if got := c.Do("GET", "k"); got != "$-1\r\n" {
		t.Fatalf("GET without replicas: %q", got)
	}
	c.Do("MULTI")
	c.Do("SET", "k", "v")
	if got := c.Do("EXEC"); got != "-EXECABORT Transaction discarded because of previous errors.\r\n" { // as redis-server: the queued SET was refused
		t.Fatalf("EXEC without replicas: %q", got)
	}
	r := syncReplica(t, s.addr, "7779")
	r.Send(encodeCommand([]string{"REPLCONF", "ACK", strconv.FormatInt(r.offset, 10)}))
	deadline := time.Now().Add(5 * time.Second)
	for c.Do("SET", "k", "v") != "+OK\r\n" {
		if time.Now().After(deadline) {
			t.Fatalf("SET with a replica that acknowledged: %q", c.Do("SET", "k", "v"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBacklogKeepsReplBacklogSize: CONFIG SET repl-backlog-size applies at
// once; a replica that lacks bytes the backlog dropped syncs in full, one
// within it continues.
func TestBacklogKeepsReplBacklogSize(t *testing.T) {
	s := startShoal(t, kv.Options{}, eventloop.Options{})
	c := dialRaw(t, s.addr)
	r := syncReplica(t, s.addr, "7780")
	start := r.offset
	configure(t, c, "repl-backlog-size", "16kb", "1mb")
	if got := infoField(t, c, "repl_backlog_size"); got != "16384" {
		t.Fatalf("repl_backlog_size %s after CONFIG SET 16kb", got)
	}
	value := strings.Repeat("x", 1000)
	for i := range 40 {
		c.Do("SET", "k"+strconv.Itoa(i), value)
	}
	end, _ := strconv.ParseInt(infoField(t, c, "master_repl_offset"), 10, 64)
	first, _ := strconv.ParseInt(infoField(t, c, "repl_backlog_first_byte_offset"), 10, 64)
	if hist := infoField(t, c, "repl_backlog_histlen"); hist != "16384" || first != end-16384+1 {
		t.Fatalf("backlog of %s bytes from %d, offset %d", hist, first, end)
	}
	if got := dialRaw(t, s.addr).Do("PSYNC", r.id, strconv.FormatInt(start+1, 10)); !fullResync.MatchString(got) {
		t.Fatalf("PSYNC from %d, before the backlog's first byte %d: %q", start+1, first, got)
	}
	if got := dialRaw(t, s.addr).Do("PSYNC", r.id, strconv.FormatInt(first, 10)); got != "+CONTINUE\r\n" {
		t.Fatalf("PSYNC from the backlog's first byte %d: %q", first, got)
	}
	if got := c.Do("REPLCONF", "listening-port", "99999"); !strings.HasPrefix(got, "-ERR Invalid listening-port") {
		t.Fatalf("REPLCONF listening-port 99999: %q", got)
	}
	if got := c.Do("REPLCONF", "bogus", "1"); got != "-ERR Unrecognized REPLCONF option: bogus\r\n" {
		t.Fatalf("REPLCONF bogus 1: %q", got)
	}
}

// TestReplicaNotReadingItsSnapshotIsDropped: a replica that reads none of
// a snapshot bigger than what the primary sends ahead is dropped after
// repl-timeout, rather than the transfer waiting forever.
func TestReplicaNotReadingItsSnapshotIsDropped(t *testing.T) {
	s := startShoal(t, kv.Options{}, eventloop.Options{})
	c := dialRaw(t, s.addr)
	configure(t, c, "repl-timeout", "1", "60")
	rng := rand.New(rand.NewPCG(1, 2))
	var batch []byte
	for i := range 300 {
		args := []string{"MSET"}
		for j := range 1000 {
			// Incompressible, so that the snapshot is far bigger than
			// what the primary sends ahead and the sockets hold.
			value := fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
			args = append(args, "k"+strconv.Itoa(i*1000+j), value)
		}
		batch = append(batch, encodeCommand(args)...)
	}
	c.Send(batch)
	for range 300 {
		if got, err := c.Read(); got != "+OK\r\n" || err != nil {
			t.Fatalf("MSET: %q %v", got, err)
		}
	}
	r := dialRaw(t, s.addr)
	r.Send(encodeCommand([]string{"PSYNC", "?", "-1"}))
	// Reading nothing until the primary drops it: polled, not slept, since
	// a loaded machine takes long to encode and send the snapshot.
	stat := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `:(.*)\r$`).FindStringSubmatch(c.Do("INFO", "stats"))
		if m == nil {
			t.Fatalf("no %s in INFO stats", name)
		}
		return m[1]
	}
	waittest.Until(t, 60*time.Second, "the primary starts the full sync", func() bool { return stat("sync_full") == "1" })
	// It is listed while its snapshot is sent (a repl-timeout, 1 s, at
	// least: long enough to be seen), then no longer.
	listed := false
	waittest.Until(t, 60*time.Second, "the stalled replica listed, then dropped", func() bool {
		n := infoField(t, c, "connected_slaves")
		listed = listed || n == "1"
		return listed && n == "0"
	})
	// Its connection closes once what the sockets hold is read.
	if _, err := r.ReadUntilClose(); err != nil {
		t.Fatalf("the stalled replica's connection was not closed: %v", err)
	}
}

// TestPrimaryPingsItsReplicas: with nothing written, a replica still gets
// a PING in the stream every repl-ping-replica-period seconds, counted in
// the replication offset as Redis counts it.
func TestPrimaryPingsItsReplicas(t *testing.T) {
	s := startShoal(t, kv.Options{}, eventloop.Options{})
	c := dialRaw(t, s.addr)
	if got := c.Do("CONFIG", "SET", "repl-ping-replica-period", "1"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET repl-ping-replica-period 1: %q", got)
	}
	r := syncReplica(t, s.addr, "7001")
	for range 2 {
		if got := r.next(t); got != "*1\r\n$4\r\nPING\r\n" {
			t.Fatalf("stream with nothing written: %q, want PING", got)
		}
	}
	// Another PING may have gone out since the replica read the second.
	ping := int64(len("*1\r\n$4\r\nPING\r\n"))
	if got, _ := strconv.ParseInt(infoField(t, c, "master_repl_offset"), 10, 64); got < r.offset || (got-r.offset)%ping != 0 {
		t.Fatalf("master_repl_offset %d after the PINGs, the replica read up to %d", got, r.offset)
	}
}
