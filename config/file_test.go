package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSplitArgsAsRedis(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
		err  string
	}{
		{"maxmemory 100mb", []string{"maxmemory", "100mb"}, ""},
		{"  save  \"\"  ", []string{"save", ""}, ""},
		{`requirepass "a b\"c\x41\n"`, []string{"requirepass", "a b\"cA\n"}, ""},
		{`x 'it\'s' "tab\there"`, []string{"x", "it's", "tab\there"}, ""},
		{`x foo"bar baz"`, []string{"x", "foobar baz"}, ""},
		{`x "open`, nil, "unbalanced quotes"},
		{`x 'open`, nil, "unbalanced quotes"},
		{`x "a"b`, nil, "closing quote must be followed by a space"},
		{`x "\xZZ"`, []string{"x", "xZZ"}, ""},
	} {
		got, err := SplitArgs(c.line)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("SplitArgs(%q) error %v, want %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
}

func writeConf(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApplyFile(t *testing.T) {
	dir := t.TempDir()
	writeConf(t, dir, "extra-1.conf", "maxmemory-policy allkeys-lru\n")
	main := writeConf(t, dir, "shoal.conf", `# a comment
maxmemory 100mb

MAXMEMORY 200mb
save ""
client-output-buffer-limit normal 0 0 0
client-output-buffer-limit pubsub 1mb 512kb 30
include `+filepath.Join(dir, "extra-*.conf")+`
requirepass "with space"
`)
	tab := New(Params())
	if err := tab.ApplyFile(main); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"maxmemory":        "209715200", // the last line wins
		"maxmemory-policy": "allkeys-lru",
		"requirepass":      "with space",
		"save":             "",
	} {
		if got := tab.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := tab.Get("client-output-buffer-limit"); !strings.Contains(got, "normal 0 0 0") || !strings.Contains(got, "pubsub 1048576 524288 30") {
		t.Errorf("client-output-buffer-limit = %q: the two lines did not add up", got)
	}
}

func TestApplyFileRefusesWithTheLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"port 7000\nfoo bar\n", ":2: 'foo bar': unknown directive"},
		{"\n\nmaxmemory 10zb\n", ":3: 'maxmemory 10zb': "},
		{"maxmemory\n", ":1: 'maxmemory': Bad directive or wrong number of arguments"},
		{"rename-command CONFIG \"\"\n", "Shoal does not serve 'rename-command'"},
		{"requirepass \"open\n", ":1: 'requirepass \"open': unbalanced quotes"},
		{"include " + filepath.Join(dir, "self.conf") + "\n", "nested more than"},
		{"include /nonexistent/shoal.conf\n", "no such file"},
	} {
		p := writeConf(t, dir, "self.conf", c.text)
		tab := New(Params())
		err := tab.ApplyFile(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.text, err, c.want)
		}
		var fe *FileError
		if strings.HasPrefix(c.want, ":") && (!errors.As(err, &fe) || fe.File != p) {
			t.Errorf("%q: %v is not a FileError naming %s", c.text, err, p)
		}
		if tab.Get("port") != "6379" {
			t.Errorf("%q: a refused file changed port to %s", c.text, tab.Get("port"))
		}
	}
}
