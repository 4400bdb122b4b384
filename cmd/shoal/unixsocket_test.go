package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io/fs"
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
	"github.com/shoalkv/shoal/internal/shoaltest"
)

// onGnet reports whether the shoal binaries of this run serve on the gnet
// engine (CI's second pass sets SHOAL_ENGINE=gnet, which they inherit).
func onGnet() bool { return os.Getenv("SHOAL_ENGINE") == "gnet" }

// startUnix runs the shoal binary with args (which name the port and the
// socket) and waits until the Unix socket at sock answers PING; the
// cleanup kills it by PID if the test has not stopped it.
func startUnix(t *testing.T, sock string, args ...string) *shoalProc {
	t.Helper()
	cmd := exec.Command(shoalBin, args...)
	stderr := new(logtest.Log)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &shoalProc{cmd: cmd, stderr: stderr, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	if !waitUnixPing(sock, 10*time.Second) {
		t.Fatalf("shoal did not answer on %s; stderr:\n%s", sock, stderr.String())
	}
	return p
}

// waitUnixPing reports whether the Unix socket at path answers an inline
// PING within the time given.
func waitUnixPing(path string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte("PING\r\n"))
			line, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err == nil && line == "+PONG\r\n" {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// dialUnix connects to the Unix socket at path; the connection closes
// when the test ends.
func dialUnix(t *testing.T, path string) *shoaltest.RawConn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &shoaltest.RawConn{T: t, C: c, Rd: bufio.NewReader(c)}
}

// clientFields picks the fields named from a CLIENT INFO or CLIENT LIST
// line, in order, with the socket's path written as SOCK.
func clientFields(line, sock string, names ...string) string {
	var out []string
	for _, f := range strings.Fields(line) {
		for _, n := range names {
			if strings.HasPrefix(f, n+"=") {
				out = append(out, strings.ReplaceAll(f, sock, "SOCK"))
			}
		}
	}
	return strings.Join(out, " ")
}

// tcpListeners returns the local addresses of the TCP sockets process pid
// listens on, from /proc: its descriptors' socket inodes, matched against
// the kernel's tables of listening sockets.
func tcpListeners(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue // no IPv6
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st ... inode (the tenth field)
			if len(f) >= 10 && f[3] == "0A" && inodes[f[9]] {
				out = append(out, f[1])
			}
		}
	}
	return out
}

// TestUnixSocketAlone: --port 0 --unixsocket serves RESP on the socket
// only, as redis-server does: no TCP listener, the socket made with
// unixsocketperm's mode, CONFIG GET reporting both settings and the port 0,
// CONFIG SET refusing them as immutable with Redis 7.0's text, and the
// socket file removed at exit. On both engines (CI's gnet pass).
func TestUnixSocketAlone(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "shoal.sock")
	p := startUnix(t, sock, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700")
	info, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Type() != fs.ModeSocket || info.Mode().Perm() != 0o700 {
		t.Errorf("socket file mode %v, want a socket with 0700 (srwx------)", info.Mode())
	}
	if ls := tcpListeners(t, p.cmd.Process.Pid); len(ls) != 0 {
		t.Errorf("with --port 0 shoal listens on TCP %v", ls)
	}
	c := dialUnix(t, sock)
	for _, tc := range []struct{ args, want string }{
		{"CONFIG GET unixsocket", "*2\r\n$10\r\nunixsocket\r\n$" + strconv.Itoa(len(sock)) + "\r\n" + sock + "\r\n"},
		{"CONFIG GET unixsocketperm", "*2\r\n$14\r\nunixsocketperm\r\n$3\r\n700\r\n"},
		{"CONFIG GET port", "*2\r\n$4\r\nport\r\n$1\r\n0\r\n"},
		{"CONFIG GET bind", "*2\r\n$4\r\nbind\r\n$9\r\n127.0.0.1\r\n"},
		{"CONFIG SET unixsocket /tmp/other.sock", "-ERR CONFIG SET failed (possibly related to argument 'unixsocket') - can't set immutable config\r\n"},
		{"CONFIG SET unixsocketperm 777", "-ERR CONFIG SET failed (possibly related to argument 'unixsocketperm') - can't set immutable config\r\n"},
		{"SET k v", "+OK\r\n"},
		{"GET k", "$1\r\nv\r\n"},
	} {
		if got := c.Do(strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.args, got, tc.want)
		}
	}
	p.terminate(t)
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket file is still there after SIGTERM: %v", err)
	}
	if !strings.Contains(p.stderr.String(), "shoal ready to accept connections") || !strings.Contains(p.stderr.String(), sock) {
		t.Errorf("the ready line does not name the socket; stderr:\n%s", p.stderr.String())
	}
}

// TestUnixSocketClientsAsRedis: a Unix-socket client looks the same on
// Shoal as on redis-server 7.0.15, each with its own socket: CLIENT INFO's
// addr and laddr are "/path:0" and its flags U (also beside others, in
// Redis's order), CLIENT LIST and CLIENT KILL ADDR take that address, MONITOR
// names the client "unix:/path", and enable-debug-command local counts it
// as local.
func TestUnixSocketClientsAsRedis(t *testing.T) {
	redistest.Binary(t, "redis-server")
	dir := t.TempDir()
	rsock, ssock := filepath.Join(dir, "redis.sock"), filepath.Join(dir, "shoal.sock")
	redistest.StartServer(t, "--unixsocket", rsock, "--enable-debug-command", "local")
	if !waitUnixPing(rsock, 10*time.Second) {
		t.Fatal("redis-server does not answer on its socket")
	}
	startUnix(t, ssock, "--port", "0", "--unixsocket", ssock, "--enable-debug-command", "local")

	type result struct{ info, flags, list, debug, monitor, kill string }
	observe := func(sock string) result {
		var r result
		c := dialUnix(t, sock)
		r.info = clientFields(c.Do("CLIENT", "INFO"), sock, "addr", "laddr", "flags")
		// U among other flags, in Redis's order: d (a WATCHed key
		// changed), U, e (CLIENT NO-EVICT).
		c.Do("WATCH", "w")
		dialUnix(t, sock).Do("SET", "w", "changed")
		c.Do("CLIENT", "NO-EVICT", "on")
		r.flags = clientFields(c.Do("CLIENT", "INFO"), sock, "flags")
		c.Do("UNWATCH")
		r.list = clientFields(c.Do("CLIENT", "LIST"), sock, "addr", "laddr", "flags")
		r.debug = c.Do("DEBUG", "SLEEP", "0")

		mon := dialUnix(t, sock)
		if got := mon.Do("MONITOR"); got != "+OK\r\n" {
			t.Fatalf("MONITOR on %s = %q", sock, got)
		}
		c.Do("SET", "k", "v")
		line, err := mon.Read()
		if err != nil {
			t.Fatalf("reading MONITOR on %s: %v", sock, err)
		}
		// "+1700000000.123456 [0 unix:/path] "set" "k" "v"": drop the time.
		if i := strings.IndexByte(line, '['); i >= 0 {
			line = line[i:]
		}
		r.monitor = strings.ReplaceAll(line, sock, "SOCK")

		victim := dialUnix(t, sock)
		victim.Do("PING")
		r.kill = c.Do("CLIENT", "KILL", sock+":0") // the old form: one client with that address
		return r
	}
	want, got := observe(rsock), observe(ssock)
	if want.info != "addr=SOCK:0 laddr=SOCK:0 flags=U" || want.flags != "flags=dUe" {
		t.Fatalf("redis-server's CLIENT INFO over its socket is %q, %q; the test's premise is wrong", want.info, want.flags)
	}
	if got != want {
		t.Errorf("over a Unix socket Shoal shows\n%+v\nredis-server shows\n%+v", got, want)
	}
}

// TestUnixSocketBesideTCP: with a port and a socket, the native engine
// serves both, and a TCP client sees the socket's clients in CLIENT LIST;
// the gnet engine serves one address, so there shoal refuses to start and
// says to use port 0.
func TestUnixSocketBesideTCP(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "shoal.sock")
	if onGnet() {
		out, err := exec.Command(shoalBin, "--port", strconv.Itoa(freePort(t)), "--unixsocket", sock).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "the gnet engine serves one address (--port 0 serves the socket alone)") {
			t.Fatalf("on gnet a port and a socket: %v, output:\n%s", err, out)
		}
		return
	}
	p := startBinary(t, "--unixsocket", sock)
	if !waitUnixPing(sock, 10*time.Second) {
		t.Fatalf("no PONG on %s; stderr:\n%s", sock, p.stderr.String())
	}
	u := dialUnix(t, sock)
	if got := u.Do("CLIENT", "SETNAME", "onsocket"); got != "+OK\r\n" {
		t.Fatalf("CLIENT SETNAME = %q", got)
	}
	tcp := redis.NewClient(&redis.Options{Addr: p.addr()})
	defer tcp.Close()
	list, err := tcp.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(list, "\n") {
		if strings.Contains(l, " name=onsocket ") {
			line = l
		}
	}
	if got := clientFields(line, sock, "addr", "laddr", "flags"); got != "addr=SOCK:0 laddr=SOCK:0 flags=U" {
		t.Errorf("CLIENT LIST over TCP shows the socket's client as %q (line %q)", got, line)
	}
	if got := clientFields(list, sock, "flags"); !strings.Contains(got, "flags=N") {
		t.Errorf("the TCP client is not flagged N: %q", got)
	}
	if !strings.Contains(p.stderr.String(), `msg="also listening" addr=`+sock) {
		t.Errorf("the log does not name the socket; stderr:\n%s", p.stderr.String())
	}
	p.terminate(t)
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket file is still there after SIGTERM: %v", err)
	}
}

// TestUnixSocketBesideTLSAlone: --port 0 with a --tls-port and a socket
// serves both, the TLS port as the main address and the socket beside it.
// TLS needs the native engine, which the TLS tests' flags ask for.
func TestUnixSocketBesideTLSAlone(t *testing.T) {
	f := newTLSFiles(t)
	sock, tlsPort := filepath.Join(t.TempDir(), "shoal.sock"), freePort(t)
	p := startUnix(t, sock, f.args(tlsPort, "--port", "0", "--tls-auth-clients", "no", "--unixsocket", sock)...)
	c, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(tlsPort), f.clientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "SET k over-tls\r\n")
	if got := string(readReply(t, c)); got != "+OK\r\n" {
		t.Fatalf("SET over TLS: %q", got)
	}
	if got := dialUnix(t, sock).Do("GET", "k"); got != "$8\r\nover-tls\r\n" {
		t.Errorf("GET over the socket of a key set over TLS = %q", got)
	}
	if ls := tcpListeners(t, p.cmd.Process.Pid); len(ls) != 1 {
		t.Errorf("TCP listeners %v, want the TLS port's alone", ls)
	}
	p.terminate(t)
}

// TestUnixSocketLeftByACrash: a socket file left by a shoal killed with
// SIGKILL is replaced at the next start, as Redis unlinks it before
// binding, and SHUTDOWN removes it; a path that is not a socket (a regular
// file, a directory) is refused with the reason and left as it was, where
// Redis would delete it.
func TestUnixSocketLeftByACrash(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "shoal.sock")
	first := startUnix(t, sock, "--port", "0", "--unixsocket", sock)
	if got := dialUnix(t, sock).Do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET = %q", got)
	}
	first.kill(t)
	if info, err := os.Lstat(sock); err != nil || info.Mode().Type() != fs.ModeSocket {
		t.Fatalf("a killed shoal should leave its socket file behind: %v", err)
	}
	second := startUnix(t, sock, "--port", "0", "--unixsocket", sock)
	c := dialUnix(t, sock)
	if got := c.Do("DBSIZE"); got != ":0\r\n" {
		t.Errorf("DBSIZE on the restarted server = %q, want a fresh one", got)
	}
	// SHUTDOWN, like SIGTERM, removes the socket file.
	_, _ = c.C.Write([]byte("SHUTDOWN NOSAVE\r\n"))
	select {
	case err := <-second.done:
		second.done <- err
		if err != nil {
			t.Fatalf("exit after SHUTDOWN: %v; stderr:\n%s", err, second.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("shoal did not exit after SHUTDOWN; stderr:\n%s", second.stderr.String())
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket file is still there after SHUTDOWN: %v", err)
	}

	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, what := range map[string]string{file: "a regular file", dir: "a directory"} {
		out, err := exec.Command(shoalBin, "--port", "0", "--unixsocket", path).CombinedOutput()
		want := ": the path is " + what + ", not a socket; refusing to replace it"
		if err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), path) {
			t.Errorf("--unixsocket %s: %v, output:\n%s\nwant it to say %q", path, err, out, want)
		}
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "keep me\n" {
		t.Errorf("the regular file was touched: %q, %v", data, err)
	}
}

// TestUnixSocketRealClients: redis-cli -s, redis-benchmark -s and go-redis
// with Network "unix" against a shoal serving the socket alone.
func TestUnixSocketRealClients(t *testing.T) {
	cli, bench := redistest.Binary(t, "redis-cli"), redistest.Binary(t, "redis-benchmark")
	sock := filepath.Join(t.TempDir(), "shoal.sock")
	startUnix(t, sock, "--port", "0", "--unixsocket", sock)

	out, err := exec.Command(cli, "-s", sock, "SET", "greeting", "hello").CombinedOutput()
	if err != nil || string(out) != "OK\n" {
		t.Fatalf("redis-cli -s SET: %v %q", err, out)
	}
	out, err = exec.Command(cli, "-s", sock, "GET", "greeting").CombinedOutput()
	if err != nil || string(out) != "hello\n" {
		t.Fatalf("redis-cli -s GET: %v %q", err, out)
	}

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rdb.Close()
	if v, err := rdb.Get(ctx, "greeting").Result(); err != nil || v != "hello" {
		t.Fatalf("go-redis GET over the socket: %q %v", v, err)
	}
	pipe := rdb.Pipeline()
	for i := 0; i < 100; i++ {
		pipe.Incr(ctx, "counter")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Get(ctx, "counter").Int(); err != nil || n != 100 {
		t.Fatalf("counter after 100 pipelined INCRs = %d, %v", n, err)
	}

	// -r spreads the keys so DBSIZE proves the SETs arrived.
	out, err = exec.Command(bench, "-s", sock, "-n", "2000", "-c", "10", "-P", "4", "-r", "1000", "-t", "set,get", "-q").CombinedOutput()
	if err != nil {
		t.Fatalf("redis-benchmark -s: %v\n%s", err, out)
	}
	for _, test := range []string{"SET", "GET"} {
		if !regexp.MustCompile(`(?m)` + test + `: [0-9.]+ requests per second`).Match(out) {
			t.Errorf("redis-benchmark -s reported no %s throughput:\n%s", test, out)
		}
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n < 3 {
		t.Errorf("DBSIZE after redis-benchmark = %d, %v: its SETs did not land", n, err)
	}
}

// TestUnixSocketIsLocalForProtectedMode: protected mode (on, no password)
// serves a Unix-socket client as Redis does, as local, even bound to every
// address; on the native engine, the same server refuses a TCP client from
// a non-loopback address, so protected mode was on.
func TestUnixSocketIsLocalForProtectedMode(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "shoal.sock")
	args := []string{"--bind", "0.0.0.0", "--protected-mode", "yes", "--unixsocket", sock}
	port := "0"
	if !onGnet() {
		port = strconv.Itoa(freePort(t))
	}
	startUnix(t, sock, append([]string{"--port", port}, args...)...)
	if got := dialUnix(t, sock).Do("SET", "k", "v"); got != "+OK\r\n" {
		t.Errorf("a Unix-socket client under protected mode: SET = %q, want +OK", got)
	}
	if port == "0" || os.Geteuid() != 0 {
		return
	}
	const ip = "10.123.77.2" // not server's 10.123.77.1: the packages' tests run in parallel
	_ = exec.Command("ip", "addr", "del", ip+"/32", "dev", "lo").Run()
	if out, err := exec.Command("ip", "addr", "add", ip+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Skipf("ip addr add: %v %s", err, out)
	}
	defer func() { _ = exec.Command("ip", "addr", "del", ip+"/32", "dev", "lo").Run() }()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("PING\r\n"))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "-DENIED") {
		t.Errorf("a TCP client from %s got %q, want protected mode's -DENIED", ip, line)
	}
}

// TestUnixSocketSettings: the flags and the configuration file take
// unixsocket and unixsocketperm with Redis 7.0's reasons for bad values;
// port 0 needs a socket (Redis: "Configured to not listen anywhere").
func TestUnixSocketSettings(t *testing.T) {
	none := func(string) string { return "" }
	c, err := parseConfig([]string{"--port", "0", "--unixsocket", "/run/shoal.sock", "--unixsocketperm", "0770"}, none)
	if err != nil {
		t.Fatal(err)
	}
	if c.Get("unixsocket") != "/run/shoal.sock" || c.Get("unixsocketperm") != "770" {
		t.Errorf("unixsocket %q unixsocketperm %q", c.Get("unixsocket"), c.Get("unixsocketperm"))
	}
	conf := filepath.Join(t.TempDir(), "shoal.conf")
	if err := os.WriteFile(conf, []byte("port 0\nunixsocket /run/redis/redis-server.sock\nunixsocketperm 700\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = parseConfig([]string{conf}, none)
	if err != nil {
		t.Fatal(err)
	}
	if c.Get("unixsocket") != "/run/redis/redis-server.sock" || c.Get("unixsocketperm") != "700" || c.Int("port") != 0 {
		t.Errorf("from the file: unixsocket %q unixsocketperm %q port %d", c.Get("unixsocket"), c.Get("unixsocketperm"), c.Int("port"))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "0"}, "--port 0, no --tls-port and no --unixsocket: configured to not listen anywhere"},
		{[]string{"--unixsocket", "/tmp/s.sock", "--unixsocketperm", "999"}, `--unixsocketperm "999": argument couldn't be parsed as an octal number`},
		{[]string{"--unixsocket", "/tmp/s.sock", "--unixsocketperm", "1000"}, `--unixsocketperm "1000": argument must be between 0 and 777 inclusive`},
		{[]string{"--unixsocket", "/tmp/s.sock", "--unixsocketperm", "-1"}, `--unixsocketperm "-1": argument must be between 0 and 777 inclusive`},
		{[]string{"--port", "7000", "--unixsocket", "/tmp/s.sock", "--engine", "gnet"}, "the gnet engine serves one address"},
	} {
		_, err := parseConfig(tc.args, none)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.args, err, tc.want)
		}
	}
}
