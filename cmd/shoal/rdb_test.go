package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/internal/waittest"
)

// Snapshots with the real tools: files shoal writes pass redis-check-rdb
// and load into redis-server with the same DEBUG DIGEST (which covers
// every key, value and expiry of every database), files redis-server
// writes load into shoal at startup with the same digest.

func dbClient(t *testing.T, addr string, db int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// digest is DEBUG DIGEST, given a minute: over 100k keys and the large
// collections a busy machine may take more than go-redis's default 3 s.
func digest(t *testing.T, addr string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: time.Minute})
	defer c.Close()
	d, err := c.Do(context.Background(), "DEBUG", "DIGEST").Text()
	if err != nil {
		t.Fatalf("DEBUG DIGEST at %s: %v", addr, err)
	}
	return d
}

// fillEveryType writes each type in its small and large encodings, with
// and without expiries, in databases 0, 1 and 9, and a function library.
func fillEveryType(t *testing.T, addr string) {
	t.Helper()
	ctx := context.Background()
	for _, db := range []int{0, 1, 9} {
		c := dbClient(t, addr, db)
		p := c.Pipeline()
		p.Set(ctx, "int", "12345", 0)
		p.Set(ctx, "neg", "-9000000000", 0)
		p.Set(ctx, "short", "hello "+strconv.Itoa(db), 0)
		p.Set(ctx, "long", strings.Repeat("compress me ", 500), 0)
		p.Set(ctx, "binary", "\x00\xff\r\n", 0)
		p.Set(ctx, "ttl", "soon", time.Hour)
		p.RPush(ctx, "list-small", "a", "1", "b")
		p.RPush(ctx, "list-ttl", "x")
		p.PExpire(ctx, "list-ttl", 2*time.Hour)
		p.HSet(ctx, "hash-small", "f1", "v1", "f2", "2")
		p.HSet(ctx, "hash-long-value", "f", strings.Repeat("v", 100))
		p.SAdd(ctx, "set-ints", 1, 2, 3, -7)
		p.SAdd(ctx, "set-strings", "a", "b", "c")
		p.ZAdd(ctx, "zset-small", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: "b"})
		for i := 0; i < 700; i++ {
			s := strconv.Itoa(i)
			p.RPush(ctx, "list-big", "element-"+s)
			p.HSet(ctx, "hash-big", "field-"+s, s)
			p.SAdd(ctx, "set-big-ints", i*3)
			p.SAdd(ctx, "set-big", "member-"+s)
			p.ZAdd(ctx, "zset-big", redis.Z{Score: float64(i) / 7, Member: "m-" + s})
		}
		p.Expire(ctx, "zset-big", 3*time.Hour)
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("filling database %d: %v", db, err)
		}
	}
	code := "#!lua name=savelib\nredis.register_function('answer', function() return 42 end)"
	if err := dbClient(t, addr, 0).FunctionLoad(ctx, code).Err(); err != nil {
		t.Fatal(err)
	}
}

// redisOn starts redis-server on the snapshot in dir.
func redisOn(t *testing.T, dir string) string {
	t.Helper()
	return redistest.StartServer(t, "--dir", dir, "--dbfilename", "dump.rdb", "--enable-debug-command", "yes")
}

// info returns one field of INFO persistence.
func persistenceField(t *testing.T, c *redis.Client, name string) string {
	t.Helper()
	s, err := c.Info(context.Background(), "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `:(.*)\r$`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("INFO persistence has no %s:\n%s", name, s)
	}
	return m[1]
}

// waitBGSave polls until no BGSAVE runs and returns its status.
func waitBGSave(t *testing.T, c *redis.Client) string {
	t.Helper()
	waittest.Until(t, 30*time.Second, "BGSAVE to finish", func() bool {
		return persistenceField(t, c, "rdb_bgsave_in_progress") == "0"
	})
	return persistenceField(t, c, "rdb_last_bgsave_status")
}

// sameValueLoad rewrites keys with the values they already hold and reads
// them, from several clients, until stop: writes that keep the digest
// fixed whenever a snapshot sees them. It returns how many commands
// failed.
func sameValueLoad(addr string, keys int, stop <-chan struct{}) (wait func() (ops, failed int64)) {
	var ops, failed atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer c.Close()
			ctx := context.Background()
			for i := w; ; i += 4 {
				select {
				case <-stop:
					return
				default:
				}
				k := "load:" + strconv.Itoa(i%keys)
				if err := c.Set(ctx, k, "value-"+strconv.Itoa(i%keys), 0).Err(); err != nil {
					failed.Add(1)
				}
				if v, err := c.Get(ctx, k).Result(); err != nil || v != "value-"+strconv.Itoa(i%keys) {
					failed.Add(1)
				}
				ops.Add(2)
			}
		}(w)
	}
	return func() (int64, int64) {
		wg.Wait()
		return ops.Load(), failed.Load()
	}
}

func fillLoadKeys(t *testing.T, addr string, keys int) {
	t.Helper()
	ctx := context.Background()
	p := dbClient(t, addr, 0).Pipeline()
	for i := 0; i < keys; i++ {
		p.Set(ctx, "load:"+strconv.Itoa(i), "value-"+strconv.Itoa(i), 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRDBSaveAndBGSaveUnderLoadLoadIntoRedis(t *testing.T) {
	redistest.Binary(t, "redis-server")
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir, "--enable-debug-command", "yes")
	fillEveryType(t, p.addr())
	const loadKeys = 100000
	fillLoadKeys(t, p.addr(), loadKeys)
	want := digest(t, p.addr())
	c := client(t, p.addr())
	ctx := context.Background()

	for _, cmd := range []string{"BGSAVE", "SAVE"} {
		stop := make(chan struct{})
		wait := sameValueLoad(p.addr(), loadKeys, stop)
		reply, err := c.Do(ctx, cmd).Text()
		if cmd == "BGSAVE" {
			if err != nil || reply != "Background saving started" {
				t.Fatalf("BGSAVE: %q %v", reply, err)
			}
			if status := waitBGSave(t, c); status != "ok" {
				t.Fatalf("rdb_last_bgsave_status %s; stderr:\n%s", status, p.stderr.String())
			}
		} else if err != nil || reply != "OK" {
			t.Fatalf("SAVE: %q %v", reply, err)
		}
		close(stop)
		ops, failed := wait()
		if failed != 0 || ops == 0 {
			t.Fatalf("%s: %d of %d GET/SET during it failed", cmd, failed, ops)
		}
		saved := filepath.Join(dir, "dump.rdb")
		redistest.CheckRDB(t, saved)
		copyDir := t.TempDir()
		b, err := os.ReadFile(saved)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, "dump.rdb"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		raddr := redisOn(t, copyDir)
		if got := digest(t, raddr); got != want {
			t.Fatalf("after %s redis-server's digest is %s, shoal's %s", cmd, got, want)
		}
		if n, err := dbClient(t, raddr, 0).FCall(ctx, "answer", nil).Int(); err != nil || n != 42 {
			t.Fatalf("FCALL answer on redis-server: %d %v", n, err)
		}
	}
	if got := persistenceField(t, c, "rdb_saves"); got != "2" {
		t.Fatalf("rdb_saves %s, want 2", got)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "temp-*.rdb")); len(files) != 0 {
		t.Fatalf("temp files left: %v", files)
	}
}

func TestRDBFromRedisServerLoadsAtStartup(t *testing.T) {
	redistest.Binary(t, "redis-server")
	rdir := t.TempDir()
	raddr := redisOn(t, rdir)
	fillEveryType(t, raddr)
	ctx := context.Background()
	// A key already expired in the file is skipped at load, as a primary
	// does, and so is absent from the digest after redis-server drops it.
	if err := dbClient(t, raddr, 0).Set(ctx, "gone", "x", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if err := dbClient(t, raddr, 0).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(rdir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	for dbClient(t, raddr, 0).Exists(ctx, "gone").Val() != 0 {
		time.Sleep(20 * time.Millisecond)
	}
	want := digest(t, raddr)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startBinary(t, "--dir", dir, "--enable-debug-command", "yes")
	if got := digest(t, p.addr()); got != want {
		t.Fatalf("shoal's digest %s, redis-server's %s; stderr:\n%s", got, want, p.stderr.String())
	}
	if n, err := dbClient(t, p.addr(), 0).FCall(ctx, "answer", nil).Int(); err != nil || n != 42 {
		t.Fatalf("FCALL answer: %d %v", n, err)
	}
	c := client(t, p.addr())
	if got := persistenceField(t, c, "rdb_last_load_keys_expired"); got != "1" {
		t.Fatalf("rdb_last_load_keys_expired %s, want 1", got)
	}
	if got := persistenceField(t, c, "rdb_changes_since_last_save"); got != "0" {
		t.Fatalf("rdb_changes_since_last_save %s after the load, want 0", got)
	}
}

func TestRDBKill9AfterBGSaveRestartLoadsIt(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir, "--enable-debug-command", "yes")
	fillEveryType(t, p.addr())
	want := digest(t, p.addr())
	c := client(t, p.addr())
	if err := c.BgSave(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if status := waitBGSave(t, c); status != "ok" {
		t.Fatalf("BGSAVE status %s", status)
	}
	// Written after the save: gone after the crash.
	if err := c.Set(context.Background(), "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	p.kill(t)
	p2 := startBinary(t, "--dir", dir, "--enable-debug-command", "yes")
	if got := digest(t, p2.addr()); got != want {
		t.Fatalf("after kill -9 and restart the digest is %s, want %s", got, want)
	}
}

func TestRDBCorruptFileStopsTheStart(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir)
	fillEveryType(t, p.addr())
	if err := client(t, p.addr()).Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	p.terminate(t)
	path := filepath.Join(dir, "dump.rdb")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0x40
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"flipped byte", flipped, `at byte \d+: `},
		{"truncated", good[:len(good)*2/3], `at byte \d+: .*(end of input|truncated)`},
		{"no checksum", good[:len(good)-8], `at byte \d+: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			stderr, err := runToExit(t, "--dir", dir)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("shoal started on a corrupt snapshot (err %v); stderr:\n%s", err, stderr)
			}
			if !regexp.MustCompile(tc.want).MatchString(stderr) || !strings.Contains(stderr, "dump.rdb") {
				t.Fatalf("stderr does not name the file and offset (want %q):\n%s", tc.want, stderr)
			}
		})
	}
}

func TestRDBSavePolicyTriggersABackgroundSave(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir)
	c := client(t, p.addr())
	ctx := context.Background()
	before, err := c.LastSave(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "save", "1   1").Err(); err != nil {
		t.Fatal(err)
	}
	if got := c.ConfigGet(ctx, "save").Val()["save"]; got != "1 1" {
		t.Fatalf("CONFIG GET save = %q, want \"1 1\"", got)
	}
	if err := c.ConfigSet(ctx, "save", "900").Err(); err == nil || !strings.Contains(err.Error(), "Invalid save parameters") {
		t.Fatalf("CONFIG SET save 900: %v", err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := persistenceField(t, c, "rdb_changes_since_last_save"); got != "1" {
		t.Fatalf("rdb_changes_since_last_save %s after one write, want 1", got)
	}
	deadline := time.Now().Add(15 * time.Second)
	for c.LastSave(ctx).Val() == before {
		if time.Now().After(deadline) {
			t.Fatalf("the policy 1 1 did not save within 15 s; stderr:\n%s", p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	if got := persistenceField(t, c, "rdb_changes_since_last_save"); got != "0" {
		t.Fatalf("rdb_changes_since_last_save %s after the save, want 0", got)
	}
}

func TestRDBStopWritesOnBGSaveError(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir, "--save", "3600 1")
	c := client(t, p.addr())
	ctx := context.Background()
	// The temp file's name taken by a directory: the save cannot open it
	// (a read-only directory would not stop root).
	blocker := filepath.Join(dir, fmt.Sprintf("temp-%d.rdb", p.cmd.Process.Pid))
	if err := os.Mkdir(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if status := waitBGSave(t, c); status != "err" {
		t.Fatalf("rdb_last_bgsave_status %s, want err", status)
	}
	err := c.Set(ctx, "k", "v", 0).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "MISCONF Redis is configured to save RDB snapshots") {
		t.Fatalf("SET after a failed BGSAVE: %v, want MISCONF", err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != redis.Nil {
		t.Fatalf("GET after a failed BGSAVE: %q %v, want a nil reply", v, err)
	}
	// As Redis, a write is refused when queued, and EXEC then aborts.
	raw := p.dial(t)
	fmt.Fprint(raw, "MULTI\r\nSET k v\r\nEXEC\r\n")
	rd := bufio.NewReader(raw)
	var replies []string
	for range 3 {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("MULTI/SET/EXEC: %v after %q", err, replies)
		}
		replies = append(replies, line)
	}
	if replies[0] != "+OK\r\n" || !strings.HasPrefix(replies[1], "-MISCONF") || !strings.HasPrefix(replies[2], "-EXECABORT") {
		t.Errorf("MULTI, SET, EXEC after a failed BGSAVE: %q", replies)
	}
	if err := c.ConfigSet(ctx, "stop-writes-on-bgsave-error", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET with stop-writes-on-bgsave-error no: %v", err)
	}
	if err := c.ConfigSet(ctx, "stop-writes-on-bgsave-error", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err == nil {
		t.Fatal("SET succeeded with the error back on")
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "k", "v2", 0).Err(); err != nil {
		t.Fatalf("SET after a good SAVE: %v", err)
	}
}

func TestRDBRepliesAsRedis(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir)
	c := client(t, p.addr())
	ctx := context.Background()
	if err := c.Do(ctx, "BGSAVE", "NOW").Err(); err == nil || err.Error() != "ERR syntax error" {
		t.Fatalf("BGSAVE NOW: %v", err)
	}
	// A BGSAVE inside MULTI is scheduled, as in Redis.
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.BgSave(ctx)
		return nil
	})
	if err != nil || cmds[0].(*redis.StatusCmd).Val() != "Background saving scheduled" {
		t.Fatalf("BGSAVE in MULTI: %v %v", cmds, err)
	}
	if status := waitBGSave(t, c); status != "ok" {
		t.Fatalf("scheduled BGSAVE: %s", status)
	}
	waittest.Until(t, 10*time.Second, "the scheduled BGSAVE to run", func() bool {
		return persistenceField(t, c, "rdb_saves") == "1"
	})
}

func TestRDBSIGTERMSavesWithAPolicy(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, "--dir", dir, "--save", "3600 1000", "--enable-debug-command", "yes")
	fillEveryType(t, p.addr())
	want := digest(t, p.addr())
	p.terminate(t)
	p2 := startBinary(t, "--dir", dir, "--enable-debug-command", "yes")
	if got := digest(t, p2.addr()); got != want {
		t.Fatalf("after SIGTERM and restart the digest is %s, want %s", got, want)
	}
}
