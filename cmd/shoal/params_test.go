package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/redistest"
)

// TestEveryBalancerAndEngineIsBuilt: the names --balancer and --engine
// accept (their rows in config.Params) are exactly those run can build.
func TestEveryBalancerAndEngineIsBuilt(t *testing.T) {
	built := map[string][]string{"balancer": {}, "engine": {}}
	for name := range balancers {
		built["balancer"] = append(built["balancer"], name)
	}
	for name := range engines {
		built["engine"] = append(built["engine"], name)
	}
	for _, p := range config.Params() {
		names, ok := built[p.Name]
		if !ok {
			continue
		}
		accepted := slices.Clone([]string(p.Kind.(config.EnumKind)))
		slices.Sort(accepted)
		slices.Sort(names)
		if !slices.Equal(accepted, names) {
			t.Errorf("--%s accepts %q, run builds %q", p.Name, accepted, names)
		}
		delete(built, p.Name)
	}
	if len(built) != 0 {
		t.Errorf("no rows for %v", built)
	}
}

// TestAppendfsyncWithoutAppendonly: --appendfsync is the policy CONFIG
// reports (and a file would get) even while no file is attached; it used to
// stop at the command line and CONFIG GET said everysec.
func TestAppendfsyncWithoutAppendonly(t *testing.T) {
	p := startBinary(t, "--appendonly", "no", "--appendfsync", "always")
	c := client(t, p.addr())
	got, err := c.ConfigGet(context.Background(), "append*").Result()
	if err != nil || got["appendonly"] != "no" || got["appendfsync"] != "always" {
		t.Fatalf("CONFIG GET append*: %v %v", got, err)
	}
}

// TestFlagErrorsNameTheValueAndTheLimit: a value a row's kind refuses is
// reported with the flag or variable, the value and what is wanted.
func TestFlagErrorsNameTheValueAndTheLimit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--port", "70000"}, nil, `--port "70000": argument must be between 0 and 65535 inclusive`},
		{[]string{"--idle-timeout", "soon"}, nil, `--idle-timeout "soon": argument must be a duration`},
		{nil, map[string]string{"SHOAL_MAXMEMORY": "lots"}, `SHOAL_MAXMEMORY "lots": argument must be a memory value`},
		{[]string{"--max-query-buffer", "10"}, nil, `--max-query-buffer "10": argument must be between 1024 and 1099511627776 inclusive`},
		{[]string{"--balancer", "random"}, nil, `--balancer "random": argument(s) must be one of the following: roundrobin, leastconn, loadaware`},
	} {
		_, err := parseConfig(tc.args, func(k string) string { return tc.env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q %v: %v, want %s", tc.args, tc.env, err, tc.want)
		}
	}
}

// TestOutputLimitFlag: --client-output-buffer-limit sets the classes it
// names, as in redis.conf, and keeps Redis's defaults for the others.
func TestOutputLimitFlag(t *testing.T) {
	p := startBinary(t, "--client-output-buffer-limit", "pubsub 64mb 16mb 90", "--maxmemory-clients", "5%")
	c := client(t, p.addr())
	got, err := c.ConfigGet(context.Background(), "*-clients").Result()
	if err != nil || got["maxmemory-clients"] != "5%" {
		t.Errorf("CONFIG GET maxmemory-clients: %v %v", got, err)
	}
	got, err = c.ConfigGet(context.Background(), "client-output-buffer-limit").Result()
	if want := "normal 0 0 0 slave 268435456 67108864 60 pubsub 67108864 16777216 90"; err != nil || got["client-output-buffer-limit"] != want {
		t.Errorf("CONFIG GET client-output-buffer-limit: %v %v, want %q", got, err, want)
	}
}

// TestConfigFile: `shoal /path/shoal.conf --flag v`, as redis-server is
// started: the file's directives apply, a flag overrides the file, INFO
// names the file; a bad line stops the start with its file and line.
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "shoal.conf")
	text := fmt.Sprintf("# as a container would mount it\nport %d\nbind 127.0.0.1\ndatabases 4\nmaxmemory 10mb\nmaxmemory-policy allkeys-lru\n", port)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shoalBin, conf, "--maxmemory", "20mb")
	stderr := new(logtest.Log)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if !redistest.WaitPing(addr, 10*time.Second) {
		t.Fatalf("shoal did not start from %s; log:\n%s", conf, stderr.String())
	}
	c := client(t, addr)
	ctx := context.Background()
	for name, want := range map[string]string{"maxmemory": "20971520", "maxmemory-policy": "allkeys-lru", "databases": "4"} {
		if got := c.ConfigGet(ctx, name).Val()[name]; got != want {
			t.Errorf("CONFIG GET %s = %q, want %q", name, got, want)
		}
	}
	if err := c.Do(ctx, "SELECT", "4").Err(); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("SELECT 4 with databases 4 in the file: %v", err)
	}
	if info := c.Info(ctx, "server").Val(); !strings.Contains(info, "config_file:"+conf+"\r\n") {
		t.Errorf("INFO server does not name %s:\n%s", conf, info)
	}

	// CONFIG REWRITE writes what CONFIG SET changed; a restart from the
	// file has it.
	if err := c.ConfigSet(ctx, "maxmemory-policy", "volatile-ttl").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatalf("CONFIG REWRITE: %v", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	cmd2 := exec.Command(shoalBin, conf)
	cmd2.Stderr = stderr
	if err := cmd2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd2.Process.Kill(); _ = cmd2.Wait() })
	if !redistest.WaitPing(addr, 10*time.Second) {
		t.Fatalf("shoal did not restart from the rewritten %s; log:\n%s", conf, stderr.String())
	}
	if got := client(t, addr).ConfigGet(ctx, "maxmemory-policy").Val()["maxmemory-policy"]; got != "volatile-ttl" {
		b, _ := os.ReadFile(conf)
		t.Fatalf("after CONFIG REWRITE and a restart maxmemory-policy is %q; file:\n%s", got, b)
	}

	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("port 7000\nappendonly maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(shoalBin, bad).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), bad+":2: 'appendonly maybe'") {
		t.Fatalf("a bad line: %v, output %q; want exit 2 naming %s:2", err, out, bad)
	}
}

// TestClientQueryBufferLimitIsMaxQueryBuffer: Redis's name for the bound on
// a client's unparsed input sets Shoal's max-query-buffer, so a redis.conf
// or a flag that sets it bounds the same thing: CONFIG GET answers it under
// both names, and a client whose unparsed input passes it is closed.
func TestClientQueryBufferLimitIsMaxQueryBuffer(t *testing.T) {
	p := startBinary(t, "--client-query-buffer-limit", "4kb")
	c := client(t, p.addr())
	ctx := context.Background()
	for _, name := range []string{"client-query-buffer-limit", "max-query-buffer"} {
		got, err := c.ConfigGet(ctx, name).Result()
		if err != nil || got[name] != "4096" {
			t.Fatalf("CONFIG GET %s: %v %v", name, got, err)
		}
	}
	conn := p.dial(t)
	// A bulk string announced at 1 MB, of which 16 KB arrive: unparsed
	// input past the 4 KB bound.
	if _, err := conn.Write([]byte("*2\r\n$3\r\nGET\r\n$1048576\r\n" + strings.Repeat("x", 16<<10))); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 512)
	for {
		if _, err := conn.Read(buf); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal("the connection stayed open past client-query-buffer-limit")
			}
			break // closed, as the bound promises
		}
	}
	// The server goes on serving others.
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after the close: %v", err)
	}
}
