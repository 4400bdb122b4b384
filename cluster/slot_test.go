package cluster

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestKeySlotKnownValues: slots as redis-server 7.0 computes them (CLUSTER
// KEYSLOT), hash tags included.
func TestKeySlotKnownValues(t *testing.T) {
	for key, want := range map[string]int{
		"":              0,
		"foo":           12182,
		"bar":           5061,
		"123456789":     12739, // CRC16/XMODEM check value 0x31C3
		"{user1000}.a":  KeySlot([]byte("user1000")),
		"{user1000}.b":  KeySlot([]byte("user1000")),
		"foo{}{bar}":    KeySlot([]byte("foo{}{bar}")),
		"foo{{bar}}zap": KeySlot([]byte("{bar")),
		"foo{bar}{zap}": KeySlot([]byte("bar")),
		"{}":            KeySlot([]byte("{}")),
		"a{":            KeySlot([]byte("a{")),
		"somekey{tag":   KeySlot([]byte("somekey{tag")),
	} {
		if got := KeySlot([]byte(key)); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", key, got, want)
		}
	}
	if KeySlot([]byte("foo{}{bar}")) == KeySlot([]byte("bar")) {
		t.Error("an empty tag {} must hash the whole key, not the next tag")
	}
}

// TestKeySlotMatchesRedisServer compares many keys with a real
// redis-server's CLUSTER KEYSLOT (through redis-cli, without cluster mode:
// KEYSLOT needs cluster-enabled, so a cluster-enabled server is started).
func TestKeySlotMatchesRedisServer(t *testing.T) {
	srv := startRedisCluster(t)
	keys := []string{"a", "foo", "{a}b", "x{y}z", "{}x", "x{}", "{{a}}", "user:1000", "\xff\xfe", "k{tag}1", "k{tag}2"}
	for i := range 40 {
		keys = append(keys, "key:"+strconv.Itoa(i*7919))
	}
	for _, k := range keys {
		out, err := exec.Command("redis-cli", "-p", srv, "CLUSTER", "KEYSLOT", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		if got := KeySlot([]byte(k)); got != want {
			t.Errorf("KeySlot(%q) = %d, redis-server says %d", k, got, want)
		}
	}
}
