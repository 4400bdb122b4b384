package kv

import (
	"math"
	"strings"
	"testing"
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
