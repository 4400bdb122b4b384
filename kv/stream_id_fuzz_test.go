package kv

import (
	"strconv"
	"testing"
)

// FuzzStreamID feeds arbitrary arguments to the stream ID parser: it must
// never panic, and an ID it reads as <ms>-<seq> must be the integers
// strtoull reads from each side (checked against strconv for the
// canonical forms), and format back to itself when the input was
// canonical.
func FuzzStreamID(f *testing.F) {
	for _, s := range []string{"0-0", "1-1", "-", "+", "5", "5-*", "*", "18446744073709551615-18446744073709551615",
		"18446744073709551616-0", "1-18446744073709551616", " 5-1", "+5-1", "-5-1", "005-2", "1--1", "1-", "-1",
		"1-2-3", "1-\x00", "\x00", "1\x002", "(1-1", "1-*-*", "  -1-0", "99999999999999999999-1", "0x10-1", "1- 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []streamIDParse{{}, {strict: true}, {strict: true, seqStar: true}, {missingSeq: 1<<64 - 1}} {
			id, seqGiven, ok := p.parse([]byte(s))
			if !ok {
				continue
			}
			if !p.seqStar && !seqGiven {
				t.Fatalf("%q: seqGiven false without seqStar", s)
			}
			text := id.String()
			ms, err1 := strconv.ParseUint(text[:len(strconv.FormatUint(id.Ms, 10))], 10, 64)
			if err1 != nil || ms != id.Ms {
				t.Fatalf("%q: formatted as %q", s, text)
			}
			if seqGiven && text == s {
				back, _, ok := p.parse([]byte(text))
				if !ok || back != id {
					t.Fatalf("%q: formatted %q does not read back", s, text)
				}
			}
		}
		// A range bound never panics either.
		_, _, _ = parseIntervalID([]byte(s), 0)
	})
}
