package kv

import (
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/store"
)

// TestParseCursorMatchesStrtoul pins the values strtoul(3) gives, which the
// differential test cannot see on an empty keyspace (every cursor answers 0).
func TestParseCursorMatchesStrtoul(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"+42", 42, true}, {"007", 7, true},
		{"-1", math.MaxUint64, true}, {"-0", 0, true},
		{"-18446744073709551615", 1, true}, {"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false}, {"-18446744073709551616", 0, false},
		{"", 0, true}, {"\x00", 0, true}, {"5\x00abc", 5, true},
		{"+", 0, false}, {"-", 0, false}, {"--1", 0, false}, {" 1", 0, false}, {"\t1", 0, false},
		{"1 ", 0, false}, {"0x10", 0, false}, {"1.5", 0, false},
	} {
		got, ok := parseCursor([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseCursor(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestCommandIndexAgreesWithMap checks the dispatch index against the name
// map for every command in three cases, and for near misses that share a
// slot's hash inputs (length, first and last byte) with a real command.
func TestCommandIndexAgreesWithMap(t *testing.T) {
	for name, want := range commands {
		for _, variant := range []string{name, strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:]} {
			if got := dispatchIdx.find([]byte(variant)); got != want {
				t.Errorf("find(%q) = %v, want %q", variant, got, want.name)
			}
		}
	}
	for _, miss := range []string{"", "gat", "sex", "g", "gett", "GE", "g\x00t", "get\x00", "scam", "x", strings.Repeat("a", 300),
		"inc\xd2", "[et", "Get ", "pin\xe7"} {
		if got := dispatchIdx.find([]byte(miss)); got != nil {
			t.Errorf("find(%q) = %q, want nil", miss, got.name)
		}
	}
}

// TestIncompleteCommandEntryIsRefused: an entry that forgets a piece (its
// function, its docs, its key specs, the log rule of a write), has a piece
// that does not fit (a log rule on a command that does not write, or one
// that needs a key where it has none) or repeats a name stops the package
// from loading instead of serving a command with half a description.
func TestIncompleteCommandEntryIsRefused(t *testing.T) {
	full := func() *command {
		return &command{name: "get", arity: 2, fn: cmdGet, flags: "readonly fast", acl: "@read",
			firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
			doc: commandDoc{"s", "1.0.0", "string", "O(1)"}}
	}
	index := func(cmds ...*command) (*commandSet, error) { return indexFamilies([]family{{commands: cmds}}) }
	if set, err := index(full()); err != nil || len(set.order) != 1 {
		t.Fatalf("a complete entry: %v", err)
	}
	write := full()
	write.flags, write.log = "write", logRMW
	if _, err := index(write); err != nil {
		t.Fatalf("a complete write: %v", err)
	}
	for what, breakIt := range map[string]func(c *command){
		"no function":                func(c *command) { c.fn = nil },
		"no summary":                 func(c *command) { c.doc.summary = "" },
		"no complexity":              func(c *command) { c.doc.complexity = "" },
		"no ACL categories":          func(c *command) { c.acl = "" },
		"no key specs":               func(c *command) { c.keySpecs = nil },
		"a write without a log rule": func(c *command) { c.flags = "write fast" },
		"a log rule on a read":       func(c *command) { c.log = logAsIs },
		"a log rule that is no rule": func(c *command) { c.flags, c.log = "write", numLogRules },
		"logRMW with no key at 1":    func(c *command) { c.flags, c.log, c.firstKey, c.keySpecs[0].index = "write", logRMW, 2, 2 },
		"logDelAbsent with no keys":  func(c *command) { c.flags, c.log, c.firstKey, c.keySpecs = "write", logDelAbsent, 0, nil },
	} {
		c := full()
		breakIt(c)
		if _, err := index(c); err == nil || !strings.Contains(err.Error(), `"get"`) {
			t.Errorf("%s: error %v, want one naming the command", what, err)
		}
	}
	if _, err := index(full(), full()); err == nil {
		t.Error("a command listed twice was accepted")
	}
	orphan := full()
	orphan.name, orphan.firstKey, orphan.keySpecs = "nope|sub", 0, nil
	if _, err := index(orphan); err == nil {
		t.Error("a subcommand without its parent was accepted")
	}
}

// TestMidBatchFlushFollowsTheEdge: kv hands a long batch of replies to the
// Conn at the edge's flush threshold (Boot), not at a threshold of its own;
// before Boot at the eventloop's default.
func TestMidBatchFlushFollowsTheEdge(t *testing.T) {
	st := store.New(store.Options{})
	defer st.Close()
	h := New(st, Options{})
	defer h.Close()
	if got := h.FlushThreshold(); got != eventloop.DefaultFlushThreshold {
		t.Errorf("before Boot: %d, want eventloop's default %d", got, eventloop.DefaultFlushThreshold)
	}
	h.Boot(BootInfo{Loops: 1, FlushThreshold: 4096})
	if got := h.FlushThreshold(); got != 4096 {
		t.Errorf("after Boot: flush at %d bytes, want the edge's 4096", got)
	}
}

// TestClientStructFitsItsSizeClass: every connection allocates one
// session in package server, a Client (this struct) and the Conn pointer;
// past 232 bytes here the session moves from the 240-byte allocation class
// to 256, 16 bytes more per connection at 100k connections. Grow it only
// on purpose.
func TestClientStructFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Client{}); n > 232 {
		t.Errorf("client is %d bytes, over 232 (the session's 240-byte size class less its Conn pointer)", n)
	}
}
