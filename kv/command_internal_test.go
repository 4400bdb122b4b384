package kv

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/store"
)

// useFamilies makes the package serve the registered families plus extra
// until the test ends: what init does with families alone. The registered
// tables are not changed (indexFamilies indexes copies), and the commands
// installed before are installed again by Cleanup. Handlers must be
// created after it, since their per-command counters are sized from the
// commands installed when they start counting.
func useFamilies(t *testing.T, extra ...family) {
	t.Helper()
	set, err := indexFamilies(append(slices.Clone(families), extra...))
	if err != nil {
		t.Fatal(err)
	}
	before := &commandSet{byName: commands, order: commandOrder, byID: commandsByID, dispatch: dispatchIdx, rewriters: rewriters}
	set.install()
	t.Cleanup(before.install)
}

// xtallyEntry is a command of no real family, for TestOneEntryDescribesACommand:
// XTALLY key word appends word to key's string and replies its new length,
// counting its calls in *calls.
func xtallyEntry(calls *int) *command {
	return &command{
		name: "xtally", arity: 3, log: logRMW,
		fn: func(h *Handler, cl *client, args [][]byte) {
			*calls++
			n, err := cl.db().Append(args[1], args[2])
			if err != nil {
				cl.writeError(err.Error())
				return
			}
			cl.writeInt(int64(n))
		},
		flags: "write denyoom", acl: "@write @string @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Appends a word to a string (a test command).", "9.9.9", "string", "O(1)"},
	}
}

// TestOneEntryDescribesACommand adds a command with one table entry
// (registered as a family, the same path as every data type's) and finds
// everything about it served from that entry: COMMAND INFO, COMMAND DOCS,
// dispatch with its arity, and its AOF records per its log rule, which a
// replay then runs through the same entry. Afterwards the package serves
// its own commands only.
func TestOneEntryDescribesACommand(t *testing.T) {
	n := len(commandsByID)
	t.Run("served", testXTallyServed)
	if commands["xtally"] != nil || dispatchIdx.find([]byte("xtally")) != nil || len(commandsByID) != n {
		t.Error("the test command is still installed")
	}
}

func testXTallyServed(t *testing.T) {
	calls := 0
	useFamilies(t, family{commands: []*command{xtallyEntry(&calls)}})
	path := filepath.Join(t.TempDir(), "appendonly.aof")
	st := store.New(store.Options{ActiveExpireInterval: -1})
	defer st.Close()
	h := New(st, Options{})
	defer h.Close()
	w, err := aof.Open(path, aof.FsyncEverySec, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.AttachAOF(w, true)
	cl := &client{h: h, proto: 2, authed: true}
	cl.parser.Limits = &h.opts.Limits
	run := func(req string) string {
		t.Helper()
		cl.out = cl.out[:0]
		if n := h.execute(cl, []byte(req)); n != len(req) {
			t.Fatalf("%q: consumed %d of %d bytes", req, n, len(req))
		}
		return string(cl.out)
	}

	info := "*1\r\n*10\r\n$6\r\nxtally\r\n:3\r\n" +
		"*2\r\n+write\r\n+denyoom\r\n" + // flags
		":1\r\n:1\r\n:1\r\n" + // first key, last key, step
		"*3\r\n+@write\r\n+@string\r\n+@slow\r\n" + // ACL categories
		"*1\r\n$23\r\nnondeterministic_output\r\n" + // tips
		"*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RW\r\n+insert\r\n" + // key specs
		"$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n" +
		"*0\r\n" // subcommands
	if got := run("*3\r\n$7\r\nCOMMAND\r\n$4\r\nINFO\r\n$6\r\nXTALLY\r\n"); got != info {
		t.Errorf("COMMAND INFO xtally:\n got %q\nwant %q", got, info)
	}
	docs := "*2\r\n$6\r\nxtally\r\n*8\r\n$7\r\nsummary\r\n$44\r\nAppends a word to a string (a test command).\r\n" +
		"$5\r\nsince\r\n$5\r\n9.9.9\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n"
	if got := run("*3\r\n$7\r\nCOMMAND\r\n$4\r\nDOCS\r\n$6\r\nxtally\r\n"); got != docs {
		t.Errorf("COMMAND DOCS xtally:\n got %q\nwant %q", got, docs)
	}

	for _, tc := range []struct{ req, reply string }{
		{"*2\r\n$6\r\nXTALLY\r\n$1\r\nk\r\n", "-ERR wrong number of arguments for 'xtally' command\r\n"},
		{"*3\r\n$6\r\nxtally\r\n$1\r\nk\r\n$2\r\nab\r\n", ":2\r\n"},
		{"*3\r\n$6\r\nXTally\r\n$1\r\nk\r\n$1\r\nc\r\n", ":3\r\n"},
	} {
		if got := run(tc.req); got != tc.reply {
			t.Errorf("%q: reply %q, want %q", tc.req, got, tc.reply)
		}
	}
	if calls != 2 {
		t.Errorf("the function ran %d times, want 2 (not for the call of the wrong arity)", calls)
	}
	if tot := h.cmdStats.totals()[commands["xtally"].statsID]; tot.calls != 2 || tot.rejected != 1 {
		t.Errorf("commandstats: %d calls, %d rejected; want 2 and 1", tot.calls, tot.rejected)
	}

	// logRMW: as is, after a DEL of the key the first call found missing.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var records []string
	if _, err := aof.Load(path, false, func(args [][]byte) error {
		words := make([]string, len(args))
		for i, a := range args {
			words[i] = string(a)
		}
		records = append(records, strings.Join(words, " "))
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"DEL k", "xtally k ab", "XTally k c"}; !slices.Equal(records, want) {
		t.Errorf("AOF records %q, want %q", records, want)
	}
	st2 := store.New(store.Options{ActiveExpireInterval: -1})
	defer st2.Close()
	h2 := New(st2, Options{})
	defer h2.Close()
	if _, err := h2.LoadAOF(path, false); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := st2.Get(nil, []byte("k")); string(v) != "abc" || calls != 4 {
		t.Errorf("after replay k = %q, the function ran %d times; want \"abc\" and 4", v, calls)
	}
}

// TestFamilyRewriterIsChecked: a family's AOF rewriter comes with the
// collection kind it rebuilds, and each kind has one.
func TestFamilyRewriterIsChecked(t *testing.T) {
	calls := 0
	cmds := []*command{xtallyEntry(&calls)}
	for what, fams := range map[string][]family{
		"a kind without a rewriter":  {{kind: store.KindHash, commands: cmds}},
		"a rewriter without a kind":  {{rewrite: appendRewriteHash, commands: cmds}},
		"a rewriter for strings":     {{kind: store.KindString, rewrite: appendRewriteHash, commands: cmds}},
		"two rewriters for one kind": {{kind: store.KindHash, rewrite: appendRewriteHash}, {kind: store.KindHash, rewrite: appendRewriteHash, commands: cmds}},
	} {
		if _, err := indexFamilies(fams); err == nil || !strings.Contains(err.Error(), `"xtally"`) {
			t.Errorf("%s: error %v, want one naming the family's first command", what, err)
		}
	}
	set, err := indexFamilies(families)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []store.Kind{store.KindList, store.KindHash, store.KindSet, store.KindZSet} {
		if set.rewriters[k] == nil {
			t.Errorf("no family registers the AOF rewriter of %s", k)
		}
	}
}
