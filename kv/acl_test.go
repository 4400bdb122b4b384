package kv_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestACLCatMatchesRedis: every category lists exactly the commands and
// subcommands redis-server 7.0 lists in it, among those Shoal has (Redis
// lists them in its dictionary's order, random per process, so as sets).
func TestACLCatMatchesRedis(t *testing.T) {
	ctx := context.Background()
	ref, ours := redisAndShoal(t)
	have, err := ours.Do(ctx, "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	shoalHas := make(map[string]bool)
	for _, c := range have {
		shoalHas[c] = true
	}
	redisHas := commandSet(t, ref)
	cats, err := ref.Do(ctx, "ACL", "CAT").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	ourCats, _ := ours.Do(ctx, "ACL", "CAT").StringSlice()
	if strings.Join(cats, " ") != strings.Join(ourCats, " ") {
		t.Fatalf("ACL CAT: shoal %q, redis-server %q", ourCats, cats)
	}
	for _, cat := range cats {
		want, _ := ref.Do(ctx, "ACL", "CAT", cat).StringSlice()
		got, err := ours.Do(ctx, "ACL", "CAT", cat).StringSlice()
		if err != nil {
			t.Fatalf("ACL CAT %s: %v", cat, err)
		}
		var wantOurs []string
		for _, c := range want {
			if shoalHas[c] {
				wantOurs = append(wantOurs, c)
			}
		}
		var gotKnown []string // without the commands newer than 7.0 (CLIENT SETINFO)
		for _, c := range got {
			if redisHas[c] {
				gotKnown = append(gotKnown, c)
			}
		}
		got = gotKnown
		sort.Strings(wantOurs)
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(wantOurs, " ") {
			t.Errorf("ACL CAT %s:\n shoal %q\n redis %q", cat, got, wantOurs)
		}
	}
}

// commandSet is every command and subcommand c knows.
func commandSet(t *testing.T, c *redis.Client) map[string]bool {
	t.Helper()
	names, err := c.Do(context.Background(), "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	set := make(map[string]bool)
	for _, n := range names {
		set[n] = true
	}
	return set
}

// singleRules is a run of single-command rules in a description, which
// Redis writes in random order.
var singleRules = regexp.MustCompile(`(?:[+-][a-z_|0-9-]+(?: |$|\)))+`)

// canonicalRules sorts every run of single-command rules, leaving out the
// commands Shoal does not have (known).
func canonicalRules(s string, known map[string]bool) string {
	return singleRules.ReplaceAllStringFunc(s, func(run string) string {
		suffix := ""
		for strings.HasSuffix(run, " ") || strings.HasSuffix(run, ")") {
			suffix = run[len(run)-1:] + suffix
			run = run[:len(run)-1]
		}
		var rules []string
		for _, r := range strings.Fields(run) {
			if known[r[1:]] {
				rules = append(rules, r)
			}
		}
		sort.Strings(rules)
		return strings.Join(rules, " ") + suffix
	})
}

// TestACLListsRules compares ACL LIST and GETUSER for users whose rules
// end in several single commands, ignoring their order.
func TestACLListsRules(t *testing.T) {
	ctx := context.Background()
	ref, ours := redisAndShoal(t)
	users := [][]any{
		{"-@all", "+get", "+set", "+hget", "+lpush", "+config|get", "~k*"},
		{"+@all", "-@dangerous", "-get", "-set", "+config|get", "+flushall"},
		{"-@all", "+@string", "-append", "-incr", "+hset", "(+del", "+exists", "~a*)"},
		{"+@all", "-client", "+client|id", "+client|setname", "-@pubsub", "+publish"},
	}
	for i, rules := range users {
		name := "u" + string(rune('0'+i))
		for _, c := range []*redis.Client{ref, ours} {
			if err := c.Do(ctx, append([]any{"ACL", "SETUSER", name}, rules...)...).Err(); err != nil {
				t.Fatalf("ACL SETUSER %s %v: %v", name, rules, err)
			}
		}
	}
	known := commandSet(t, ours)
	want, _ := ref.Do(ctx, "ACL", "LIST").StringSlice()
	got, _ := ours.Do(ctx, "ACL", "LIST").StringSlice()
	if len(got) != len(want) {
		t.Fatalf("ACL LIST: shoal %q, redis-server %q", got, want)
	}
	for i := range want {
		if canonicalRules(got[i], known) != canonicalRules(want[i], known) {
			t.Errorf("ACL LIST line %d:\n shoal %q\n redis %q", i, got[i], want[i])
		}
	}
}

// TestACLLogAsRedis: refusals of commands, keys and channels, at top
// level, in MULTI and in scripts, and failed AUTHs, are logged as
// redis-server 7.0 logs them (counts, grouping, reasons, contexts,
// objects, users; the ages and client lines differ by nature).
func TestACLLogAsRedis(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	run := func(addr string) []string {
		admin := dialRaw(t, addr)
		admin.Do("ACL", "SETUSER", "lou", "on", ">pw", "-@all", "+get", "+multi", "+exec", "+eval", "+publish", "~k*", "&c*")
		u := dialRaw(t, addr)
		u.Do("AUTH", "lou", "wrong")
		u.Do("auth", "nobody", "pw")
		u.Do("HELLO", "2", "AUTH", "lou", "bad")
		u.Do("AUTH", "lou", "pw")
		u.Do("SET", "k", "v")
		u.Do("SET", "k", "v")
		u.Do("GET", "x")
		u.Do("PUBLISH", "d", "m")
		u.Do("MULTI")
		u.Do("DEL", "k")
		u.Do("EXEC")
		u.Do("EVAL", "return redis.pcall('get','y')", "0")
		var lines []string
		log := admin.Do("ACL", "LOG")
		lines = append(lines, maskLogEntry(log))
		if !strings.Contains(log, "user=lou") {
			t.Errorf("%s: ACL LOG's client info does not name the user: %q", addr, log)
		}
		lines = append(lines, maskLogEntry(admin.Do("ACL", "LOG", "2")), admin.Do("ACL", "LOG", "RESET"), admin.Do("ACL", "LOG"))
		admin.Do("CONFIG", "SET", "acllog-max-len", "1")
		u.Do("GET", "x")
		u.Do("GET", "k", "extra")
		u.Do("DEL", "k")
		lines = append(lines, maskLogEntry(admin.Do("ACL", "LOG")))
		admin.Do("CONFIG", "SET", "acllog-max-len", "128")
		return lines
	}
	want, got := run(redisAddr), run(shoal.addr)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d:\n shoal %q\n redis %q", i, got[i], want[i])
		}
	}
}

var (
	logAge    = regexp.MustCompile(`\$[0-9]+\r\nage-seconds\r\n\$[0-9]+\r\n[0-9.e-]+\r\n`)
	logClient = regexp.MustCompile(`\$[0-9]+\r\nclient-info\r\n\$[0-9]+\r\n[^\r]*\r\n`)
)

func maskLogEntry(s string) string {
	return logClient.ReplaceAllString(logAge.ReplaceAllString(s, "AGE "), "CLIENT ")
}

// TestACLUserChangesReachConnections: a deleted user's connections are
// closed, a user's changed rules apply to its connections at once, CLIENT
// LIST names the user, CLIENT KILL USER closes its connections, and
// revoking a channel closes the subscribers to it; as redis-server does.
func TestACLUserChangesReachConnections(t *testing.T) {
	for _, target := range []struct {
		name string
		addr string
	}{
		{"redis-server", startRedis(t)},
		{"shoal", startShoal(t, kv.Options{}, eventloop.Options{}).addr},
	} {
		t.Run(target.name, func(t *testing.T) {
			addr := target.addr
			admin := dialRaw(t, addr)
			admin.Do("ACL", "SETUSER", "ann", "on", ">pw", "+@all", "~*", "&*")
			a := dialRaw(t, addr)
			if r := a.Do("AUTH", "ann", "pw"); r != "+OK\r\n" {
				t.Fatalf("AUTH: %q", r)
			}
			if r := admin.Do("CLIENT", "LIST"); !strings.Contains(r, "user=ann") {
				t.Errorf("CLIENT LIST does not show user=ann: %q", r)
			}
			admin.Do("ACL", "SETUSER", "ann", "-get")
			if r := a.Do("GET", "k"); r != "-NOPERM this user has no permissions to run the 'get' command\r\n" {
				t.Errorf("GET after -get: %q", r)
			}
			if r := admin.Do("CLIENT", "KILL", "USER", "nobody"); r != "-ERR No such user 'nobody'\r\n" {
				t.Errorf("CLIENT KILL USER nobody: %q", r)
			}
			if r := admin.Do("CLIENT", "KILL", "USER", "ann"); r != ":1\r\n" {
				t.Errorf("CLIENT KILL USER ann: %q", r)
			}
			if _, err := a.ReadUntilClose(); err != nil {
				t.Errorf("the killed connection: %v", err)
			}

			b := dialRaw(t, addr)
			b.Do("AUTH", "ann", "pw")
			sub := dialRaw(t, addr)
			sub.Do("AUTH", "ann", "pw")
			sub.Do("SUBSCRIBE", "news")
			// A ping through admin orders the SUBSCRIBE before the change.
			admin.Do("ACL", "SETUSER", "ann", "resetchannels", "&sport")
			if out, err := sub.ReadUntilClose(); err != nil || out != "" {
				t.Errorf("the subscriber of a revoked channel: %q, %v; want it closed", out, err)
			}
			if r := b.Do("PING"); r != "+PONG\r\n" {
				t.Errorf("a connection of the user not subscribed: %q", r)
			}
			if r := admin.Do("ACL", "DELUSER", "ann"); r != ":1\r\n" {
				t.Errorf("ACL DELUSER: %q", r)
			}
			if out, err := b.ReadUntilClose(); err != nil || out != "" {
				t.Errorf("the deleted user's connection: %q, %v; want it closed", out, err)
			}
			self := dialRaw(t, addr)
			admin.Do("ACL", "SETUSER", "bo", "on", "nopass", "+@all")
			self.Do("AUTH", "bo", "x")
			if r := self.Do("ACL", "DELUSER", "bo"); r != ":1\r\n" {
				t.Errorf("ACL DELUSER of oneself: %q", r)
			}
			if out, err := self.ReadUntilClose(); err != nil || out != "" {
				t.Errorf("after deleting its own user: %q, %v; want it closed", out, err)
			}
		})
	}
}

// TestRequirePassIsTheDefaultUsersPassword: CONFIG SET requirepass sets
// the default user's password (and "" makes it nopass), and ACL SETUSER
// default changes what AUTH accepts, as in redis-server.
func TestRequirePassIsTheDefaultUsersPassword(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	run := func(addr string) []string {
		admin := dialRaw(t, addr)
		var got []string
		got = append(got, admin.Do("CONFIG", "SET", "requirepass", "sekret"), admin.Do("ACL", "LIST"), admin.Do("ACL", "GETUSER", "default"))
		c := dialRaw(t, addr)
		got = append(got, c.Do("GET", "k"), c.Do("AUTH", "wrong"), c.Do("AUTH", "sekret"), c.Do("ACL", "WHOAMI"))
		got = append(got, admin.Do("ACL", "SETUSER", "default", ">other"), admin.Do("CONFIG", "GET", "requirepass"))
		d := dialRaw(t, addr)
		got = append(got, d.Do("AUTH", "default", "other"), d.Do("AUTH", "sekret"))
		got = append(got, admin.Do("ACL", "SETUSER", "default", "off"))
		e := dialRaw(t, addr)
		got = append(got, e.Do("AUTH", "sekret"), e.Do("PING"), admin.Do("ACL", "SETUSER", "default", "on", "nopass"))
		f := dialRaw(t, addr)
		got = append(got, f.Do("PING"), f.Do("AUTH", "x"), admin.Do("CONFIG", "SET", "requirepass", ""), admin.Do("ACL", "LIST"))
		return got
	}
	want, got := run(redisAddr), run(shoal.addr)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d:\n shoal %q\n redis %q", i, got[i], want[i])
		}
	}
}

// TestACLFileLoadAndSave: both servers start with the same aclfile; ACL
// LOAD of a file with errors refuses it naming each line, and changes
// nothing; a good file replaces the users (closing the connections of the
// users it drops); ACL SAVE writes the file ACL LOAD reads back. Error
// texts and files are compared with redis-server's.
func TestACLFileLoadAndSave(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("user default on nopass ~* &* +@all\nuser amy on >pw ~a* -@all +get\n")
	redisAddr := startRedis(t, "--aclfile", file)
	shoal := startShoal(t, kv.Options{Params: aclFileParams(t, file)}, eventloop.Options{})
	if err := shoal.handler.LoadACLFile(); err != nil {
		t.Fatal(err)
	}
	run := func(addr string) []string {
		admin := dialRaw(t, addr)
		got := []string{admin.Do("ACL", "LIST")}
		write("user amy on >pw ~a* -@all +get\n\nnotuser x\nuser amy on\nuser bob on +nosuch foo %X~k ~\"a\"\nuser cy (+get\nuser dee on >pw\n")
		got = append(got, admin.Do("ACL", "LOAD"), admin.Do("ACL", "LIST"))
		amy := dialRaw(t, addr)
		got = append(got, amy.Do("AUTH", "amy", "pw"))
		write("user default on nopass ~* &* +@all\nuser zed on nopass -@all +ping\n")
		got = append(got, admin.Do("ACL", "LOAD"), admin.Do("ACL", "LIST"))
		out, err := amy.ReadUntilClose() // EOF is no error: closed
		got = append(got, fmt.Sprintf("amy's connection after the load: %q, %v", out, err))
		got = append(got, admin.Do("ACL", "SETUSER", "amy", "on", "#"+strings.Repeat("ab", 32), "%R~r*", "(+set ~s*)"))
		got = append(got, admin.Do("ACL", "SAVE"))
		saved, _ := os.ReadFile(file)
		got = append(got, string(saved))
		got = append(got, admin.Do("ACL", "LOAD"), admin.Do("ACL", "LIST"))
		return got
	}
	want, got := run(redisAddr), run(shoal.addr)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d:\n shoal %q\n redis %q", i, got[i], want[i])
		}
	}
}

// TestACLFileWithAnErrorRefusesToStart: as Redis, a bad aclfile stops the
// server from starting, naming the line.
func TestACLFileWithAnErrorRefusesToStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users.acl")
	if err := os.WriteFile(file, []byte("user a on\nuser b on +nosuch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shoal := startShoal(t, kv.Options{Params: aclFileParams(t, file)}, eventloop.Options{})
	err := shoal.handler.LoadACLFile()
	if err == nil || !strings.Contains(err.Error(), file+":2: Error in applying operation '+nosuch': Unknown command or category name in ACL") {
		t.Errorf("LoadACLFile of a bad file: %v", err)
	}
}

// TestACLWithGoRedis: go-redis authenticates as a user (Username in its
// options: HELLO 3 AUTH) and meets the rules, with Redis's error texts.
func TestACLWithGoRedis(t *testing.T) {
	ctx := context.Background()
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	admin := redis.NewClient(&redis.Options{Addr: shoal.addr})
	t.Cleanup(func() { admin.Close() })
	if err := admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">s3cret", "-@all", "+@read", "+set", "+hello", "~app:*").Err(); err != nil {
		t.Fatal(err)
	}
	app := redis.NewClient(&redis.Options{Addr: shoal.addr, Username: "app", Password: "s3cret"})
	t.Cleanup(func() { app.Close() })
	if err := app.Set(ctx, "app:1", "v", 0).Err(); err != nil {
		t.Fatalf("SET app:1: %v", err)
	}
	if v, err := app.Get(ctx, "app:1").Result(); err != nil || v != "v" {
		t.Fatalf("GET app:1: %q, %v", v, err)
	}
	if err := app.Set(ctx, "other", "v", 0).Err(); err == nil || err.Error() != "NOPERM this user has no permissions to access one of the keys used as arguments" {
		t.Errorf("SET other: %v", err)
	}
	if err := app.Del(ctx, "app:1").Err(); err == nil || err.Error() != "NOPERM this user has no permissions to run the 'del' command" {
		t.Errorf("DEL: %v", err)
	}
	wrong := redis.NewClient(&redis.Options{Addr: shoal.addr, Username: "app", Password: "nope", MaxRetries: -1})
	t.Cleanup(func() { wrong.Close() })
	if err := wrong.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("a wrong password: %v", err)
	}
	if n, err := admin.Do(ctx, "ACL", "DELUSER", "app").Int(); err != nil || n != 1 {
		t.Errorf("ACL DELUSER: %d, %v", n, err)
	}
}

// aclFileParams is a settings table with aclfile set to file.
func aclFileParams(t *testing.T, file string) *config.Table {
	t.Helper()
	params := config.New(config.Params())
	if err := params.ParseFlags(flag.NewFlagSet("t", flag.ContinueOnError), []string{"--aclfile", file}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	return params
}

// TestACLSetUserIsRedacted: ACL SETUSER's rules may hold passwords, so
// SLOWLOG shows them redacted, as redis-server does.
func TestACLSetUserIsRedacted(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{})
	run := func(addr string) string {
		c := dialRaw(t, addr)
		c.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
		c.Do("ACL", "SETUSER", "zoe", "on", ">secret")
		entry := c.Do("SLOWLOG", "GET", "1")
		c.Do("CONFIG", "SET", "slowlog-log-slower-than", "10000")
		if strings.Contains(entry, "secret") {
			t.Errorf("%s: SLOWLOG shows the password: %q", addr, entry)
		}
		args := entry[strings.Index(entry, "ACL"):]
		return args[:strings.LastIndex(args, "(redacted)")]
	}
	if want, got := run(redisAddr), run(shoal.addr); got != want {
		t.Errorf("SLOWLOG's arguments of ACL SETUSER:\n shoal %q\n redis %q", got, want)
	}
}

// TestACLUsersInTheConfigFile: "user" lines of the configuration file
// make users at startup (the default user is reset first, as Redis); a bad
// rule refuses the start naming its file and line, and so does a
// configuration with both user lines and an aclfile.
func TestACLUsersInTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "shoal.conf")
	load := func(text string) (*shoalServer, error) {
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		params := config.New(config.Params())
		if err := params.ApplyFile(conf); err != nil {
			return nil, err
		}
		shoal := startShoal(t, kv.Options{Params: params}, eventloop.Options{})
		return shoal, shoal.handler.LoadACLFile()
	}
	shoal, err := load("port 0\nuser default on >pw ~* &* +@all\nuser app on nopass -@all +get ~k* (+set ~s*)\n")
	if err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, shoal.addr)
	if r := c.Do("PING"); r != "-NOAUTH Authentication required.\r\n" {
		t.Errorf("PING before AUTH: %q", r)
	}
	c.Do("AUTH", "pw")
	// As redis-server 7.0.15 lists them from the same lines.
	want := "*2\r\n$78\r\nuser app on nopass ~k* resetchannels -@all +get (~s* resetchannels -@all +set)\r\n" +
		"$110\r\nuser default on sanitize-payload #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~* &* +@all\r\n"
	if r := c.Do("ACL", "LIST"); r != want {
		t.Errorf("ACL LIST:\n got %q\nwant %q", r, want)
	}
	if _, err := load("user app on +nosuch\n"); err == nil || !strings.Contains(err.Error(), conf+":1: Error loading ACL rule '+nosuch' for the user named 'app': Unknown command or category name in ACL") {
		t.Errorf("a bad rule: %v", err)
	}
	if _, err := load("user app on\nuser app off\n"); err == nil || !strings.Contains(err.Error(), "Duplicate user found") {
		t.Errorf("a user twice: %v", err)
	}
	if _, err := load("user app on\naclfile " + filepath.Join(dir, "users.acl") + "\n"); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("user lines and an aclfile: %v", err)
	}
}
