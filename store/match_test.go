package store

import (
	"math/rand/v2"
	"testing"
)

// TestMatch: the bracket and escape edge cases were checked against redis-server 7 KEYS.
func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true}, {"*", "anything", true}, {"", "", true}, {"", "a", false},
		{"h?llo", "hello", true}, {"h?llo", "hllo", false}, {"h*llo", "hllo", true},
		{"h*llo", "heeeello", true}, {"h[ae]llo", "hallo", true}, {"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true}, {"h[^e]llo", "hello", false}, {"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hallo", true}, // reversed range
		{"h[a-b]llo", "hcllo", false}, {`h\*llo`, "h*llo", true}, {`h\*llo`, "hello", false},
		{`\`, `\`, true}, {`a\`, `a\`, true}, {"[]", "]", false}, {"[]]", "]", false},
		{`[\]]`, "]", true}, {"[^", "x", true}, {"[abc", "b", true}, {"[abc", "bc", false},
		{"[a-", "-", true}, {"[a-", "a", true}, {"*a*b*c*", "xxaxxbxxcxx", true},
		{"*a*b*c*", "xxaxxcxxbxx", false}, {"a*", "b", false}, {"**x", "x", true},
		{"*?", "", false}, {"?*", "a", true}, {"user:*:name", "user:42:name", true},
		{"**", "", false}, {"?*", "", false}, {"***", "", false}, {"**", "a", true}, // checked against KEYS with a key ""
		{"user:*:name", "user:42:age", false}, {"[0-9][0-9]", "42", true}, {"*[0-9]", "abc", false},
		{"[a-]", "-", false}, {"[a-]", "b", false}, // the range swallows the ]
	}
	for _, c := range cases {
		if got := Match([]byte(c.pattern), []byte(c.s)); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}

// refMatch is a direct recursive transcription of the glob rules, the oracle for the
// iterative Match. Like Redis's stringmatchlen, a whole string that is empty matches
// only the empty pattern (or a lone '*', which KEYS and SCAN take as "every key").
func refMatch(p, s []byte) bool {
	if len(s) == 0 {
		return len(p) == 0 || string(p) == "*"
	}
	return refGlob(p, s)
}

func refGlob(p, s []byte) bool {
	for len(p) > 0 {
		if p[0] == '*' {
			for i := 0; i <= len(s); i++ {
				if refGlob(p[1:], s[i:]) {
					return true
				}
			}
			return false
		}
		if len(s) == 0 {
			return false
		}
		ok, next := matchOne(p, 0, s[0])
		if !ok {
			return false
		}
		p, s = p[next:], s[1:]
	}
	return len(s) == 0
}

func TestMatchAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alpha := []byte(`ab*?[]^-\`)
	for i := 0; i < 200000; i++ {
		p := make([]byte, r.IntN(8))
		for j := range p {
			p[j] = alpha[r.IntN(len(alpha))]
		}
		s := make([]byte, r.IntN(8))
		for j := range s {
			s[j] = alpha[r.IntN(4)]
		}
		if got, want := Match(p, s), refMatch(p, s); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference %v", p, s, got, want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{{"h*llo", "hello"}, {"[a-z]?", "b1"}, {`\[`, "["}, {"*a*", "bab"}} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, p, s []byte) {
		if len(p) > 12 || len(s) > 12 {
			return // the reference is exponential
		}
		if got, want := Match(p, s), refMatch(p, s); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference %v", p, s, got, want)
		}
	})
}
