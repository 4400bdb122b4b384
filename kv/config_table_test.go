package kv_test

import (
	"flag"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// TestANewSettingIsOneRow is the promise of the settings table: one row
// added to it is a flag, an environment variable and a CONFIG parameter,
// validated the same way everywhere; its owner's apply function is the only
// other code it needs.
func TestANewSettingIsOneRow(t *testing.T) {
	row := config.Param{Name: "qz", Kind: config.Int(1, 500), Default: "10", RunTime: true, Usage: "background tasks per second"}
	newTable := func(args []string, env map[string]string) (*config.Table, error) {
		tbl := config.New(append(config.Params(), row))
		fs := flag.NewFlagSet("shoal", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return tbl, tbl.ParseFlags(fs, args, func(k string) string { return env[k] })
	}

	// The flag and the variable, the flag winning, and the kind's check.
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "10"},
		{nil, map[string]string{"SHOAL_QZ": "20"}, "20"},
		{[]string{"--qz", "30"}, map[string]string{"SHOAL_QZ": "20"}, "30"},
	} {
		tbl, err := newTable(tc.args, tc.env)
		if err != nil || tbl.Get("qz") != tc.want {
			t.Errorf("args %q env %v: qz %q, %v; want %s", tc.args, tc.env, tbl.Get("qz"), err, tc.want)
		}
	}
	for args, want := range map[string]string{
		"--qz 0":   `--qz "0": argument must be between 1 and 500 inclusive`,
		"--qz ten": `--qz "ten": argument couldn't be parsed into an integer`,
	} {
		if _, err := newTable(strings.Fields(args), nil); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", args, err, want)
		}
	}
	if _, err := newTable(nil, map[string]string{"SHOAL_QZ": "501"}); err == nil || !strings.HasPrefix(err.Error(), `SHOAL_QZ "501": `) {
		t.Errorf("SHOAL_QZ=501: %v", err)
	}

	// Its owner takes it over and gets the command-line value; CONFIG GET
	// and SET then read and apply through it.
	tbl, err := newTable([]string{"--qz", "50"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hz atomic.Int64
	tbl.Own("qz", config.Owner{
		Get: func() string { return strconv.FormatInt(hz.Load(), 10) },
		Set: func(v string) { n, _ := strconv.ParseInt(v, 10, 64); hz.Store(n) },
	})
	if hz.Load() != 50 {
		t.Fatalf("owner got qz %d from --qz 50", hz.Load())
	}
	srv := startShoal(t, kv.Options{Params: tbl}, eventloop.Options{})
	c := dialRaw(t, srv.addr)
	for _, step := range []struct{ cmd, want string }{
		{"CONFIG GET qz", "*2\r\n$2\r\nqz\r\n$2\r\n50\r\n"},
		{"CONFIG GET q?", "*2\r\n$2\r\nqz\r\n$2\r\n50\r\n"},
		{"CONFIG SET qz 100", "+OK\r\n"},
		{"CONFIG GET QZ", "*2\r\n$2\r\nQZ\r\n$3\r\n100\r\n"},
		{"CONFIG SET qz 501", "-ERR CONFIG SET failed (possibly related to argument 'qz') - argument must be between 1 and 500 inclusive\r\n"},
		{"CONFIG SET qz 200 maxmemory lots", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"},
		{"CONFIG GET qz", "*2\r\n$2\r\nqz\r\n$3\r\n100\r\n"},
	} {
		if r := c.Do(strings.Fields(step.cmd)...); r != step.want {
			t.Errorf("%s: %q, want %q", step.cmd, r, step.want)
		}
	}
	if hz.Load() != 100 {
		t.Errorf("owner has hz %d after CONFIG SET qz 100", hz.Load())
	}
}

// TestStorePoliciesMatchTheTable: every maxmemory-policy the settings table
// accepts is one the store has, so CONFIG SET never validates a policy the
// store cannot apply.
func TestStorePoliciesMatchTheTable(t *testing.T) {
	for _, p := range config.Params() {
		if p.Name != "maxmemory-policy" {
			continue
		}
		for _, name := range p.Kind.(config.EnumKind) {
			if pol, err := store.ParsePolicy(name); err != nil || pol.String() != name {
				t.Errorf("table policy %q: store has %v, %v", name, pol, err)
			}
		}
		return
	}
	t.Fatal("no maxmemory-policy row")
}
