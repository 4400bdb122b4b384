package frame

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestRequestLayoutIsBigEndian(t *testing.T) {
	got, err := AppendSet(nil, []byte("ab"), []byte("xyz"))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{2, 0, 2, 0, 0, 0, 3, 'a', 'b', 'x', 'y', 'z'}
	if !bytes.Equal(got, want) {
		t.Fatalf("SET frame = %v, want %v", got, want)
	}
	got, err = AppendResponse(nil, StatusOK, make([]byte, 0x0102))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:5], []byte{0, 0, 0, 1, 2}) || len(got) != 5+0x0102 {
		t.Fatalf("response header = %v len %d", got[:5], len(got))
	}
}

func TestRequestRoundTrip(t *testing.T) {
	cases := []struct {
		op         Op
		key, value []byte
	}{
		{OpGet, []byte("k"), nil},
		{OpGet, nil, nil},
		{OpSet, []byte("key:000001"), []byte("value")},
		{OpSet, []byte("k"), nil},
		{OpSet, bytes.Repeat([]byte("k"), MaxKeyLen), bytes.Repeat([]byte("v"), 70000)},
		{OpDel, []byte("gone"), nil},
		{OpPing, nil, nil},
		{OpPing, nil, []byte("hello")},
	}
	var stream []byte
	for _, c := range cases {
		var err error
		if stream, err = AppendRequest(stream, c.op, c.key, c.value); err != nil {
			t.Fatalf("%v: %v", c.op, err)
		}
	}
	var d Decoder
	rest := stream
	for i, c := range cases {
		// Every proper prefix of the frame is incomplete, never an error or a result.
		size := RequestHeaderLen + len(c.key) + len(c.value)
		for cut := 0; cut < size; cut += 1 + cut/3 {
			var req Request
			if n, err := d.DecodeRequest(rest[:cut], &req); err != ErrIncomplete || n != 0 {
				t.Fatalf("case %d cut %d: n=%d err=%v, want ErrIncomplete", i, cut, n, err)
			}
		}
		var req Request
		n, err := d.DecodeRequest(rest, &req)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if n != size || req.Op != c.op || !bytes.Equal(req.Key, c.key) || !bytes.Equal(req.Value, c.value) {
			t.Fatalf("case %d: n=%d op=%v key=%d bytes value=%d bytes", i, n, req.Op, len(req.Key), len(req.Value))
		}
		rest = rest[n:]
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left over", len(rest))
	}
}

func TestDecodedSlicesAliasInputAndCannotGrowIntoIt(t *testing.T) {
	buf, _ := AppendSet(nil, []byte("k"), []byte("v"))
	buf, _ = AppendGet(buf, []byte("next"))
	var req Request
	n, err := new(Decoder).DecodeRequest(buf, &req)
	if err != nil {
		t.Fatal(err)
	}
	buf[RequestHeaderLen] = 'K'
	if req.Key[0] != 'K' {
		t.Fatal("key is a copy, want a sub-slice of the input")
	}
	if cap(req.Value) != 1 {
		t.Fatalf("cap(value) = %d, want 1 so appends cannot clobber the next frame", cap(req.Value))
	}
	req.Value = append(req.Value, '!')
	if buf[n] != byte(OpGet) {
		t.Fatal("append to value overwrote the next frame")
	}
}

func TestResponseRoundTrip(t *testing.T) {
	cases := []struct {
		status Status
		value  []byte
	}{
		{StatusOK, []byte("bar")},
		{StatusOK, nil},
		{StatusNotFound, nil},
		{StatusError, []byte("ERR wrong")},
	}
	var stream []byte
	for _, c := range cases {
		var err error
		if stream, err = AppendResponse(stream, c.status, c.value); err != nil {
			t.Fatal(err)
		}
	}
	var d Decoder
	for i, c := range cases {
		for cut := 0; cut < ResponseHeaderLen+len(c.value); cut++ {
			var r Response
			if _, err := d.DecodeResponse(stream[:cut], &r); err != ErrIncomplete {
				t.Fatalf("case %d cut %d: err=%v, want ErrIncomplete", i, cut, err)
			}
		}
		var r Response
		n, err := d.DecodeResponse(stream, &r)
		if err != nil || r.Status != c.status || !bytes.Equal(r.Value, c.value) {
			t.Fatalf("case %d: %v %v %q", i, err, r.Status, r.Value)
		}
		stream = stream[n:]
	}
	msg := AppendErrorResponse(nil, "ERR boom")
	var r Response
	if _, err := d.DecodeResponse(msg, &r); err != nil || r.Status != StatusError || string(r.Value) != "ERR boom" {
		t.Fatalf("error response: %v %v %q", err, r.Status, r.Value)
	}
}

// hdr builds a raw request header without the encoder's checks.
func hdr(op byte, keyLen uint16, valueLen uint32) []byte {
	return []byte{op, byte(keyLen >> 8), byte(keyLen), byte(valueLen >> 24), byte(valueLen >> 16), byte(valueLen >> 8), byte(valueLen)}
}

func TestDecodeRequestErrors(t *testing.T) {
	small := Decoder{Limits: Limits{MaxKeyLen: 8, MaxValueLen: 100}}
	cases := []struct {
		name string
		d    Decoder
		in   []byte
		want string
	}{
		{"zero opcode", Decoder{}, hdr(0, 1, 0), "unknown opcode 0"},
		{"unknown opcode early", Decoder{}, []byte{9}, "unknown opcode 9"},
		{"unknown opcode", Decoder{}, hdr(200, 0, 0), "unknown opcode 200"},
		{"value on GET", Decoder{}, hdr(1, 1, 5), "GET request carries a 5-byte value"},
		{"value on DEL", Decoder{}, hdr(3, 1, 1), "DEL request carries a 1-byte value"},
		{"key on PING", Decoder{}, hdr(4, 2, 0), "PING request carries a 2-byte key"},
		{"key over limit", small, hdr(2, 9, 0), "key length 9 exceeds limit 8"},
		{"value over limit", small, hdr(2, 1, 101), "value length 101 exceeds limit 100"},
		{"value over default", Decoder{}, hdr(2, 1, DefaultMaxValueLen+1), "value length 16777217 exceeds limit 16777216"},
		{"max field value", Decoder{}, hdr(2, 1, MaxValueLen), "value length 4294967295 exceeds limit 16777216"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := Request{Op: OpPing}
			n, err := c.d.DecodeRequest(c.in, &req)
			var fe *Error
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want *Error containing %q", err, c.want)
			}
			if n != 0 || req.Op != OpPing {
				t.Fatalf("n=%d req=%+v: an error must consume nothing and leave req alone", n, req)
			}
		})
	}
}

func TestDecodeRequestLimitsAtBoundary(t *testing.T) {
	d := Decoder{Limits: Limits{MaxKeyLen: 4, MaxValueLen: 4}}
	buf, _ := AppendSet(nil, []byte("kkkk"), []byte("vvvv"))
	var req Request
	if n, err := d.DecodeRequest(buf, &req); err != nil || n != len(buf) {
		t.Fatalf("at the limit: n=%d err=%v", n, err)
	}
	huge := Decoder{Limits: Limits{MaxKeyLen: 1 << 20, MaxValueLen: 1 << 40}}
	if huge.Limits.keyLimit() != MaxKeyLen || huge.Limits.valueLimit() != MaxValueLen {
		t.Fatal("limits above the field widths must clamp to them")
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"unknown status early", []byte{3}, "unknown status 3"},
		{"unknown status", []byte{7, 0, 0, 0, 0}, "unknown status 7"},
		{"value on NOT_FOUND", []byte{1, 0, 0, 0, 2, 'x', 'y'}, "NOT_FOUND response carries a 2-byte value"},
		{"value over limit", []byte{0, 0xff, 0xff, 0xff, 0xff}, "value length 4294967295 exceeds limit 16777216"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r Response
			_, err := new(Decoder).DecodeResponse(c.in, &r)
			var fe *Error
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want *Error containing %q", err, c.want)
			}
		})
	}
}

func TestEncodeErrorsNeverWrap(t *testing.T) {
	prefix := []byte("keep")
	cases := []struct {
		name string
		enc  func() ([]byte, error)
		want string
	}{
		{"key 65536", func() ([]byte, error) { return AppendGet(prefix, make([]byte, MaxKeyLen+1)) }, "key length 65536 exceeds limit 65535"},
		{"SET key 70000", func() ([]byte, error) { return AppendSet(prefix, make([]byte, 70000), nil) }, "key length 70000 exceeds limit 65535"},
		{"value on GET", func() ([]byte, error) { return AppendRequest(prefix, OpGet, []byte("k"), []byte("v")) }, "GET request carries a 1-byte value"},
		{"value on DEL", func() ([]byte, error) { return AppendRequest(prefix, OpDel, []byte("k"), []byte("vv")) }, "DEL request carries a 2-byte value"},
		{"key on PING", func() ([]byte, error) { return AppendRequest(prefix, OpPing, []byte("k"), nil) }, "PING request carries a 1-byte key"},
		{"unknown op", func() ([]byte, error) { return AppendRequest(prefix, Op(0), nil, nil) }, "unknown opcode 0"},
		{"unknown status", func() ([]byte, error) { return AppendResponse(prefix, Status(9), nil) }, "unknown status 9"},
		{"value on NOT_FOUND", func() ([]byte, error) { return AppendResponse(prefix, StatusNotFound, []byte("x")) }, "NOT_FOUND response carries a 1-byte value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.enc()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if string(out) != "keep" {
				t.Fatalf("dst = %q, want it unchanged on error", out)
			}
		})
	}
}

func TestValueLimitErrorMentionsValueAndLimit(t *testing.T) {
	// A 4 GiB slice is too much to allocate in a test; exercise the check directly.
	err := valueTooLong(MaxValueLen+1, MaxValueLen)
	if err.Error() != "frame: value length 4294967296 exceeds limit 4294967295" {
		t.Fatal(err)
	}
}

func TestNames(t *testing.T) {
	if OpSet.String() != "SET" || Op(9).String() != "Op(9)" || StatusNotFound.String() != "NOT_FOUND" || Status(5).String() != "Status(5)" {
		t.Fatal("names")
	}
}
