package ascii

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParseIntMatchesRedis(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1": 1, "-1": -1, "123": 123, "123456789": 123456789,
		"9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64,
	}
	for in, want := range good {
		if got, ok := ParseInt([]byte(in)); !ok || got != want {
			t.Errorf("ParseInt(%q) = %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-", "+1", " 1", "1 ", "01", "-0", "00", "1a", "1.5",
		"9223372036854775808", "-9223372036854775809", "18446744073709551616",
		"99999999999999999999", "123456789012345678901", "000000000000000000001"} {
		if got, ok := ParseInt([]byte(in)); ok {
			t.Errorf("ParseInt(%q) = %d, want rejection", in, got)
		}
	}
}

// FuzzParseInt checks ParseInt against strconv plus Redis's extra rules (no
// '+', no leading zeros, no "-0").
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-1", "+1", "01", "-0", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseInt([]byte(s))
		want, err := strconv.ParseInt(s, 10, 64)
		digits := strings.TrimPrefix(s, "-")
		wantOK := err == nil && !strings.HasPrefix(s, "+") &&
			(s == "0" || (len(digits) > 0 && digits[0] != '0'))
		if ok != wantOK || (ok && got != want) {
			t.Fatalf("ParseInt(%q) = %d, %v; strconv says %d, %v (want ok=%v)", s, got, ok, want, err, wantOK)
		}
	})
}

func TestEqualFold(t *testing.T) {
	for _, tt := range []struct {
		b, s string
		want bool
	}{
		{"ex", "EX", true}, {"Ex", "EX", true}, {"EX", "ex", true}, {"keepttl", "KEEPTTL", true},
		{"e", "EX", false}, {"exx", "EX", false}, {"", "", true}, {"[", "{", false},
		{"@", "`", false}, {"\xe2\x84\xaa", "k", false}, {"1", "1", true}, {"a-b", "A-B", true},
	} {
		if got := EqualFold([]byte(tt.b), tt.s); got != tt.want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", tt.b, tt.s, got, tt.want)
		}
		if got := EqualFold(tt.b, tt.s); got != tt.want {
			t.Errorf("EqualFold(string %q, %q) = %v, want %v", tt.b, tt.s, got, tt.want)
		}
	}
}

func TestLower(t *testing.T) {
	got := string(AppendLower([]byte("x:"), []byte("GeT@[`Z\xc9")))
	if want := "x:get@[`z\xc9"; got != want {
		t.Errorf("AppendLower = %q, want %q", got, want)
	}
}

func TestNoAllocations(t *testing.T) {
	b := []byte("-9223372036854775808")
	if n := testing.AllocsPerRun(100, func() {
		ParseInt(b)
		EqualFold(b, "KEEPTTL")
	}); n != 0 {
		t.Errorf("ParseInt/EqualFold allocate %v times per call", n)
	}
}

func TestUnhex(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := -1
		if v, err := strconv.ParseUint(string(rune(c)), 16, 8); err == nil && c < 128 {
			want = int(v)
		}
		if got := Unhex(byte(c)); got != want {
			t.Errorf("Unhex(%q) = %d, want %d", byte(c), got, want)
		}
	}
}
