package listpack

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// build encodes elems as one listpack, as Redis's lpAppend would.
func build(elems ...[]byte) []byte {
	lp := AppendHeader(nil)
	for _, e := range elems {
		lp = AppendString(lp, e)
	}
	return Finish(lp, len(elems))
}

// texts reads every entry of a validated listpack as text.
func texts(t *testing.T, lp []byte) []string {
	t.Helper()
	var out []string
	if _, err := Each(lp, func(e Entry) error {
		out = append(out, string(e.AppendText(nil)))
		return nil
	}); err != nil {
		t.Fatalf("Each: %v", err)
	}
	return out
}

// TestEncodingBoundaries checks, at the edges of every encoding, the
// encoding byte chosen, the entry's size (and that EntrySize predicts it),
// and that the entry decodes to the text it was made from.
func TestEncodingBoundaries(t *testing.T) {
	type tc struct {
		text  string
		first byte // the encoding byte, or its type bits for the small forms
		mask  byte
		size  int // encoding + data, without the backlen
	}
	i := func(v int64, first, mask byte, size int) tc { return tc{strconv.FormatInt(v, 10), first, mask, size} }
	s := func(n int, first, mask byte, size int) tc { return tc{strings.Repeat("x", n), first, mask, size} }
	cases := []tc{
		i(0, 0x00, 0x80, 1), i(1, 0x00, 0x80, 1), i(127, 0x7F, 0xFF, 1),
		i(128, 0xC0, 0xE0, 2), i(-1, 0xDF, 0xFF, 2), i(4095, 0xCF, 0xFF, 2), i(-4096, 0xD0, 0xFF, 2),
		i(4096, 0xF1, 0xFF, 3), i(-4097, 0xF1, 0xFF, 3), i(math.MaxInt16, 0xF1, 0xFF, 3), i(math.MinInt16, 0xF1, 0xFF, 3),
		i(math.MaxInt16+1, 0xF2, 0xFF, 4), i(math.MinInt16-1, 0xF2, 0xFF, 4), i(1<<23-1, 0xF2, 0xFF, 4), i(-1<<23, 0xF2, 0xFF, 4),
		i(1<<23, 0xF3, 0xFF, 5), i(-1<<23-1, 0xF3, 0xFF, 5), i(math.MaxInt32, 0xF3, 0xFF, 5), i(math.MinInt32, 0xF3, 0xFF, 5),
		i(math.MaxInt32+1, 0xF4, 0xFF, 9), i(math.MinInt32-1, 0xF4, 0xFF, 9), i(math.MaxInt64, 0xF4, 0xFF, 9), i(math.MinInt64, 0xF4, 0xFF, 9),
		s(0, 0x80, 0xFF, 1), s(1, 0x81, 0xFF, 2), s(63, 0xBF, 0xFF, 64),
		s(64, 0xE0, 0xFF, 66), s(4095, 0xEF, 0xFF, 4097),
		s(4096, 0xF0, 0xFF, 4101), s(70000, 0xF0, 0xFF, 70005),
		// Not an integer's canonical text, so kept as strings.
		{"-0", 0x82, 0xFF, 3}, {"01", 0x82, 0xFF, 3}, {"+1", 0x82, 0xFF, 3}, {" 1", 0x82, 0xFF, 3}, {"1.0", 0x83, 0xFF, 4},
		{"9223372036854775808", 0x93, 0xFF, 20}, {"-9223372036854775809", 0x94, 0xFF, 21},
	}
	for _, c := range cases {
		e := AppendString(nil, []byte(c.text))
		name := c.text
		if len(name) > 20 {
			name = name[:10] + "…(" + strconv.Itoa(len(c.text)) + ")"
		}
		if e[0]&c.mask != c.first {
			t.Errorf("%s: encoding byte %#02x, want %#02x under mask %#02x", name, e[0], c.first, c.mask)
		}
		if want := c.size + backlenSize(c.size); len(e) != want {
			t.Errorf("%s: entry of %d bytes, want %d", name, len(e), want)
		}
		if n := EntrySize([]byte(c.text)); n != len(e) {
			t.Errorf("%s: EntrySize %d, entry of %d bytes", name, n, len(e))
		}
		if v, err := strconv.ParseInt(c.text, 10, 64); err == nil && c.text == strconv.FormatInt(v, 10) {
			if b := AppendInt(nil, v); !bytes.Equal(b, e) {
				t.Errorf("%s: AppendInt wrote % x, AppendString % x", name, b, e)
			}
		}
		lp := build([]byte(c.text))
		got, size, err := Decode(lp, First)
		if err != nil || size != c.size || string(got.AppendText(nil)) != c.text || !got.Equal([]byte(c.text)) {
			t.Errorf("%s: decoded %q (size %d, %v), want the same text, size %d", name, got.AppendText(nil), size, err, c.size)
		}
	}
}

// TestEveryIntegerOfTheSmallEncodings round-trips each value the 7-bit
// and 13-bit encodings hold, and their neighbours.
func TestEveryIntegerOfTheSmallEncodings(t *testing.T) {
	for v := int64(-4097); v <= 4096; v++ {
		e := AppendInt(nil, v)
		want := 2
		switch {
		case v >= 0 && v <= 127:
			want = 1
		case v < -4096 || v > 4095:
			want = 3
		}
		if len(e) != want+1 {
			t.Fatalf("%d: entry % x, want %d bytes and a 1-byte backlen", v, e, want)
		}
		got, _ := Next(Finish(append(AppendHeader(nil), e...), 1), First)
		if !got.IsInt || got.Int != v {
			t.Fatalf("%d: decoded %+v", v, got)
		}
	}
}

// TestExactBytes pins entries to the bytes listpack.c writes, worked out
// from its encoding definitions, backlens of every width included (with
// lpEncodeBacklen's 3 bytes for 16383).
func TestExactBytes(t *testing.T) {
	str := func(n int) []byte { return bytes.Repeat([]byte{'x'}, n) }
	cases := []struct {
		elem       []byte
		head, tail []byte // the entry's first and last bytes
	}{
		{[]byte("5"), []byte{0x05}, []byte{0x01}},
		{[]byte("128"), []byte{0xC0, 0x80}, []byte{0x02}},
		{[]byte("-1"), []byte{0xDF, 0xFF}, []byte{0x02}},
		{[]byte("-4096"), []byte{0xD0, 0x00}, []byte{0x02}},
		{[]byte("4096"), []byte{0xF1, 0x00, 0x10}, []byte{0x03}},
		{[]byte("-8388608"), []byte{0xF2, 0x00, 0x00, 0x80}, []byte{0x04}},
		{[]byte("-2147483648"), []byte{0xF3, 0x00, 0x00, 0x00, 0x80}, []byte{0x05}},
		{[]byte("-9223372036854775808"), []byte{0xF4, 0, 0, 0, 0, 0, 0, 0, 0x80}, []byte{0x09}},
		{[]byte("abc"), []byte("\x83abc"), []byte{0x04}},
		{str(125), []byte{0xE0, 125}, []byte{0x7F}},                                       // 127 bytes: one backlen byte
		{str(126), []byte{0xE0, 126}, []byte{0x01, 0x80}},                                 // 128 bytes: two
		{str(200), []byte{0xE0, 200}, []byte{0x01, 0xCA}},                                 // 202
		{str(4096), []byte{0xF0, 0x00, 0x10, 0x00, 0x00}, []byte{0x20, 0x85}},             // 4101
		{str(16377), []byte{0xF0, 0xF9, 0x3F, 0, 0}, []byte{0x7F, 0xFE}},                  // 16382: still two
		{str(16378), []byte{0xF0, 0xFA, 0x3F, 0, 0}, []byte{0x00, 0xFF, 0xFF}},            // 16383: three
		{str(2097146), []byte{0xF0, 0xFA, 0xFF, 0x1F, 0}, []byte{0x00, 0xFF, 0xFF, 0xFF}}, // 2097151: four
	}
	for _, c := range cases {
		e := AppendString(nil, c.elem)
		if !bytes.HasPrefix(e, c.head) || !bytes.HasSuffix(e, c.tail) || len(e) != EntrySize(c.elem) {
			t.Errorf("%d-byte %.8q: entry starts % x and ends % x (%d bytes), want % x … % x",
				len(c.elem), c.elem, e[:min(len(e), 9)], e[max(0, len(e)-4):], len(e), c.head, c.tail)
		}
		lp := build(c.elem)
		if p := Prev(lp, len(lp)-1); p != First {
			t.Errorf("%d-byte %.8q: Prev from the end is %d, want %d", len(c.elem), c.elem, p, First)
		}
	}
	if got, want := build(), []byte{7, 0, 0, 0, 0, 0, End}; !bytes.Equal(got, want) {
		t.Errorf("empty listpack % x, want % x", got, want)
	}
	if got, want := build([]byte("a"), []byte("7")), []byte{12, 0, 0, 0, 2, 0, 0x81, 'a', 2, 7, 1, End}; !bytes.Equal(got, want) {
		t.Errorf("listpack of a, 7: % x, want % x", got, want)
	}
}

// TestBackwardIterationMatchesForward walks a listpack with entries of
// every encoding and backlen width from its End byte with Prev and reads
// the forward order reversed.
func TestBackwardIterationMatchesForward(t *testing.T) {
	var elems [][]byte
	for _, s := range []string{"0", "127", "-4096", "32767", "-8388608", "2147483647", "-9223372036854775808", "", "x", "-0"} {
		elems = append(elems, []byte(s))
	}
	for _, n := range []int{63, 64, 125, 126, 4095, 4096, 16377, 16378, 2097146} {
		elems = append(elems, bytes.Repeat([]byte{byte('a' + n%26)}, n))
	}
	lp := build(elems...)
	if n, err := Validate(lp); err != nil || n != len(elems) {
		t.Fatalf("Validate: %d entries, %v; want %d", n, err, len(elems))
	}
	var offsets []int
	for p := First; p < len(lp)-1; {
		offsets = append(offsets, p)
		_, p = Next(lp, p)
	}
	if len(offsets) != len(elems) {
		t.Fatalf("Next walked %d entries, want %d", len(offsets), len(elems))
	}
	i := len(offsets) - 1
	for p := len(lp) - 1; p > First; i-- {
		p = Prev(lp, p)
		if i < 0 || p != offsets[i] {
			t.Fatalf("Prev reached offset %d, want entry %d at %d", p, i, offsets[max(i, 0)])
		}
		if e, _ := Next(lp, p); !bytes.Equal(e.AppendText(nil), elems[i]) {
			t.Fatalf("entry %d read backwards as %.8q, want %.8q", i, e.AppendText(nil), elems[i])
		}
	}
	if i != -1 {
		t.Fatalf("Prev stopped with %d entries unread", i+1)
	}
}

// TestCountUnknownPastUint16 shows a listpack of more than 65535 entries
// declares CountUnknown, and that Validate then counts the entries.
func TestCountUnknownPastUint16(t *testing.T) {
	lp := AppendHeader(nil)
	const n = 70000
	for i := 0; i < n; i++ {
		lp = AppendInt(lp, int64(i))
	}
	lp = Finish(lp, n)
	if Count(lp) != CountUnknown || TotalBytes(lp) != len(lp) {
		t.Fatalf("header: count %d, total %d of %d bytes", Count(lp), TotalBytes(lp), len(lp))
	}
	if got, err := Validate(lp); err != nil || got != n {
		t.Fatalf("Validate: %d, %v; want %d", got, err, n)
	}
	SetHeader(lp, 65534)
	if _, err := Validate(lp); !errors.Is(err, ErrCount) {
		t.Fatalf("a count of 65534 for %d entries: %v, want ErrCount", n, err)
	}
}

// TestMalformedListpacksAreRejected names the check each corruption
// fails.
func TestMalformedListpacksAreRejected(t *testing.T) {
	good := build([]byte("field"), []byte("12345"), bytes.Repeat([]byte{'v'}, 100))
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		lp   []byte
		want error
	}{
		{"empty", nil, ErrHeader},
		{"header only", []byte{6, 0, 0, 0, 0, 0}, ErrHeader},
		{"total bytes too big", edit(func(b []byte) []byte { b[0]++; return b }), ErrHeader},
		{"no end byte", edit(func(b []byte) []byte { b[len(b)-1] = 0; return b }), ErrHeader},
		{"truncated", edit(func(b []byte) []byte {
			b = append(b[:len(b)-20], End)
			SetHeader(b, 3)
			return b
		}), ErrTruncated},
		{"string longer than the listpack", func() []byte { b := build([]byte("ab")); b[First] = 0xBF; return b }(), ErrTruncated},
		{"32-bit length past the end", edit(func(b []byte) []byte {
			return Finish(append(AppendHeader(nil), 0xF0, 0xFF, 0xFF, 0xFF, 0xFF), 1)
		}), ErrTruncated},
		{"invalid encoding", Finish(append(AppendHeader(nil), 0xF5, 0x01), 1), ErrEncoding},
		{"end byte as an entry", Finish(append(AppendHeader(nil), End, 0x01), 1), ErrEncoding},
		{"wrong backlen", edit(func(b []byte) []byte { b[First+6]++; return b }), ErrBacklen},
		{"backlen flags misplaced", Finish(append(AppendHeader(nil), 0x05, 0x81), 1), ErrBacklen},
		{"backlen past the end", Finish(append(AppendHeader(nil), 0x05), 1), ErrBacklen},
		{"count too big", edit(func(b []byte) []byte { b[4] = 4; return b }), ErrCount},
	}
	for _, c := range cases {
		if _, err := Validate(c.lp); !errors.Is(err, c.want) {
			t.Errorf("%s: Validate says %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := Validate(good); err != nil {
		t.Fatalf("the unedited listpack: %v", err)
	}
}

// TestEachStopsAtTheCallbacksError passes fn's error through and reads no
// further.
func TestEachStopsAtTheCallbacksError(t *testing.T) {
	stop := errors.New("stop")
	seen := 0
	n, err := Each(build([]byte("a"), []byte("b"), []byte("c")), func(Entry) error {
		seen++
		if seen == 2 {
			return stop
		}
		return nil
	})
	if err != stop || seen != 2 || n != 1 {
		t.Fatalf("Each: %d entries, %v, fn called %d times; want 1, stop, 2", n, err, seen)
	}
}

// TestDecodedStringsAreCapped keeps an append to a decoded string from
// writing over the listpack after it.
func TestDecodedStringsAreCapped(t *testing.T) {
	lp := build([]byte("ab"), []byte("cd"))
	e, _ := Next(lp, First)
	_ = append(e.Str, 'Z')
	if got := texts(t, lp); !slices.Equal(got, []string{"ab", "cd"}) {
		t.Fatalf("after appending to a decoded string the listpack reads %q", got)
	}
}
