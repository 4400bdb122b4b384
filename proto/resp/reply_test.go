package resp

import (
	"errors"
	"math"
	"testing"
)

func TestReadReplyKinds(t *testing.T) {
	tests := []struct {
		in   string
		want Reply
	}{
		{"+OK\r\n", Reply{Kind: '+', Data: []byte("OK")}},
		{"+\r\n", Reply{Kind: '+', Data: []byte{}}},
		{"-ERR bad\r\n", Reply{Kind: '-', Data: []byte("ERR bad")}},
		{":-42\r\n", Reply{Kind: ':', Data: []byte("-42"), Int: -42}},
		{":9223372036854775807\r\n", Reply{Kind: ':', Data: []byte("9223372036854775807"), Int: math.MaxInt64}},
		{"$5\r\nhello\r\n", Reply{Kind: '$', Data: []byte("hello"), Len: 5}},
		{"$0\r\n\r\n", Reply{Kind: '$', Data: []byte{}, Len: 0}},
		{"$4\r\na\r\nb\r\n", Reply{Kind: '$', Data: []byte("a\r\nb"), Len: 4}},
		{"$-1\r\n", Reply{Kind: '$', Len: -1}},
		{"*-1\r\n", Reply{Kind: '*', Len: -1}},
		{"*3\r\n", Reply{Kind: '*', Len: 3}},
		{"_\r\n", Reply{Kind: '_', Len: -1}},
		{",1.5\r\n", Reply{Kind: ',', Data: []byte("1.5")}},
		{",-inf\r\n", Reply{Kind: ',', Data: []byte("-inf")}},
		{"#t\r\n", Reply{Kind: '#', Data: []byte("t"), Int: 1}},
		{"#f\r\n", Reply{Kind: '#', Data: []byte("f")}},
		{"(123456789012345678901234567890\r\n", Reply{Kind: '(', Data: []byte("123456789012345678901234567890")}},
		{"=8\r\ntxt:abcd\r\n", Reply{Kind: '=', Data: []byte("txt:abcd"), Len: 8}},
		{"!5\r\nERR x\r\n", Reply{Kind: '!', Data: []byte("ERR x"), Len: 5}},
		{"%2\r\n", Reply{Kind: '%', Len: 2}},
		{"~0\r\n", Reply{Kind: '~'}},
		{">3\r\n", Reply{Kind: '>', Len: 3}},
		{"|1\r\n", Reply{Kind: '|', Len: 1}},
	}
	for _, tt := range tests {
		buf := []byte(tt.in + "+next\r\n")
		r, n, err := ReadReply(buf)
		if err != nil {
			t.Errorf("ReadReply(%q): %v", tt.in, err)
			continue
		}
		if n != len(tt.in) {
			t.Errorf("ReadReply(%q) n = %d, want %d", tt.in, n, len(tt.in))
		}
		if r.Kind != tt.want.Kind || string(r.Data) != string(tt.want.Data) || (r.Data == nil) != (tt.want.Data == nil) ||
			r.Int != tt.want.Int || r.Len != tt.want.Len {
			t.Errorf("ReadReply(%q) = %+v, want %+v", tt.in, r, tt.want)
		}
		if r.Data != nil && !within(r.Data, buf) {
			t.Errorf("ReadReply(%q): Data is a copy", tt.in)
		}
	}
}

func TestReadReplyIncomplete(t *testing.T) {
	for _, in := range []string{"", "+", "+OK", "+OK\r", ":1", "$", "$5\r\nhel", "$5\r\nhello", "$5\r\nhello\r",
		"$9223372036854775807\r\nx", "*2", "=8\r\ntxt:", "#"} {
		if _, n, err := ReadReply([]byte(in)); !errors.Is(err, ErrIncomplete) || n != 0 {
			t.Errorf("ReadReply(%q) = %d, %v; want ErrIncomplete", in, n, err)
		}
	}
}

func TestReadReplyInvalid(t *testing.T) {
	for _, in := range []string{
		"x\r\n", "x", "\r", "\r\n\r\n", "+OK\rX", ":abc\r\n", ":\r\n", ":01\r\n", "#x\r\n", "#tt\r\n", "_x\r\n",
		"$-2\r\n", "$x\r\n", "$3\r\nabcde", "!-1\r\n", "=3\r\nabc\r\n", "=4\r\nabcd\r\n",
		"*-2\r\n", "%-1\r\n", "*99999999999\r\n", "*x\r\n",
	} {
		_, n, err := ReadReply([]byte(in))
		if !errors.Is(err, ErrInvalidReply) || n != 0 {
			t.Errorf("ReadReply(%q) = %d, %v; want ErrInvalidReply", in, n, err)
		}
	}
}

func TestSkipReplyNested(t *testing.T) {
	var b []byte
	b = AppendArrayHeader(b, 3)
	b = AppendBulkString(b, "a")
	b = AppendMapHeader(b, 2)
	b = AppendSimpleString(b, "k1")
	b = AppendArrayHeader(b, 2)
	b = AppendInt(b, 1)
	b = AppendNullArray(b)
	b = AppendSimpleString(b, "k2")
	b = AppendSetHeader(b, 0)
	b = AppendAttributeHeader(b, 1)
	b = AppendSimpleString(b, "ttl")
	b = AppendInt(b, 10)
	b = AppendDouble(b, 2.5)
	whole := len(b)
	b = AppendSimpleString(b, "after")
	for cut := 0; cut < whole; cut++ {
		if _, err := SkipReply(b[:cut]); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("SkipReply of %d/%d bytes: %v, want ErrIncomplete", cut, whole, err)
		}
	}
	n, err := SkipReply(b)
	if err != nil || n != whole {
		t.Fatalf("SkipReply = %d, %v; want %d", n, err, whole)
	}
	r, _, err := ReadReply(b[n:])
	if err != nil || string(r.Data) != "after" {
		t.Errorf("reply after the skipped one = %+v, %v", r, err)
	}
}

func TestSkipReplyDeepNestingUsesNoStack(t *testing.T) {
	var b []byte
	const depth = 1_000_000
	for i := 0; i < depth; i++ {
		b = AppendArrayHeader(b, 1)
	}
	b = AppendInt(b, 7)
	n, err := SkipReply(b)
	if err != nil || n != len(b) {
		t.Fatalf("SkipReply = %d, %v; want %d", n, err, len(b))
	}
}

func TestReplyHelpers(t *testing.T) {
	r, _, _ := ReadReply([]byte("=9\r\nmkd:hello\r\n"))
	f, txt := r.Verbatim()
	if string(f) != "mkd" || string(txt) != "hello" {
		t.Errorf("Verbatim() = %q, %q", f, txt)
	}
	for in, want := range map[string]bool{"$-1\r\n": true, "*-1\r\n": true, "_\r\n": true, "$0\r\n\r\n": false, "*0\r\n": false} {
		r, _, err := ReadReply([]byte(in))
		if err != nil || r.IsNull() != want {
			t.Errorf("%q IsNull() = %v (%v), want %v", in, r.IsNull(), err, want)
		}
	}
	for in, want := range map[string]int{"*3\r\n": 3, "%2\r\n": 4, "|1\r\n": 2, "~5\r\n": 5, ">2\r\n": 2, "*-1\r\n": 0, "$1\r\nx\r\n": 0} {
		r, _, err := ReadReply([]byte(in))
		if err != nil || r.Elements() != want {
			t.Errorf("%q Elements() = %d (%v), want %d", in, r.Elements(), err, want)
		}
	}
}

func TestReadReplyDoesNotAllocate(t *testing.T) {
	buf := []byte("*2\r\n$5\r\nhello\r\n:12\r\n")
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := SkipReply(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("SkipReply allocates %.1f times", allocs)
	}
}
