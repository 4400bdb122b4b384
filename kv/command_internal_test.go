package kv

import (
	"strings"
	"testing"

	"github.com/shoalkv/shoal/store"
)

// xtallyEntry is a command of no real family, for the tests of registration:
// XTALLY key word appends word to key's string and replies its new length,
// counting its calls in *calls.
func xtallyEntry(calls *int) *command {
	return &command{
		name: "xtally", arity: 3, log: logRMW,
		fn: func(h *Handler, cl *client, args [][]byte) {
			*calls++
			n, err := h.store.Append(args[1], args[2])
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
