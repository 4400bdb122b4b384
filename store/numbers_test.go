package store

import (
	"errors"
	"math"
	"testing"
)

func TestParseFloat(t *testing.T) {
	good := map[string]float64{
		"1": 1, "-1.5": -1.5, "+1": 1, ".5": 0.5, "5.": 5, "1e3": 1000, "0x10": 16,
		"0x1p3": 8, "inf": math.Inf(1), "-Infinity": math.Inf(-1),
	}
	for in, want := range good {
		if got, ok := ParseFloat([]byte(in)); !ok || got != want {
			t.Errorf("ParseFloat(%q) = %v %v, want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", " 1", "1 ", "\t1", "nan", "NaN", "1e", "0x", "1,5", "abc", "1_000", "1e400"} {
		if got, ok := ParseFloat([]byte(in)); ok {
			t.Errorf("ParseFloat(%q) = %v, want rejection", in, got)
		}
	}
}

// TestIncrByFloatMatchesRedis: every want below is what redis-server 7 replied to
// SET k <start>; INCRBYFLOAT k <delta> (long double arithmetic, "%.17Lf" trimmed).
func TestIncrByFloatMatchesRedis(t *testing.T) {
	cases := []struct{ start, delta, want string }{
		{"", "0.1", "0.1"}, // missing key
		{"10.5", "0.1", "10.6"},
		{"5.0e3", "2e-1", "5000.20000000000000018"},
		{"5.0e3", "2.0e2", "5200"},
		{"0.1", "0.2", "0.3"},
		{"3.0e3", "0", "3000"},
		{"1e-20", "0", "0"},
		{"123456789.12345678", "0", "123456789.1234567799983779"},
		{"-0.0", "0", "0"},
		{"1e30", "0", "1000000000000000000024696061952"},
		{"0.1", "-0.1", "0"},
		{"1", "1e20", "100000000000000000000"},
		{"1.5", "-1.5", "0"},
		{"-1", "0.5", "-0.5"},
		{"1e-5", "0", "0.00001"},
		{"1.23456789012345678", "0", "1.23456789012345678"},
		{"100", "1e-17", "100.00000000000000001"},
		{"2.5e10", "0.25", "25000000000.25"},
		{"0x1p3", "1", "9"},
		{"0x10", "1", "17"},
		{"+1", "0", "1"},
		{".5", "0", "0.5"},
		{"5.", "0", "5"},
		{"1e-400", "0", "0"},
		{"7", "-7.5", "-0.5"},
		{"3.14159", "2.71828", "5.85987"},
		{"1e308", "1e308", "199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096"},
	}
	s := newTestStore(t, Options{})
	for _, c := range cases {
		s.Del(bs("k"))
		if c.start != "" {
			set(t, s, "k", c.start, SetOptions{})
		}
		d, ok := ParseFloat([]byte(c.delta))
		if !ok {
			t.Fatalf("ParseFloat(%q) failed", c.delta)
		}
		got, err := s.IncrByFloat([]byte("reply:"), b("k"), d)
		if err != nil || string(got) != "reply:"+c.want {
			t.Errorf("%s + %s = %q %v, want %q", c.start, c.delta, got, err, c.want)
			continue
		}
		if v, _ := mustGet(t, s, "k"); v != c.want {
			t.Errorf("%s + %s stored %q, want %q", c.start, c.delta, v, c.want)
		}
	}
	errCases := []struct {
		start string
		delta float64
		want  error
	}{
		{"1.0x", 1, ErrNotFloat}, {"1.5e", 0, ErrNotFloat}, {"0x", 0, ErrNotFloat}, {"1,5", 0, ErrNotFloat},
		{" 1", 1, ErrNotFloat}, {"nan", 1, ErrNotFloat}, {"inf", 0, ErrNaNOrInf}, {"-inf", 0, ErrNaNOrInf},
		{"infinity", 0, ErrNaNOrInf}, {"1", math.Inf(1), ErrNaNOrInf},
	}
	for _, c := range errCases {
		set(t, s, "k", c.start, SetOptions{})
		if got, err := s.IncrByFloat(nil, b("k"), c.delta); !errors.Is(err, c.want) || len(got) != 0 {
			t.Errorf("%q + %v: %q %v, want %v", c.start, c.delta, got, err, c.want)
		}
		if v, _ := mustGet(t, s, "k"); v != c.start {
			t.Errorf("failed IncrByFloat changed %q to %q", c.start, v)
		}
	}
}

func TestAppendFloat(t *testing.T) {
	for f, want := range map[float64]string{
		10.6: "10.6", 3e3: "3000", 0.1: "0.1", -2.5: "-2.5", 1e-20: "0", 5200: "5200",
		math.Inf(1): "inf", math.Inf(-1): "-inf", math.Copysign(0, -1): "0", 1e20: "100000000000000000000",
	} {
		if got := string(AppendFloat([]byte("x"), f)); got != "x"+want {
			t.Errorf("AppendFloat(%v) = %q, want %q", f, got, "x"+want)
		}
	}
}

// TestIncrByFloatTextKeepsLongDoublePrecision: the increment is read as a
// long double, as Redis's string2ld does, not through a float64.
func TestIncrByFloatTextKeepsLongDoublePrecision(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for _, c := range []struct {
		incr, want string
		err        error
	}{
		{"12345678901234567890", "12345678901234567890", nil}, // a float64 gives ...7168
		{"1e400", "", nil},
		{"1e5000", "", ErrNotFloat}, // beyond the long double range
		{"inf", "", ErrNaNOrInf},
		{" 1", "", ErrNotFloat},
	} {
		s.Del([][]byte{[]byte("k")})
		got, err := s.IncrByFloatText(nil, []byte("k"), []byte(c.incr))
		if !errors.Is(err, c.err) {
			t.Errorf("%q: error %v, want %v", c.incr, err, c.err)
			continue
		}
		if c.want != "" && string(got) != c.want {
			t.Errorf("%q: %q, want %q", c.incr, got, c.want)
		}
		if c.incr == "1e400" && (len(got) != 401 || got[0] != '1') {
			t.Errorf("1e400: %d digits starting %q", len(got), got[:1])
		}
	}
}
