package config

import (
	"os"
	"strings"
	"testing"
)

// TestRewriteReplicaOfAsRedis: CONFIG REWRITE writes replicaof as
// redis-server does, "replicaof host port" (the line Sentinel's
// reconfiguration leaves in the file), and drops the line once the server
// is a primary again; both files load back.
func TestRewriteReplicaOfAsRedis(t *testing.T) {
	p := writeConf(t, t.TempDir(), "shoal.conf", "port 7000\n")
	tab := New(Params())
	if err := tab.ApplyFile(p); err != nil {
		t.Fatal(err)
	}
	current := "" // what REPLICAOF made it, as package kv owns it
	tab.Own("replicaof", Owner{Get: func() string { return current }})
	for _, c := range []struct{ value, want, absent string }{
		{"127.0.0.1 6380", "\nreplicaof 127.0.0.1 6380\n", `"`},
		{"10.0.0.2 6381", "\nreplicaof 10.0.0.2 6381\n", "6380"},
		{"", "port 7000\n", "replicaof"},
	} {
		current = c.value
		if err := tab.RewriteFile(p); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		text := string(b)
		if !strings.Contains(text, c.want) || strings.Contains(text, c.absent) {
			t.Errorf("replicaof %q: the rewritten file should hold %q and not %q:\n%s", c.value, c.want, c.absent, text)
		}
		again := New(Params())
		if err := again.ApplyFile(p); err != nil {
			t.Fatalf("replicaof %q: the rewritten file does not load: %v\n%s", c.value, err, text)
		}
		if again.Get("replicaof") != c.value {
			t.Errorf("replicaof reads back as %q, was %q", again.Get("replicaof"), c.value)
		}
	}
}
