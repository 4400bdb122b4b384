package store

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// TestParseFloatRules: each argument under each of Redis's three rules,
// "err" where Redis refuses it. The kv tests (float_parse_test.go) check
// the same forms through the commands' parsers against redis-server.
func TestParseFloatRules(t *testing.T) {
	for _, c := range []struct{ in, longDouble, double, rangeEnd string }{
		{"1", "1", "1", "1"},
		{"-1.5", "-1.5", "-1.5", "-1.5"},
		{"+1", "1", "1", "1"},
		{".5", "0.5", "0.5", "0.5"},
		{"5.", "5", "5", "5"},
		{"1e3", "1000", "1000", "1000"},
		{"-0", "-0", "-0", "-0"},
		{"0x10", "16", "16", "16"},
		{"0x1p3", "8", "8", "8"},
		{"0x1.8", "1.5", "1.5", "1.5"},
		{"inf", "+Inf", "+Inf", "+Inf"},
		{"-Infinity", "-Inf", "-Inf", "-Inf"},
		{"nan", "err", "err", "err"},
		{"", "err", "err", "0"},
		{" 1", "err", "err", "1"},
		{"1 ", "err", "err", "err"},
		{"1\x00", "err", "err", "1"},
		{"1e", "err", "err", "err"},
		{"0x", "err", "err", "err"},
		{"1,5", "err", "err", "err"},
		{"1_000", "err", "err", "err"},
		{"1p3", "err", "err", "err"},
		{"0b1", "err", "err", "err"},
		{"1e400", "+Inf", "err", "+Inf"},
		{"-1e400", "-Inf", "err", "-Inf"},
		{"1e5000", "err", "err", "+Inf"},
		{"1e-400", "5e-324", "err", "0"}, // nonzero: a long double holds it
		{"-1e-400", "-5e-324", "err", "-0"},
		{"1e-5000", "err", "err", "0"},
		{"0x1p-16445", "5e-324", "err", "0"},
		{"0x1p-16446", "err", "err", "0"},
		{"1." + strings.Repeat("0", 5117), "1", "1", "1"},
		{"1." + strings.Repeat("0", 5118), "err", "1", "1"},
	} {
		for _, r := range []struct {
			rule FloatRule
			want string
		}{{LongDouble, c.longDouble}, {Double, c.double}, {RangeEnd, c.rangeEnd}} {
			got := "err"
			if f, ok := ParseFloat([]byte(c.in), r.rule); ok {
				got = strconv.FormatFloat(f, 'g', -1, 64)
			}
			if got != r.want {
				t.Errorf("ParseFloat(%.20q, %d) = %s, want %s", c.in, r.rule, got, r.want)
			}
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
		d, ok := ParseFloat([]byte(c.delta), LongDouble)
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

// TestIncrByFloatTextRefusesWhatStrtoldRefuses: an increment is read as
// strtold reads it, so math/big's extra syntax (binary exponents on decimal
// numbers, 0b and 0o prefixes) is refused, and so is a value that strtold
// underflows to zero; redis-server 7.0.15 replies "not a valid float" to
// each of these.
func TestIncrByFloatTextRefusesWhatStrtoldRefuses(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for _, c := range []struct{ incr, want string }{
		{"1p3", ""}, {"0b1", ""}, {"0o7", ""}, {"-9P6", ""}, {"0.p9", ""},
		{"1e-5000", ""}, {"-1e-4951", ""}, {"0x1p-16446", ""}, {"1e700000000", ""}, {"-0x1p3000000000", ""}, {"1e-700000000", ""},
		{"0e-700000000", "0"}, {"0E10000000000000000000", "0"}, {"-0x0p99999999999999999999", "0"},
		{"0x1p-16445", "0"}, {"1e-4950", "0"}, {"0x1.8p-16446", "0"},
	} {
		s.Del([][]byte{[]byte("k")})
		got, err := s.IncrByFloatText(nil, []byte("k"), []byte(c.incr))
		if c.want == "" && !errors.Is(err, ErrNotFloat) || c.want != "" && (err != nil || string(got) != c.want) {
			t.Errorf("%q: %q %v, want %q", c.incr, got, err, c.want)
		}
	}
}

// FuzzParseLongDoubleMatchesItsPredecessor: parseLongDouble, now a rule of
// the one float parser, reads every argument as the string2ld reader of
// its own did before the fold (copied below as the oracle): the same
// error, or the same long double.
func FuzzParseLongDoubleMatchesItsPredecessor(f *testing.F) {
	for _, s := range []string{
		"1", "-1.5", "0x1p3", "0x10", "inf", "-Infinity", "nan", "", " 1", "1 ", "1_0", "1p3", "0b1",
		"1e400", "1e5000", "1e-400", "1e-5000", "0x1p-16445", "0x1p-16446", "12345678901234567890", "-0",
		"1e700000000", "0x1p-3000000000", "1e-700000000", "0e-700000000", "0E10000000000000000000",
		"1E-10000000000000000000", "-0x0p99999999999999999999",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := parseLongDouble(b)
		y, oldErr := oldParseLongDouble(b)
		if err != oldErr {
			t.Fatalf("%q: error %v, before the fold %v", b, err, oldErr)
		}
		if err == nil && (x.Cmp(y) != 0 || x.Signbit() != y.Signbit() || x.Prec() != y.Prec()) {
			t.Fatalf("%q: %v, before the fold %v", b, x, y)
		}
	})
}

// oldFloatSyntax and oldParseLongDouble are store/numbers.go's string2ld
// reader as it was before the fold, kept as the oracle of
// FuzzParseLongDoubleMatchesItsPredecessor. They call the two helpers the
// fold kept as they were, outsideLongDouble and nonzeroMantissa (which kv's
// fuzz target checks against its own old copy of that logic).
func oldFloatSyntax(b []byte) (string, bool) {
	if len(b) == 0 || len(b) >= maxFloatChars {
		return "", false
	}
	switch b[0] {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return "", false
	}
	if bytes.IndexByte(b, '_') >= 0 {
		return "", false
	}
	s := string(b)
	body := bytes.TrimLeft(b, "+-")
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') &&
		!bytes.ContainsAny(body, "pP") {
		s += "p0"
	}
	return s, true
}

func oldParseLongDouble(b []byte) (*big.Float, error) {
	s, ok := oldFloatSyntax(b)
	if !ok {
		return nil, ErrNotFloat
	}
	body := bytes.TrimLeft(b, "+-")
	hex := len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	if f, err := strconv.ParseFloat(s, 64); err == nil && math.IsInf(f, 0) {
		return nil, errInf
	} else if err == nil && math.IsNaN(f) {
		return nil, ErrNotFloat
	} else if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, ErrNotFloat
	} else if err == nil && f == 0 && !nonzeroMantissa(body, hex) {
		return new(big.Float).SetPrec(longDoublePrec).SetFloat64(f), nil
	}
	x, _, err := big.ParseFloat(s, 0, longDoublePrec, big.ToNearestEven)
	if err != nil || outsideLongDouble(x) {
		return nil, ErrNotFloat
	}
	return x, nil
}

// BenchmarkParseFloat reads a typical score, range end and timeout.
func BenchmarkParseFloat(b *testing.B) {
	for _, c := range []struct {
		name string
		rule FloatRule
		in   string
	}{{"Double", Double, "1.5"}, {"RangeEnd", RangeEnd, "-inf"}, {"LongDouble", LongDouble, "0.25"}} {
		b.Run(c.name, func(b *testing.B) {
			in := []byte(c.in)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := ParseFloat(in, c.rule); !ok {
					b.Fatal("refused")
				}
			}
		})
	}
}
