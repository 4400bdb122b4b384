package config

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoalkv/shoal/proto/resp"
)

// A configuration file in redis.conf's syntax: one directive per line, a
// parameter's name and its value (`maxmemory 100mb`, `save ""`), # starts
// a comment line, arguments may be quoted as Redis quotes them ("a b",
// 'c', "\x41\n"), `include path` (a glob, as Redis 7.0) reads another file
// there. A name Shoal has no parameter for is refused with its file and
// line, as are Redis's directives that configure what Shoal does not have
// (rename-command, loadmodule, sentinel). `user` lines are ACL users, kept
// for package kv (Users); CONFIG REWRITE keeps them as written. The last line of a
// parameter wins, except the ones Redis reads as lists, whose lines add up
// (save, client-output-buffer-limit: one class per line).

// maxIncludeDepth bounds include chains (a file including itself).
const maxIncludeDepth = 16

// FileError is a directive of a configuration file that could not be
// applied: where it is and why.
type FileError struct {
	File   string
	Line   int
	Text   string // the line as written
	Reason string
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%s:%d: '%s': %s", e.File, e.Line, e.Text, e.Reason)
}

// directive is one parsed line.
type directive struct {
	file string
	line int
	text string
	args []string
}

// ApplyFile reads the configuration file at path (and what it includes)
// into the table, as values given at startup: flags and the environment
// (ParseFlags, called after) still override them. Every directive is
// checked before any is applied, so an error changes nothing.
func (t *Table) ApplyFile(path string) error {
	var dirs []directive
	if err := readConfigFile(path, 0, &dirs); err != nil {
		return err
	}
	values := make(map[*row]string)
	var order []*row
	var users []UserDirective
	for _, d := range dirs {
		name := strings.ToLower(d.args[0])
		fail := func(reason string) error {
			return &FileError{File: d.file, Line: d.line, Text: d.text, Reason: reason}
		}
		switch name {
		case "rename-command", "loadmodule", "sentinel":
			return fail("Shoal does not serve '" + name + "' (no modules, sentinel or command renaming)")
		case "user": // ACL users, applied by package kv at startup
			if len(d.args) < 2 {
				return fail("Bad directive or wrong number of arguments")
			}
			for _, u := range users {
				if u.Args[0] == d.args[1] {
					return fail("Duplicate user found. A user can only be defined once in config files")
				}
			}
			users = append(users, UserDirective{File: d.file, Line: d.line, Args: d.args[1:]})
			continue
		}
		r := t.byName[name]
		if r == nil {
			return fail("unknown directive: Shoal has no parameter '" + d.args[0] + "' (shoal -h lists them)")
		}
		if len(d.args) < 2 {
			return fail("Bad directive or wrong number of arguments")
		}
		v := strings.Join(d.args[1:], " ")
		if prev, seen := values[r]; seen && accumulates(r.Name) {
			v = prev + " " + v
		}
		if _, err := r.Kind.Parse(v); err != nil {
			return fail(err.Error())
		}
		if _, seen := values[r]; !seen {
			order = append(order, r)
		}
		values[r] = v
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range order {
		canon, _ := r.Kind.Parse(values[r])
		r.value, r.explicit = canon, true
	}
	t.users = users
	return nil
}

// accumulates reports whether a parameter's lines add up (Redis's
// multi-argument list parameters).
func accumulates(name string) bool {
	return name == "save" || name == "client-output-buffer-limit"
}

// readConfigFile appends the directives of path, following includes.
func readConfigFile(path string, depth int, out *[]directive) error {
	if depth > maxIncludeDepth {
		return fmt.Errorf("%s: includes nested more than %d deep (a file that includes itself?)", path, maxIncludeDepth)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading the configuration file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		args, err := SplitArgs(text)
		if err != nil {
			return &FileError{File: path, Line: n, Text: text, Reason: err.Error()}
		}
		if len(args) == 0 {
			continue
		}
		if strings.EqualFold(args[0], "include") {
			if len(args) != 2 {
				return &FileError{File: path, Line: n, Text: text, Reason: "include takes one file (or glob pattern)"}
			}
			matches, err := filepath.Glob(args[1])
			if err != nil || len(matches) == 0 {
				matches = []string{args[1]} // a plain name that does not exist: report it as such
			}
			for _, m := range matches {
				if err := readConfigFile(m, depth+1, out); err != nil {
					return err
				}
			}
			continue
		}
		*out = append(*out, directive{file: path, line: n, text: text, args: args})
	}
	return sc.Err()
}

// SplitArgs splits a configuration line into arguments as Redis's
// sdssplitargs does: the rule resp.SplitArgs implements for inline commands.
func SplitArgs(line string) ([]string, error) {
	parts, ok := resp.SplitArgs([]byte(line))
	if !ok {
		return nil, errors.New("unbalanced quotes, or a closing quote not followed by a space")
	}
	args := make([]string, len(parts))
	for i, p := range parts {
		args[i] = string(p)
	}
	return args, nil
}

// RewriteFile rewrites the configuration file at path with the values in
// use, as CONFIG REWRITE: a parameter's first line takes its current
// value and its other lines go; a parameter not in the file but away
// from its default is added at the end, under Redis's "# Generated by
// CONFIG REWRITE" line; comments, includes and the rest stay as they are.
// The new file replaces the old one in one rename, after an fsync.
func (t *Table) RewriteFile(path string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	t.mu.Lock()
	want := make(map[*row]string)
	for _, r := range t.rows {
		def, _ := r.Kind.Parse(r.Default)
		if v := r.get(); v != def {
			want[r] = v
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(old), "\n"), "\n")
	var out []string
	written := make(map[*row]bool)
	for _, line := range lines {
		text := strings.TrimSpace(line)
		args, err := SplitArgs(text)
		if text == "" || text[0] == '#' || err != nil || len(args) == 0 {
			out = append(out, line)
			continue
		}
		r := t.byName[strings.ToLower(args[0])]
		if r == nil {
			out = append(out, line) // include, or what a start would refuse anyway
			continue
		}
		if written[r] {
			continue
		}
		written[r] = true
		if r.Name == "replicaof" && r.get() == "" {
			continue // a primary now: Redis drops the line, and refuses `replicaof ""`
		}
		out = append(out, r.Name+" "+quoteConfigValue(r.Name, r.get()))
	}
	generated := false
	for _, r := range t.rows { // table order: stable output
		v, ok := want[r]
		if !ok || written[r] {
			continue
		}
		if !generated {
			out = append(out, "# Generated by CONFIG REWRITE")
			generated = true
		}
		out = append(out, r.Name+" "+quoteConfigValue(r.Name, v))
	}
	t.mu.Unlock()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".shoal-rewrite-*.conf")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(strings.Join(out, "\n") + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		_ = os.Chmod(tmp.Name(), fi.Mode().Perm())
	}
	return os.Rename(tmp.Name(), path)
}

// quoteConfigValue writes v so that a start (Shoal's or redis-server's)
// reads it back: the list parameters and replicaof's "host port" as their
// words, others quoted when empty or when they hold a
// space, a quote, a backslash or a control byte.
func quoteConfigValue(name, v string) string {
	if (accumulates(name) || name == "replicaof") && v != "" {
		return v
	}
	if v != "" && !strings.ContainsAny(v, " \t\"'\\#") && !strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return v
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
