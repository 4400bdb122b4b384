package kv_test

import (
	"bufio"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/tcptest"
	"github.com/shoalkv/shoal/kv"
)

// migrateFixture fills c's database 0 with one key of every type, some
// with a TTL, and returns the keys.
func migrateFixture(t *testing.T, c *rawConn) []string {
	t.Helper()
	for _, cmd := range [][]string{
		{"FLUSHALL"},
		{"SET", "str", "hello"},
		{"SET", "int", "12345", "PX", "600000"},
		{"SET", "big", strings.Repeat("abcdefgh", 2000)},
		{"RPUSH", "list", "a", "1", "b"},
		{"PEXPIRE", "list", "500000"},
		{"HSET", "hash", "f", "v", "n", "7"},
		{"SADD", "intset", "3", "1", "-2"},
		{"PEXPIRE", "intset", "400000"},
		{"SADD", "set", "x", "y", "z"},
		{"ZADD", "zset", "1.5", "m", "-3", "n"},
		{"PEXPIRE", "zset", "300000"},
	} {
		if r := c.Do(cmd...); r[0] == '-' {
			t.Fatalf("%q: %q", cmd, r)
		}
	}
	return []string{"str", "int", "big", "list", "hash", "intset", "set", "zset"}
}

// hostPort splits addr for MIGRATE's arguments.
func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}

// closedPort is a loopback port nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port := hostPort(t, l.Addr().String())
	l.Close()
	return port
}

// migrateScenario runs one MIGRATE session from src to dst (both emptied
// first) and returns every reply, with the source's and the target's state
// after it: what must be the same whichever server is the source.
func migrateScenario(t *testing.T, srcAddr, dstAddr string) []string {
	src, dst := dialRaw(t, srcAddr), dialRaw(t, dstAddr)
	if r := dst.Do("FLUSHALL"); r != "+OK\r\n" {
		t.Fatalf("FLUSHALL on the target: %q", r)
	}
	keys := migrateFixture(t, src)
	dumps := map[string]string{}
	for _, k := range keys {
		dumps[k] = src.Do("DUMP", k)
	}
	host, port := hostPort(t, dstAddr)
	down := closedPort(t)
	var out []string
	do := func(c *rawConn, args ...string) {
		line := strings.ReplaceAll(strings.Join(args, " "), down, "<closed port>")
		out = append(out, line+" -> "+c.Do(args...))
	}
	mig := func(args ...string) { do(src, append([]string{"MIGRATE", host, port}, args...)...) }
	mig("str", "0", "5000")
	mig("str", "0", "5000") // gone now
	mig("", "0", "5000", "KEYS", "list", "nope", "hash")
	mig("", "0", "5000", "KEYS", "nope", "nope2")
	mig("intset", "3", "5000", "COPY")
	mig("intset", "3", "5000")            // BUSYKEY from the target
	mig("intset", "3", "5000", "REPLACE") // and now it moves
	mig("set", "0", "0", "COPY", "REPLACE")
	mig("", "2", "5000", "replace", "KEYS", "zset", "int", "big", "set")
	// Errors, in Redis's order of checks.
	mig("str", "0", "5000", "FOO")
	mig("str", "0", "5000", "AUTH")
	mig("str", "0", "5000", "AUTH2", "u")
	mig("str", "0", "x")
	mig("str", "x", "5000")
	mig("str", "0", "5000", "KEYS", "a")
	mig("", "0", "5000", "KEYS")
	mig("str", "0", "5000", "COPY", "FOO")
	do(src, "SET", "kept", "v")
	do(src, "MIGRATE", host, down, "kept", "0", "1000")
	do(src, "MIGRATE", "127.0.0.1", "notaport", "kept", "0", "1000")
	do(src, "MIGRATE", host, port, "kept", "99", "1000") // the target refuses the SELECT
	do(src, "MIGRATE", host, port, "kept", "0", "1000", "AUTH", "pw")
	do(src, "EXISTS", "kept")
	do(src, "DBSIZE")
	do(dst, "DBSIZE")
	for _, k := range keys {
		db := "0"
		switch k {
		case "intset":
			db = "3"
		case "zset", "int", "big", "set":
			db = "2"
		}
		dst.Do("SELECT", db)
		if k == "set" { // a hash table: each server orders it its own way
			if have, want := sortedMembers(dst.Do("SMEMBERS", k)), "x y z"; have != want {
				t.Errorf("SMEMBERS set on the target = %q, want %q", have, want)
			}
		} else if have := dst.Do("DUMP", k); have != dumps[k] {
			t.Errorf("DUMP %s on the target (db %s) = %q, the source had %q", k, db, have, dumps[k])
		}
		ttl := dst.Do("PTTL", k)
		n, _ := strconv.Atoi(strings.Trim(ttl, ":\r\n"))
		switch k {
		case "int", "list", "intset", "zset":
			if n < 200000 {
				t.Errorf("PTTL %s on the target = %q, want its TTL kept", k, ttl)
			}
		default:
			if n != -1 {
				t.Errorf("PTTL %s on the target = %q, want none", k, ttl)
			}
		}
	}
	dst.Do("SELECT", "0")
	return out
}

// sortedMembers returns the elements of a flat array reply, sorted and
// joined by spaces.
func sortedMembers(reply string) string {
	var elems []string
	lines := strings.Split(reply, "\r\n")
	for i := 1; i+1 < len(lines); i += 2 {
		elems = append(elems, lines[i+1])
	}
	slices.Sort(elems)
	return strings.Join(elems, " ")
}

// TestMigrateMatchesRedis runs the same MIGRATE session with redis-server
// and with Shoal as the source, each to a redis-server and to a Shoal
// target: every reply, the keys moved and their TTLs must be the same.
func TestMigrateMatchesRedis(t *testing.T) {
	ref := startRedis(t)
	ours := startShoal(t, kv.Options{}, eventloop.Options{}).addr
	refTarget := startRedis(t)
	ourTarget := startShoal(t, kv.Options{}, eventloop.Options{}).addr
	for _, target := range []struct{ name, addr string }{{"to-redis", refTarget}, {"to-shoal", ourTarget}} {
		t.Run(target.name, func(t *testing.T) {
			sameReplies(t, migrateScenario(t, ref, target.addr), migrateScenario(t, ours, target.addr))
		})
	}
}

// TestMigrateCommandInfoMatchesRedis compares COMMAND INFO of MIGRATE,
// RESTORE-ASKING and ASKING, and what ASKING and RESTORE-ASKING answer.
func TestMigrateCommandInfoMatchesRedis(t *testing.T) {
	ref := dialRaw(t, startRedis(t))
	ours := dialRaw(t, startShoal(t, kv.Options{}, eventloop.Options{}).addr)
	ref.Do("SET", "s", "v")
	str := ref.Do("DUMP", "s")
	payload := str[strings.Index(str, "\r\n")+2 : len(str)-2]
	for _, cmd := range [][]string{
		{"COMMAND", "INFO", "MIGRATE", "RESTORE-ASKING", "ASKING"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "5"},
		{"COMMAND", "GETKEYSANDFLAGS", "MIGRATE", "h", "1", "", "0", "5", "COPY", "KEYS", "a", "keys"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "AUTH", "keys"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "5", "KEYS", "a"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "AUTH2", "u", "keys", "KEYS", "b"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "COPY", "KEYS"},
		{"ASKING"},
		{"RESTORE-ASKING", "ra", "0", payload},
		{"RESTORE-ASKING", "ra", "0", payload},
		{"GET", "ra"},
	} {
		for _, proto := range []string{"2", "3"} {
			ref.Do("HELLO", proto)
			ours.Do("HELLO", proto)
			if w, h := ref.Do(cmd...), ours.Do(cmd...); w != h {
				t.Errorf("RESP%s %q: redis-server %q, shoal %q", proto, cmd, w, h)
			}
			if cmd[0] == "RESTORE-ASKING" {
				break
			}
		}
	}
}

// TestMigrateAuth moves keys to targets that want a password: a
// redis-server with requirepass and an ACL user, and a Shoal with
// requirepass; a wrong password is the target's error, and the key stays.
func TestMigrateAuth(t *testing.T) {
	refTarget := startRedis(t, "--requirepass", "secret")
	rt := dialRaw(t, refTarget)
	rt.Do("AUTH", "secret")
	if r := rt.Do("ACL", "SETUSER", "mover", "on", ">pw2", "~*", "+@all"); r != "+OK\r\n" {
		t.Fatalf("ACL SETUSER: %q", r)
	}
	ourTarget := startShoal(t, kv.Options{}, eventloop.Options{}).addr
	ot := dialRaw(t, ourTarget)
	configure(t, ot, "requirepass", "secret", "")
	ot.Do("AUTH", "secret")
	ref := dialRaw(t, startRedis(t))
	ours := dialRaw(t, startShoal(t, kv.Options{}, eventloop.Options{}).addr)
	cases := []struct {
		target string
		auth   []string
	}{
		{refTarget, []string{"AUTH", "secret"}},
		{refTarget, []string{"AUTH2", "mover", "pw2"}},
		{refTarget, []string{"AUTH", "wrong"}},
		{refTarget, []string{"AUTH2", "mover", "wrong"}},
		{refTarget, nil},
		{ourTarget, []string{"AUTH", "secret"}},
		{ourTarget, []string{"AUTH2", "default", "secret"}},
		{ourTarget, []string{"AUTH", "wrong"}},
		{ourTarget, nil},
	}
	for i, tc := range cases {
		host, port := hostPort(t, tc.target)
		key := "k" + strconv.Itoa(i)
		var replies [2]string
		for j, src := range []*rawConn{ref, ours} {
			src.Do("SET", key, "v")
			replies[j] = src.Do(append([]string{"MIGRATE", host, port, key, "0", "5000"}, tc.auth...)...)
			replies[j] += src.Do("EXISTS", key)
			target := rt
			if tc.target == ourTarget {
				target = ot
			}
			replies[j] += target.Do("GET", key)
			target.Do("DEL", key)
		}
		if replies[0] != replies[1] {
			t.Errorf("%d: MIGRATE %q: redis-server %q, shoal %q", i, tc.auth, replies[0], replies[1])
		}
		if tc.auth != nil && !strings.Contains(tc.auth[len(tc.auth)-1], "wrong") && !strings.HasPrefix(replies[1], "+OK") {
			t.Errorf("%d: MIGRATE %q: %q", i, tc.auth, replies[1])
		}
	}
}

// silentTarget listens and accepts, reads everything, and answers nothing.
func silentTarget(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestMigrateTimeoutDoesNotBlockTheServer migrates to a target that never
// answers: the reply is Redis's IOERR after the timeout, the key stays, and
// meanwhile the server answers other clients on the same loop and others.
func TestMigrateTimeoutDoesNotBlockTheServer(t *testing.T) {
	host, port := hostPort(t, silentTarget(t))
	ref := dialRaw(t, startRedis(t))
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 1})
	ours := dialRaw(t, srv.addr)
	ref.Do("SET", "k", "v")
	want := ref.Do("MIGRATE", host, port, "k", "0", "300") + ref.Do("EXISTS", "k")
	ours.Do("SET", "k", "v")
	start := time.Now()
	ours.Send(encodeCommand([]string{"MIGRATE", host, port, "k", "0", "1500"}))
	ours.Send(encodeCommand([]string{"EXISTS", "k"})) // pipelined: waits for the MIGRATE
	other := dialRaw(t, srv.addr)
	for range 5 {
		if r := other.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("PING while MIGRATE waits: %q", r)
		}
	}
	if r := other.Do("SET", "k", "changed"); r != "+OK\r\n" {
		t.Fatalf("SET while MIGRATE waits: %q", r)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the other client waited %v for its replies", d)
	} else {
		t.Logf("6 commands of another client answered %v after the MIGRATE was sent", d)
	}
	r1, err := ours.Read()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := ours.Read()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 1400*time.Millisecond {
		t.Errorf("MIGRATE answered after %v, before its 1500 ms timeout", d)
	}
	if r1+r2 != want {
		t.Errorf("MIGRATE to a silent target: shoal %q, redis-server %q", r1+r2, want)
	}
	if r := ours.Do("GET", "k"); r != "$7\r\nchanged\r\n" {
		t.Errorf("GET k = %q, want the other client's write", r)
	}
}

// heldTarget answers +OK to every command, but only once release is
// closed: the test changes the source meanwhile.
func heldTarget(t *testing.T) (addr string, release chan struct{}, got chan string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release, got = make(chan struct{}), make(chan string, 16)
	done := make(chan struct{})
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		rd := bufio.NewReader(c)
		for {
			var sb strings.Builder
			if err := readReply(rd, &sb); err != nil {
				return
			}
			got <- sb.String()
			<-release
			if _, err := c.Write([]byte("+OK\r\n")); err != nil {
				return
			}
		}
	}()
	return l.Addr().String(), release, got
}

// TestMigrateKeepsAKeyChangedMeanwhile: a key written by another client
// while the target works is not deleted (that write would be lost); one
// left alone is, and the reply is +OK for both.
func TestMigrateKeepsAKeyChangedMeanwhile(t *testing.T) {
	addr, release, got := heldTarget(t)
	host, port := hostPort(t, addr)
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	c, other := dialRaw(t, srv.addr), dialRaw(t, srv.addr)
	c.Do("MSET", "a", "1", "b", "2")
	c.Send(encodeCommand([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS", "a", "b"}))
	<-got // the SELECT: the RESTOREs are in the same write
	if r := other.Do("INCR", "a"); r != ":2\r\n" {
		t.Fatalf("INCR a: %q", r)
	}
	close(release)
	if r, err := c.Read(); err != nil || r != "+OK\r\n" {
		t.Fatalf("MIGRATE: %q %v", r, err)
	}
	if r := c.Do("MGET", "a", "b"); r != "*2\r\n$1\r\n2\r\n$-1\r\n" {
		t.Errorf("MGET a b after MIGRATE = %q, want a kept with the INCR, b gone", r)
	}
}

// TestMigrateInMultiAndScript: MIGRATE runs inside EXEC and from a Lua
// script as in Redis.
func TestMigrateInMultiAndScript(t *testing.T) {
	targets := []string{startRedis(t), startShoal(t, kv.Options{}, eventloop.Options{}).addr}
	ref := dialRaw(t, startRedis(t))
	ours := dialRaw(t, startShoal(t, kv.Options{}, eventloop.Options{}).addr)
	for _, target := range targets {
		host, port := hostPort(t, target)
		steps := [][]string{
			{"SET", "m", "1"}, {"SET", "s", "2"},
			{"MULTI"}, {"MIGRATE", host, port, "m", "0", "5000"}, {"EXISTS", "m"}, {"EXEC"},
			{"EVAL", "return redis.call('MIGRATE', ARGV[1], ARGV[2], KEYS[1], '0', '5000')", "1", "s", host, port},
			{"EXISTS", "s"},
			{"EVAL", "return redis.call('MIGRATE', ARGV[1], ARGV[2], KEYS[1], '0', '5000')", "1", "s", host, port},
		}
		tc := dialRaw(t, target)
		for _, st := range steps {
			tc.Do("DEL", "m", "s")
			w := ref.Do(st...)
			tc.Do("DEL", "m", "s")
			h := ours.Do(st...)
			if w != h {
				t.Errorf("%q: redis-server %q, shoal %q", st, w, h)
			}
		}
	}
}

// TestMigrateLogsDel: a migrated key is logged as a DEL, as Redis
// propagates MIGRATE; COPY logs nothing, and MIGRATE itself is never in
// the file. A restart has the key gone.
func TestMigrateLogsDel(t *testing.T) {
	target := startRedis(t)
	host, port := hostPort(t, target)
	for _, policy := range []aof.Fsync{aof.FsyncEverySec, aof.FsyncAlways} {
		s := startAOF(t, policy)
		c := dialRaw(t, s.addr)
		c.Do("MSET", "a", "1", "b", "2", "c", "3")
		c.Do("SET", "d", "4")
		for _, cmd := range [][]string{
			{"MIGRATE", host, port, "", "0", "5000", "REPLACE", "KEYS", "a", "b", "none"},
			{"MIGRATE", host, port, "c", "0", "5000", "COPY", "REPLACE"},
			{"MULTI"},
			{"MIGRATE", host, port, "d", "0", "5000", "REPLACE"},
			{"EXEC"},
		} {
			if r := c.Do(cmd...); r[0] == '-' {
				t.Fatalf("%q: %q", cmd, r)
			}
		}
		log := strings.ReplaceAll(s.stopAndReadLog(t), "\r\n", " ")
		if !strings.Contains(log, "*3 $3 DEL $1 a $1 b ") || strings.Contains(strings.ToUpper(log), "MIGRATE") {
			t.Errorf("%s: the log %q, want DEL a b and no MIGRATE", policy, log)
		}
		if !strings.Contains(log, "*1 $5 MULTI *2 $3 DEL $1 d *1 $4 EXEC ") {
			t.Errorf("%s: the log %q, want DEL d inside MULTI/EXEC", policy, log)
		}
		s = s.restart(t)
		if r := dialRaw(t, s.addr).Do("MGET", "a", "b", "c", "d"); r != "*4\r\n$-1\r\n$-1\r\n$1\r\n3\r\n$-1\r\n" {
			t.Errorf("%s: after a restart MGET a b c = %q", policy, r)
		}
	}
}

// TestMigrateFromClusterRedis: a redis-server in cluster mode migrates
// with RESTORE-ASKING, which Shoal serves as RESTORE.
func TestMigrateFromClusterRedis(t *testing.T) {
	src := dialRaw(t, startRedis(t, "--cluster-enabled", "yes"))
	if r := src.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); r != "+OK\r\n" {
		t.Fatalf("CLUSTER ADDSLOTSRANGE: %q", r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(src.Do("CLUSTER", "INFO"), "cluster_state:ok") {
		if time.Now().After(deadline) {
			t.Fatal("the cluster did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	target := startShoal(t, kv.Options{}, eventloop.Options{})
	tc := dialRaw(t, target.addr)
	host, port := hostPort(t, target.addr)
	src.Do("RPUSH", "{t}l", "a", "b")
	src.Do("PEXPIRE", "{t}l", "100000")
	src.Do("SET", "{t}s", "v")
	want := src.Do("DUMP", "{t}l")
	if r := src.Do("MIGRATE", host, port, "", "0", "5000", "KEYS", "{t}l", "{t}s"); r != "+OK\r\n" {
		t.Fatalf("MIGRATE from the cluster node: %q", r)
	}
	if have := tc.Do("DUMP", "{t}l"); have != want {
		t.Errorf("DUMP on Shoal = %q, want %q", have, want)
	}
	if r := tc.Do("GET", "{t}s"); r != "$1\r\nv\r\n" {
		t.Errorf("GET on Shoal = %q", r)
	}
	if r := tc.Do("PTTL", "{t}l"); !between(r, 90000, 100000) {
		t.Errorf("PTTL on Shoal = %q, want about 100000", r)
	}
	if info := tc.Do("INFO", "commandstats"); !strings.Contains(info, "cmdstat_restore-asking:calls=2,") {
		t.Errorf("Shoal's commandstats show no two RESTORE-ASKING: %q", info)
	}
}

// TestMigrateOfAClientThatLeft: a client that disconnects while the target
// works does not undo the migration: the key the target restored is
// deleted, and the server goes on.
func TestMigrateOfAClientThatLeft(t *testing.T) {
	addr, release, got := heldTarget(t)
	host, port := hostPort(t, addr)
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	c, other := dialRaw(t, srv.addr), dialRaw(t, srv.addr)
	c.Do("SET", "a", "1")
	c.Send(encodeCommand([]string{"MIGRATE", host, port, "a", "0", "5000"}))
	<-got
	c.C.Close()
	time.Sleep(50 * time.Millisecond)
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for other.Do("EXISTS", "a") != ":0\r\n" {
		if time.Now().After(deadline) {
			t.Fatal("the migrated key is still here")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := other.Do("INFO", "clients"); !strings.Contains(r, "blocked_clients:0\r\n") {
		t.Errorf("INFO clients after the migration: %q", r)
	}
}

// TestMigrateUnderClientReplyOff: the parked MIGRATE's reply is dropped
// as any other under CLIENT REPLY OFF and SKIP.
func TestMigrateUnderClientReplyOff(t *testing.T) {
	target := startRedis(t)
	host, port := hostPort(t, target)
	c := dialRaw(t, startShoal(t, kv.Options{}, eventloop.Options{}).addr)
	c.Do("MSET", "a", "1", "b", "2")
	c.Send(encodeCommand([]string{"CLIENT", "REPLY", "SKIP"}))
	c.Send(encodeCommand([]string{"MIGRATE", host, port, "a", "0", "5000"}))
	if r := c.Do("EXISTS", "a"); r != ":0\r\n" {
		t.Errorf("EXISTS a after a skipped MIGRATE's reply = %q", r)
	}
	c.Send(encodeCommand([]string{"CLIENT", "REPLY", "OFF"}))
	c.Send(encodeCommand([]string{"MIGRATE", host, port, "b", "0", "5000"}))
	if r := c.Do("CLIENT", "REPLY", "ON"); r != "+OK\r\n" {
		t.Errorf("CLIENT REPLY ON after a MIGRATE with replies off = %q", r)
	}
}

// between reports whether an integer reply is in [lo, hi].
func between(reply string, lo, hi int) bool {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n"))
	return err == nil && n >= lo && n <= hi
}

// scriptedTarget answers the i-th command it reads (counted over all its
// connections, which MIGRATE opens one after another) with answer(i, cmd);
// an empty answer closes the connection instead.
func scriptedTarget(t *testing.T, answer func(i int, cmd string) string) string {
	t.Helper()
	var count atomic.Int64
	return tcptest.Serve(t, func(c net.Conn, _ int64) {
		rd := bufio.NewReader(c)
		for {
			var sb strings.Builder
			if err := readReply(rd, &sb); err != nil {
				return
			}
			a := answer(int(count.Add(1)-1), sb.String())
			if a == "" {
				return
			}
			if _, err := c.Write([]byte(a)); err != nil {
				return
			}
		}
	}).Addr()
}

// TestMigrateTargetFailsMidway: a target that restores the first key and
// then drops the connection: the first key is gone here, the other kept,
// and the reply is Redis's IOERR; a target that closes before answering
// anything gets one retry on a fresh connection. Compared with
// redis-server as the source against the same scripted targets.
func TestMigrateTargetFailsMidway(t *testing.T) {
	ref := dialRaw(t, startRedis(t))
	ours := dialRaw(t, startShoal(t, kv.Options{}, eventloop.Options{}).addr)
	for _, tc := range []struct {
		name   string
		answer func(i int, cmd string) string
	}{
		{"after one restore", func(i int, _ string) string {
			if i < 2 { // SELECT, the first RESTORE
				return "+OK\r\n"
			}
			return ""
		}},
		{"closes once", func(i int, _ string) string {
			if i == 0 {
				return ""
			}
			return "+OK\r\n"
		}},
		{"always closes", func(int, string) string { return "" }},
		{"a long error", func(int, string) string { return "-ERR " + strings.Repeat("x", 3000) + "\r\n" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var replies [2]string
			for j, src := range []*rawConn{ref, ours} {
				host, port := hostPort(t, scriptedTarget(t, tc.answer))
				src.Do("MSET", "a", "1", "b", "2")
				replies[j] = src.Do("MIGRATE", host, port, "", "0", "2000", "KEYS", "a", "b") +
					src.Do("EXISTS", "a") + src.Do("EXISTS", "b")
				src.Do("DEL", "a", "b")
			}
			if replies[0] != replies[1] {
				t.Errorf("redis-server %q, shoal %q", replies[0], replies[1])
			}
		})
	}
}

// TestMigrateReusesItsConnection: a second MIGRATE to the same target
// uses the cached connection without a SELECT; when the target has
// closed that connection, MIGRATE retries on a fresh one and succeeds.
func TestMigrateReusesItsConnection(t *testing.T) {
	target := startRedis(t)
	tc := dialRaw(t, target)
	host, port := hostPort(t, target)
	c := dialRaw(t, startShoal(t, kv.Options{}, eventloop.Options{}).addr)
	c.Do("MSET", "a", "1", "b", "2", "c", "3")
	for _, k := range []string{"a", "b"} {
		if r := c.Do("MIGRATE", host, port, k, "0", "5000"); r != "+OK\r\n" {
			t.Fatalf("MIGRATE %s: %q", k, r)
		}
	}
	stats := tc.Do("INFO", "commandstats")
	if !strings.Contains(stats, "cmdstat_select:calls=1,") || !strings.Contains(stats, "cmdstat_restore:calls=2,") {
		t.Errorf("the target's commandstats after two MIGRATEs: %q", stats)
	}
	if r := tc.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); r != ":1\r\n" {
		t.Fatalf("CLIENT KILL of the migrating connection: %q", r)
	}
	if r := c.Do("MIGRATE", host, port, "c", "0", "5000"); r != "+OK\r\n" {
		t.Errorf("MIGRATE after the target closed the cached connection: %q", r)
	}
	if r := tc.Do("MGET", "a", "b", "c"); r != "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n" {
		t.Errorf("MGET on the target: %q", r)
	}
}

// TestMigrateToItself: redis-server cannot answer its own MIGRATE and
// times out; Shoal answers the same without waiting, and keeps the key
// (a RESTORE REPLACE into the same database must not end in its DEL).
func TestMigrateToItself(t *testing.T) {
	refAddr := startRedis(t)
	ourAddr := startShoal(t, kv.Options{}, eventloop.Options{}).addr
	var replies [2]string
	for i, addr := range []string{refAddr, ourAddr} {
		c := dialRaw(t, addr)
		host, port := hostPort(t, addr)
		c.Do("SET", "k", "v")
		replies[i] = c.Do("MIGRATE", host, port, "k", "0", "200", "REPLACE") +
			c.Do("MIGRATE", host, port, "k", "1", "200") + c.Do("GET", "k")
	}
	if replies[0] != replies[1] {
		t.Errorf("MIGRATE to itself: redis-server %q, shoal %q", replies[0], replies[1])
	}
}

// TestMigrateCountsTargetErrors: a target's error counts as the call's
// failure and as an error reply in INFO, as in Redis, though it arrives
// after the command was parked.
func TestMigrateCountsTargetErrors(t *testing.T) {
	target := dialRaw(t, startRedis(t))
	target.Do("SET", "k", "there")
	host, port := hostPort(t, target.C.RemoteAddr().String())
	var stats [2]string
	for i, addr := range []string{startRedis(t), startShoal(t, kv.Options{}, eventloop.Options{}).addr} {
		c := dialRaw(t, addr)
		c.Do("SET", "k", "v")
		c.Do("CONFIG", "RESETSTAT")
		c.Do("MIGRATE", host, port, "k", "0", "5000") // BUSYKEY
		c.Do("MULTI")
		c.Do("MIGRATE", host, port, "k", "0", "5000") // and in the command, inside EXEC
		if r := c.Do("EXEC"); !strings.Contains(r, "BUSYKEY") {
			t.Fatalf("EXEC: %q", r)
		}
		info := c.Do("INFO", "all")
		for _, line := range strings.Split(info, "\r\n") {
			if strings.HasPrefix(line, "total_error_replies:") || strings.HasPrefix(line, "errorstat_") {
				stats[i] += line + " "
			}
			if strings.HasPrefix(line, "cmdstat_migrate:") {
				stats[i] += line[strings.Index(line, "rejected_calls"):] + " "
			}
		}
	}
	if stats[0] != stats[1] || !strings.Contains(stats[1], "failed_calls=2") {
		t.Errorf("after a target's BUSYKEY: redis-server %q, shoal %q", stats[0], stats[1])
	}
}

// TestMigrateReachesReplicas: a redis-server replica of a Shoal primary
// loses the key MIGRATE moved, by the DEL the primary propagates.
func TestMigrateReachesReplicas(t *testing.T) {
	primary := startShoal(t, kv.Options{}, eventloop.Options{})
	host, port := hostPort(t, primary.addr)
	replica := dialRaw(t, startRedis(t, "--replicaof", host, port))
	target := startRedis(t)
	thost, tport := hostPort(t, target)
	c := dialRaw(t, primary.addr)
	c.Do("SET", "k", "v")
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("waited 10 s for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the replica to have k", func() bool { return replica.Do("GET", "k") == "$1\r\nv\r\n" })
	if r := c.Do("MIGRATE", thost, tport, "k", "0", "5000"); r != "+OK\r\n" {
		t.Fatalf("MIGRATE: %q", r)
	}
	waitFor("the replica to lose k", func() bool { return replica.Do("EXISTS", "k") == ":0\r\n" })
	// Inside EXEC the DEL is the transaction's first record: the replica
	// gets it between MULTI and EXEC with the write after it.
	c.Do("SET", "k2", "v")
	c.Do("MULTI")
	c.Do("MIGRATE", thost, tport, "k2", "0", "5000")
	c.Do("SET", "after", "1")
	if r := c.Do("EXEC"); r != "*2\r\n+OK\r\n+OK\r\n" {
		t.Fatalf("EXEC: %q", r)
	}
	waitFor("the replica to apply the transaction", func() bool {
		return replica.Do("MGET", "k2", "after") == "*2\r\n$-1\r\n$1\r\n1\r\n"
	})
	if r := replica.Do("INFO", "replication"); !strings.Contains(r, "master_link_status:up") {
		t.Errorf("the replica's link after the transaction: %q", r)
	}
}

// TestMigrateLargeValues: values past the 64 KiB write chunk, a string
// and a list, arrive whole at redis-server and back at Shoal. The timeout
// is generous: 3 MB and its RESTORE under -race on a loaded machine took
// past 5 s.
func TestMigrateLargeValues(t *testing.T) {
	ours := startShoal(t, kv.Options{}, eventloop.Options{}).addr
	ref := startRedis(t)
	c, r := dialRaw(t, ours), dialRaw(t, ref)
	var sb strings.Builder
	for i := 0; sb.Len() < 3<<20; i++ {
		sb.WriteString(strconv.FormatInt(int64(i)*2654435761%1000003, 36))
	}
	big := sb.String()
	c.Do("SET", "s", big)
	args := []string{"RPUSH", "l"}
	for i := 0; i < 20000; i++ {
		args = append(args, strconv.Itoa(i*7919))
	}
	c.Do(args...)
	wantList := c.Do("LRANGE", "l", "0", "-1")
	host, port := hostPort(t, ref)
	if rep := c.Do("MIGRATE", host, port, "", "0", "60000", "KEYS", "s", "l"); rep != "+OK\r\n" {
		t.Fatalf("MIGRATE to redis-server: %q", rep)
	}
	if got := r.Do("GET", "s"); got != "$"+strconv.Itoa(len(big))+"\r\n"+big+"\r\n" {
		t.Errorf("GET s on redis-server: %d bytes, want %d", len(got), len(big))
	}
	if got := r.Do("LRANGE", "l", "0", "-1"); got != wantList {
		t.Errorf("LRANGE l on redis-server differs (%d bytes, want %d)", len(got), len(wantList))
	}
	host, port = hostPort(t, ours)
	if rep := r.Do("MIGRATE", host, port, "", "0", "60000", "KEYS", "s", "l"); rep != "+OK\r\n" {
		t.Fatalf("MIGRATE back to Shoal: %q", rep)
	}
	if got := c.Do("STRLEN", "s"); got != ":"+strconv.Itoa(len(big))+"\r\n" {
		t.Errorf("STRLEN s back on Shoal: %q", got)
	}
	if got := c.Do("LRANGE", "l", "0", "-1"); got != wantList {
		t.Errorf("LRANGE l back on Shoal differs")
	}
}
