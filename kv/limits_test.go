package kv_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// expectClosed reads until the server closes c and fails if it does not
// within the deadline. It returns how many bytes arrived first.
func expectClosed(t *testing.T, c net.Conn, within time.Duration) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	n, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("server did not close the connection within %v (read %d bytes)", within, n)
	}
	if err != nil && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
		t.Fatalf("unexpected read error: %v", err)
	}
	return int(n)
}

// TestSlowReaderGetsEveryReplyInBoundedMemory pipelines 2,000 GETs of a
// 100 KiB value (200 MB of replies) and reads nothing for a while. The
// server stops executing once the pending output passes the high-water
// mark, so its memory stays near that mark instead of 200 MB and the hard
// limit (1 MiB here) never fires; when the client reads, every reply
// arrives, as from redis-server.
func TestSlowReaderGetsEveryReplyInBoundedMemory(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{
		Loops: 1, OutputHighWater: 256 << 10, OutputLowWater: 64 << 10, OutputHardLimit: 1 << 20,
	})
	value := strings.Repeat("v", 100<<10)
	setup := dialRaw(t, srv.addr)
	if r := setup.Do("SET", "big", value); r != "+OK\r\n" {
		t.Fatal(r)
	}
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	const gets = 2000
	req := bytes.Repeat([]byte("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"), gets)
	go func() {
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		_, _ = c.Write(req)
	}()
	time.Sleep(300 * time.Millisecond)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grew := int64(ms.HeapInuse) - int64(before); grew > 32<<20 {
		t.Errorf("heap grew %d MB while the client was not reading; replies were not held back", grew>>20)
	}
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	rd := bufio.NewReaderSize(c, 1<<20)
	want := "$" + strconv.Itoa(len(value)) + "\r\n" + value + "\r\n"
	got := make([]byte, len(want))
	for i := 0; i < gets; i++ {
		if _, err := io.ReadFull(rd, got); err != nil {
			t.Fatalf("reply %d of %d: %v", i, gets, err)
		}
		if string(got) != want {
			t.Fatalf("reply %d damaged", i)
		}
	}
	if r := setup.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING after the slow reader: %q", r)
	}
}

// TestQueryBufferLimitClosesConnection announces a bulk bigger than the
// inbound limit and streams it: the server closes the connection once the
// unparsed input passes MaxInboundBuffer.
func TestQueryBufferLimitClosesConnection(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 1, MaxInboundBuffer: 1 << 20})
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, _ = c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4000000\r\n"))
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for i := 0; i < 60; i++ {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	expectClosed(t, c, 10*time.Second)
}

// TestBulkLengthLimitIsAProtocolError checks the bulk limit reply and close.
func TestBulkLengthLimitIsAProtocolError(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	conn := dialRaw(t, srv.addr)
	conn.Send([]byte("*2\r\n$4\r\nPING\r\n$" + strconv.Itoa(600<<20) + "\r\n"))
	out, err := conn.ReadUntilClose()
	if err != nil {
		t.Fatal(err)
	}
	if out != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("got %q", out)
	}
}

// TestLargeValuesAndLongPipelines moves values larger than the flush size
// and a pipeline whose replies exceed it many times, checking every byte.
func TestLargeValuesAndLongPipelines(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	conn := dialRaw(t, srv.addr)
	big := strings.Repeat("0123456789abcdef", 5<<16) // 5 MiB
	if r := conn.Do("SET", "big", big); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r := conn.Do("GET", "big"); r != "$"+strconv.Itoa(len(big))+"\r\n"+big+"\r\n" {
		t.Fatalf("GET big: %d bytes, want %d", len(r), len(big))
	}
	// A command with thousands of arguments, then a small one on the same
	// connection (the parser drops its big argument slice in between).
	mset, mget := []string{"MSET"}, []string{"MGET"}
	wantMGet := "*1500\r\n"
	for i := 0; i < 1500; i++ {
		k := "key" + strconv.Itoa(i)
		mset = append(mset, k, strconv.Itoa(i))
		mget = append(mget, k)
		wantMGet += "$" + strconv.Itoa(len(strconv.Itoa(i))) + "\r\n" + strconv.Itoa(i) + "\r\n"
	}
	if r := conn.Do(mset...); r != "+OK\r\n" {
		t.Fatalf("MSET 1500 keys: %q", r)
	}
	if r := conn.Do(mget...); r != wantMGet {
		t.Fatalf("MGET 1500 keys: %.100q", r)
	}
	if r := conn.Do("GET", "key7"); r != "$1\r\n7\r\n" {
		t.Fatalf("GET after MGET: %q", r)
	}
	val := strings.Repeat("z", 10000)
	conn.Do("SET", "mid", val)
	const n = 500
	conn.Send(bytes.Repeat(encodeCommand([]string{"GET", "mid"}), n))
	want := "$10000\r\n" + val + "\r\n"
	for i := 0; i < n; i++ {
		r, err := conn.Read()
		if err != nil || r != want {
			t.Fatalf("reply %d: %v (len %d)", i, err, len(r))
		}
	}
}

// TestClientKillAcrossLoops kills clients that live on other loops by ID
// and by address; each victim's loop closes it (through Conn.Execute).
func TestClientKillAcrossLoops(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 4, Balancer: &eventloop.RoundRobin{}})
	killer := dialRaw(t, srv.addr)
	var victims []*rawConn
	var ids []string
	for i := 0; i < 6; i++ {
		v := dialRaw(t, srv.addr)
		victims = append(victims, v)
		ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(v.Do("CLIENT", "ID"), ":"), "\r\n"))
	}
	for i, v := range victims[:3] {
		if r := killer.Do("CLIENT", "KILL", "ID", ids[i]); r != ":1\r\n" {
			t.Fatalf("CLIENT KILL ID %s: %q", ids[i], r)
		}
		expectClosed(t, v.C, 5*time.Second)
	}
	addr := victims[3].C.LocalAddr().String()
	if r := killer.Do("CLIENT", "KILL", addr); r != "+OK\r\n" {
		t.Fatalf("CLIENT KILL %s: %q", addr, r)
	}
	expectClosed(t, victims[3].C, 5*time.Second)
	addr = victims[4].C.LocalAddr().String()
	if r := killer.Do("CLIENT", "KILL", "ADDR", addr, "SKIPME", "yes"); r != ":1\r\n" {
		t.Fatalf("CLIENT KILL ADDR %s: %q", addr, r)
	}
	expectClosed(t, victims[4].C, 5*time.Second)
	if r := victims[5].Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("untouched client: %q", r)
	}
	// Killed clients leave CLIENT LIST.
	deadline := time.Now().Add(5 * time.Second)
	for {
		list := killer.Do("CLIENT", "LIST")
		if strings.Count(list, "id=") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLIENT LIST still shows killed clients:\n%s", list)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Killing oneself with the old form answers OK, then closes.
	self := killer.C.LocalAddr().String()
	killer.Send(encodeCommand([]string{"CLIENT", "KILL", self}))
	out, err := killer.ReadUntilClose()
	if err != nil || out != "+OK\r\n" {
		t.Fatalf("self kill: %q %v", out, err)
	}
}

// TestInfoReportsStats checks the INFO fields monitoring tools read and
// that the counters move.
func TestInfoReportsStats(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	_, port, _ := net.SplitHostPort(srv.addr)
	conn := dialRaw(t, srv.addr)
	conn.Do("SET", "a", "1")
	conn.Do("SET", "b", "2", "EX", "100")
	conn.Do("GET", "a")
	conn.Do("GET", "missing")
	info := parseInfo(t, conn.Do("INFO"))
	for _, field := range []string{"redis_version", "uptime_in_seconds", "connected_clients", "used_memory",
		"total_commands_processed", "instantaneous_ops_per_sec", "keyspace_hits", "keyspace_misses",
		"expired_keys", "evicted_keys", "maxmemory", "used_memory_rss", "used_memory_peak", "mem_fragmentation_ratio", "tcp_port", "process_id", "total_connections_received"} {
		if _, ok := info[field]; !ok {
			t.Errorf("INFO lacks %s", field)
		}
	}
	expect := map[string]string{"redis_version": kv.Version, "connected_clients": "1", "keyspace_hits": "1",
		"keyspace_misses": "1", "tcp_port": port,
		"process_id": strconv.Itoa(os.Getpid())}
	for k, v := range expect {
		if info[k] != v {
			t.Errorf("INFO %s = %q, want %q", k, info[k], v)
		}
	}
	// avg_ttl is 0 until the active expiry has sampled b, then at most b's 100 s.
	if db0 := info["db0"]; !regexp.MustCompile(`^keys=2,expires=1,avg_ttl=(0|[1-9][0-9]{0,4}|100000)$`).MatchString(db0) {
		t.Errorf("INFO db0 = %q, want keys=2,expires=1,avg_ttl= up to 100000", db0)
	}
	if _, err := os.Stat("/proc/self/statm"); err == nil {
		// The server runs in this process: its RSS is this process's.
		rss, _ := strconv.ParseInt(info["used_memory_rss"], 10, 64)
		used, _ := strconv.ParseInt(info["used_memory"], 10, 64)
		ratio, _ := strconv.ParseFloat(info["mem_fragmentation_ratio"], 64)
		if rss < 1<<20 || used <= 0 || math.Abs(ratio-float64(rss)/float64(used)) > 0.006 {
			t.Errorf("INFO used_memory_rss %q used_memory %q mem_fragmentation_ratio %q", info["used_memory_rss"], info["used_memory"], info["mem_fragmentation_ratio"])
		}
	}
	if n, _ := strconv.Atoi(info["total_commands_processed"]); n < 4 {
		t.Errorf("total_commands_processed = %d, want >= 4", n)
	}
	conn.Do("FOO")
	conn.Do("HELLO", "9")
	conn.Do("GET")
	errs := parseInfo(t, conn.Do("INFO", "stats", "errorstats"))
	for k, v := range map[string]string{"total_error_replies": "3", "errorstat_ERR": "count=2", "errorstat_NOPROTO": "count=1"} {
		if errs[k] != v {
			t.Errorf("INFO %s = %q, want %q", k, errs[k], v)
		}
	}
	only := conn.Do("INFO", "clients", "keyspace")
	if strings.Contains(only, "# Server") || !strings.Contains(only, "# Clients") || !strings.Contains(only, "# Keyspace") {
		t.Errorf("INFO clients keyspace:\n%s", only)
	}
}

func parseInfo(t *testing.T, reply string) map[string]string {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(reply))
	header, _ := rd.ReadString('\n')
	if !strings.HasPrefix(header, "$") {
		t.Fatalf("INFO reply %q", header)
	}
	fields := map[string]string{}
	for {
		line, err := rd.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = v
		}
		if err != nil {
			return fields
		}
	}
}

// TestConfigGetGlobAndSet covers patterns Redis's own table would answer
// differently (so they are not in the differential test).
func TestConfigGetGlobAndSet(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	conn := dialRaw(t, srv.addr)
	got := conn.Do("CONFIG", "GET", "maxmemory*")
	if got != "*8\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n$17\r\nmaxmemory-samples\r\n$1\r\n5\r\n$17\r\nmaxmemory-clients\r\n$1\r\n0\r\n" {
		t.Errorf("CONFIG GET maxmemory*: %q", got)
	}
	got = conn.Do("CONFIG", "GET", "save", "appendonly", "sa*")
	if got != "*4\r\n$4\r\nsave\r\n$0\r\n\r\n$10\r\nappendonly\r\n$2\r\nno\r\n" {
		t.Errorf("CONFIG GET save appendonly: %q", got)
	}
	names := 0
	for _, p := range config.Params() {
		names += 1 + len(p.Aliases)
	}
	if all := conn.Do("CONFIG", "GET", "*"); !strings.HasPrefix(all, "*"+strconv.Itoa(2*names)+"\r\n") { // every row of the settings table, by each name
		t.Errorf("CONFIG GET * = %q", all)
	}
	if r := conn.Do("CONFIG", "SET", "maxmemory", "10mb", "maxmemory-policy", "allkeys-lru"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r := conn.Do("CONFIG", "GET", "maxmemory*"); !strings.Contains(r, "10485760") || !strings.Contains(r, "allkeys-lru") {
		t.Errorf("after SET: %q", r)
	}
	if r := conn.Do("CONFIG", "SET", "maxmemory", "1mb", "maxmemory-policy", "bogus"); !strings.HasPrefix(r, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy')") {
		t.Errorf("bad policy: %q", r)
	}
	if r := conn.Do("CONFIG", "GET", "maxmemory"); !strings.Contains(r, "10485760") {
		t.Errorf("a failed CONFIG SET changed maxmemory: %q", r)
	}
	if r := conn.Do("CONFIG", "SET", "port", "1"); r != "-ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config\r\n" {
		t.Errorf("immutable: %q", r)
	}
	if r := conn.Do("CONFIG", "SET", "appendonly", "yes"); !strings.HasPrefix(r, "-ERR CONFIG SET failed (possibly related to argument 'appendonly')") {
		t.Errorf("appendonly yes: %q", r)
	}
	// requirepass at run time: this client stays authenticated, new ones must AUTH.
	if r := conn.Do("CONFIG", "SET", "requirepass", "pw"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r := conn.Do("PING"); r != "+PONG\r\n" {
		t.Errorf("existing client after requirepass: %q", r)
	}
	other := dialRaw(t, srv.addr)
	if r := other.Do("PING"); r != "-NOAUTH Authentication required.\r\n" {
		t.Errorf("new client: %q", r)
	}
	if r := other.Do("AUTH", "pw"); r != "+OK\r\n" {
		t.Errorf("AUTH: %q", r)
	}
	conn.Do("CONFIG", "SET", "requirepass", "")
	if r := dialRaw(t, srv.addr).Do("PING"); r != "+PONG\r\n" {
		t.Errorf("after clearing requirepass: %q", r)
	}
}

// TestScanVisitsEveryKey iterates SCAN with a small COUNT while keys stay
// put: every key must be returned at least once and the cursor must end at 0.
func TestScanVisitsEveryKey(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	conn := dialRaw(t, srv.addr)
	const n = 2000
	args := []string{"MSET"}
	for i := 0; i < n; i++ {
		args = append(args, "k"+strconv.Itoa(i), "v")
	}
	conn.Do(args...)
	seen := map[string]bool{}
	cursor := "0"
	for rounds := 0; ; rounds++ {
		if rounds > n {
			t.Fatal("SCAN did not finish")
		}
		rd := bufio.NewReader(strings.NewReader(conn.Do("SCAN", cursor, "COUNT", "7")))
		var lines []string
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			lines = append(lines, strings.TrimSuffix(line, "\r\n"))
		}
		cursor = lines[2]
		for i := 5; i < len(lines); i += 2 {
			seen[lines[i]] = true
		}
		if cursor == "0" {
			break
		}
	}
	if len(seen) != n {
		t.Fatalf("SCAN returned %d distinct keys, want %d", len(seen), n)
	}
}
