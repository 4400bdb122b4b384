package store

import (
	"strconv"
	"strings"
	"testing"
)

// setLimits applies l for the test and puts the defaults back after it.
func setLimits(t *testing.T, l EncodingLimits) {
	t.Helper()
	if err := SetEncodings(l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = SetEncodings(DefaultEncodingLimits) })
}

// TestEncodingLimitsMoveConversions: each threshold decides where its
// collection converts, and list-max-listpack-size how many elements or
// bytes a list node holds.
func TestEncodingLimitsMoveConversions(t *testing.T) {
	setLimits(t, EncodingLimits{
		HashMaxListpackEntries: 3, HashMaxListpackValue: 10, SetMaxIntsetEntries: 4,
		ZSetMaxListpackEntries: 2, ZSetMaxListpackValue: 5, ListMaxListpackSize: 3,
	})
	h := NewHash()
	for i := range 3 {
		h.Set([]byte("f"+strconv.Itoa(i)), []byte("v"))
	}
	if h.Encoding() != "listpack" {
		t.Fatalf("3 fields at a limit of 3: %s", h.Encoding())
	}
	h.Set([]byte("f3"), []byte("v"))
	if h.Encoding() != "hashtable" {
		t.Errorf("4 fields at a limit of 3: %s", h.Encoding())
	}
	h2 := NewHash()
	h2.Set([]byte("f"), []byte(strings.Repeat("v", 11)))
	if h2.Encoding() != "hashtable" {
		t.Errorf("an 11-byte value at a limit of 10: %s", h2.Encoding())
	}

	s := NewSet()
	for i := range 4 {
		s.Add([]byte(strconv.Itoa(i)))
	}
	if s.Encoding() != "intset" {
		t.Fatalf("4 integers at a limit of 4: %s", s.Encoding())
	}
	s.Add([]byte("4"))
	if s.Encoding() != "hashtable" {
		t.Errorf("5 integers at a limit of 4: %s", s.Encoding())
	}

	z := NewZSet(0, 0)
	z.Set([]byte("a"), 1)
	z.Set([]byte("b"), 2)
	if z.Encoding() != "listpack" {
		t.Fatalf("2 members at a limit of 2: %s", z.Encoding())
	}
	z.Set([]byte("c"), 3)
	if z.Encoding() != "skiplist" {
		t.Errorf("3 members at a limit of 2: %s", z.Encoding())
	}
	z2 := NewZSet(0, 0)
	z2.Set([]byte("sixsix"), 1)
	if z2.Encoding() != "skiplist" {
		t.Errorf("a 6-byte member at a limit of 5: %s", z2.Encoding())
	}

	l := &List{}
	for i := range 10 {
		l.PushBack([]byte(strconv.Itoa(i)))
	}
	if len(l.nodes) != 4 {
		t.Errorf("10 elements at 3 per node: %d nodes", len(l.nodes))
	}
	for _, nd := range l.nodes {
		if nd.count > 3 {
			t.Errorf("a node of %d elements at a limit of 3", nd.count)
		}
	}

	// A byte size: -1 is 4 KiB per node.
	setLimits(t, EncodingLimits{HashMaxListpackEntries: 512, HashMaxListpackValue: 64, SetMaxIntsetEntries: 512,
		ZSetMaxListpackEntries: 128, ZSetMaxListpackValue: 64, ListMaxListpackSize: -1})
	l = &List{}
	for range 100 {
		l.PushFront([]byte(strings.Repeat("x", 100)))
	}
	for _, nd := range l.nodes {
		if nd.used() > 4096 {
			t.Errorf("a node of %d bytes at list-max-listpack-size -1", nd.used())
		}
	}
	if len(l.nodes) < 3 {
		t.Errorf("10 KB of elements in %d nodes of at most 4 KiB", len(l.nodes))
	}
}

// TestSetEncodingsRefusesWhatCannotHold: a value past what a small
// hash's one-byte lengths hold, a zero list size, negative counts.
func TestSetEncodingsRefusesWhatCannotHold(t *testing.T) {
	for _, l := range []EncodingLimits{
		{HashMaxListpackValue: 256, ListMaxListpackSize: -2},
		{ZSetMaxListpackValue: 300, ListMaxListpackSize: -2},
		{ListMaxListpackSize: 0},
		{ListMaxListpackSize: -6},
		{HashMaxListpackEntries: -1, ListMaxListpackSize: -2},
	} {
		if err := SetEncodings(l); err == nil {
			_ = SetEncodings(DefaultEncodingLimits)
			t.Errorf("%+v accepted", l)
		}
	}
	if Encodings() != DefaultEncodingLimits {
		t.Errorf("a refused change took effect: %+v", Encodings())
	}
}
