package config

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestKindsGiveRedisErrorsAndCanonicalValues(t *testing.T) {
	for _, tc := range []struct {
		kind      Kind
		in, canon string
		err       string
	}{
		{Int(0, 10), "7", "7", ""},
		{Int(0, 10), "11", "", "argument must be between 0 and 10 inclusive"},
		{YesNo, "YES", "yes", ""},
		{YesNo, "maybe", "", "argument must be 'yes' or 'no'"},
		{Enum("a", "b"), "B", "b", ""},
		{Enum("a", "b"), "c", "", "argument(s) must be one of the following: a, b"},
		{Memory(0, 1<<40), "1gb", "1073741824", ""},
		{Memory(0, 1<<40), "1k", "1000", ""},
		{Memory(0, 1<<40), "lots", "", "argument must be a memory value"},
		{Memory(1024, 2048), "1mb", "", "argument must be between 1024 and 2048 inclusive"},
		{Duration(0), "300", "300", ""},
		{Duration(0), "5m", "300", ""},
		{Duration(0), "1500ms", "1.5s", ""},
		{Duration(0), "-1", "", "argument must be a duration of at least 0s, in seconds or with a unit (300, 300s, 500ms)"},
	} {
		canon, err := tc.kind.Parse(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%T %q: %v, want error %q", tc.kind, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || canon != tc.canon {
			t.Errorf("%T %q = %q, %v; want %q", tc.kind, tc.in, canon, err, tc.canon)
		}
	}
}

func testTable(t *testing.T, args []string, env map[string]string) (*Table, error) {
	t.Helper()
	tbl := New([]Param{
		{Name: "timeout", Aliases: []string{"idle-timeout"}, Kind: Duration(0), Default: "0"},
		{Name: "level", Kind: Enum("low", "high"), Default: "low", RunTime: true},
		{Name: "size", Kind: Memory(0, 1<<30), Default: "1mb", RunTime: true},
		{Name: "port", Kind: Int(0, 65535), Default: "6379"},
	})
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return tbl, tbl.ParseFlags(fs, args, func(k string) string { return env[k] })
}

func TestFlagWinsOverEnvironmentOverDefault(t *testing.T) {
	tbl, err := testTable(t, []string{"--idle-timeout", "90s"}, map[string]string{"SHOAL_TIMEOUT": "30", "SHOAL_LEVEL": "high"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"timeout": "90", "idle-timeout": "90", "level": "high", "size": "1048576", "port": "6379"} {
		if got := tbl.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if _, err := testTable(t, []string{"stray"}, nil); err == nil || err.Error() != `unexpected argument "stray"` {
		t.Errorf("stray argument: %v", err)
	}
}

func TestSetChecksEverythingBeforeApplyingAnything(t *testing.T) {
	tbl, _ := testTable(t, nil, nil)
	var applied []string
	tbl.Own("size", Owner{Get: func() string { return "0" }, Set: func(v string) { applied = append(applied, v) }})
	for _, tc := range []struct{ pairs, err string }{
		{"size 2mb level medium", "CONFIG SET failed (possibly related to argument 'level') - argument(s) must be one of the following: low, high"},
		{"size 1 SIZE 2", "CONFIG SET failed (possibly related to argument 'SIZE') - duplicate parameter"},
		{"port 1", "CONFIG SET failed (possibly related to argument 'port') - can't set immutable config"},
		{"nope 1", "Unknown option or number of arguments for CONFIG SET - 'nope'"},
	} {
		if err := tbl.Set(strings.Fields(tc.pairs)...); err == nil || err.Error() != tc.err {
			t.Errorf("Set %s: %v, want %s", tc.pairs, err, tc.err)
		}
	}
	if len(applied) != 0 || tbl.Get("level") != "low" {
		t.Fatalf("failed Sets applied %q, level %s", applied, tbl.Get("level"))
	}
	if err := tbl.Set("size", "2kb", "level", "HIGH"); err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0] != "2048" || tbl.Get("level") != "high" {
		t.Errorf("applied %q, level %s", applied, tbl.Get("level"))
	}
}

func TestOwnAppliesOnlyWhatWasGiven(t *testing.T) {
	tbl, _ := testTable(t, []string{"--size", "4kb"}, nil)
	var size, level []string
	tbl.Own("size", Owner{Get: func() string { return "" }, Set: func(v string) { size = append(size, v) }})
	tbl.Own("level", Owner{Get: func() string { return "" }, Set: func(v string) { level = append(level, v) }})
	if len(size) != 1 || size[0] != "4096" || len(level) != 0 {
		t.Errorf("Own applied size %q level %q; want the flag's size only", size, level)
	}
}

func TestMatchAnswersExactNamesAsGiven(t *testing.T) {
	tbl, _ := testTable(t, nil, nil)
	prefix := func(pattern, name string) bool { return strings.HasPrefix(name, strings.TrimSuffix(pattern, "*")) }
	names, values := tbl.Match([]string{"PORT", "idle-timeout", "l*"}, prefix)
	if strings.Join(names, ",") != "idle-timeout,level,PORT" || strings.Join(values, ",") != "0,low,6379" {
		t.Errorf("Match: %q %q", names, values)
	}
}

// TestOutputLimits: client-output-buffer-limit's values as Redis reads
// them (classes in any case, "slave" or "replica", memory units, several
// classes in one value), refusals with Redis's reasons, and partial values
// merged over the rest.
func TestOutputLimits(t *testing.T) {
	def, err := ParseOutputLimits("normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60")
	if err != nil {
		t.Fatal(err)
	}
	if got := def.String(); got != "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60" {
		t.Errorf("defaults format as %q", got)
	}
	p, err := ParseOutputLimits("PubSub 1G 2k 5 replica 1kb 0 0")
	if err != nil {
		t.Fatal(err)
	}
	merged := def.Merge(p)
	if got := merged.String(); got != "normal 0 0 0 slave 1024 0 0 pubsub 1000000000 2000 5" {
		t.Errorf("merged: %q", got)
	}
	if l := merged.Limits[ClassPubsub]; l.Hard != 1e9 || l.Soft != 2000 || l.SoftFor != 5*time.Second {
		t.Errorf("pubsub limits %+v", l)
	}
	if e, _ := ParseOutputLimits(""); e.String() != "" || def.Merge(e).String() != def.String() {
		t.Error(`"" changes something`)
	}
	for v, want := range map[string]string{
		"pubsub 1mb 2kb":     "Wrong number of arguments in buffer limit configuration.",
		"master 1 2 3":       "Invalid client class specified in buffer limit configuration.",
		"pubsub 1mx 2kb 5":   "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
		"pubsub 1mb 2kb -5":  "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
		"normal -1 0 0":      "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
		"normal 0 0 0 x 1 1": "Wrong number of arguments in buffer limit configuration.",
	} {
		if _, err := (OutputLimitsKind{}).Parse(v); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", v, err, want)
		}
	}
}

// TestMemoryOrPercent: maxmemory-clients takes bytes or a percentage of
// maxmemory up to 100, and resolves a percentage against maxmemory.
func TestMemoryOrPercent(t *testing.T) {
	k := MemoryOrPercent()
	for v, want := range map[string]string{"10%": "10%", "0%": "0", "5mb": "5242880", "0": "0", "100%": "100%"} {
		if got, err := k.Parse(v); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", v, got, err, want)
		}
	}
	for v, want := range map[string]string{"101%": "percentage argument must be less or equal to 100",
		"abc": "argument must be a memory or percent value", "-5%": "argument must be a memory or percent value"} {
		if _, err := k.Parse(v); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", v, err, want)
		}
	}
	if n := ResolveMemoryOrPercent("10%", 1000); n != 100 {
		t.Errorf("10%% of 1000 = %d", n)
	}
	if n := ResolveMemoryOrPercent("10%", 0); n != 0 {
		t.Errorf("10%% of no maxmemory = %d, want 0 (no limit)", n)
	}
	if n := ResolveMemoryOrPercent("4096", 1000); n != 4096 {
		t.Errorf("bytes resolve to %d", n)
	}
}
