package resp

import (
	"math"
	"slices"
	"testing"
)

func TestWritersEncode(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"simple", AppendSimpleString(nil, "OK"), "+OK\r\n"},
		{"simple CRLF sanitised", AppendSimpleString(nil, "a\r\nb"), "+a  b\r\n"},
		{"error", AppendError(nil, "ERR syntax error"), "-ERR syntax error\r\n"},
		{"error LF sanitised", AppendError(nil, "ERR a\nb"), "-ERR a b\r\n"},
		{"int", AppendInt(nil, 42), ":42\r\n"},
		{"int negative", AppendInt(nil, -7), ":-7\r\n"},
		{"int min", AppendInt(nil, math.MinInt64), ":-9223372036854775808\r\n"},
		{"bulk", AppendBulk(nil, []byte("a\r\nb")), "$4\r\na\r\nb\r\n"},
		{"bulk nil is empty", AppendBulk(nil, nil), "$0\r\n\r\n"},
		{"bulk string", AppendBulkString(nil, "hello"), "$5\r\nhello\r\n"},
		{"bulk int", AppendBulkInt(nil, -12), "$3\r\n-12\r\n"},
		{"null bulk", AppendNullBulk(nil), "$-1\r\n"},
		{"null array", AppendNullArray(nil), "*-1\r\n"},
		{"null", AppendNull(nil), "_\r\n"},
		{"array", AppendArrayHeader(nil, 3), "*3\r\n"},
		{"array big", AppendArrayHeader(nil, 1234), "*1234\r\n"},
		{"array empty", AppendArrayHeader(nil, 0), "*0\r\n"},
		{"map", AppendMapHeader(nil, 2), "%2\r\n"},
		{"set", AppendSetHeader(nil, 10), "~10\r\n"},
		{"push", AppendPushHeader(nil, 3), ">3\r\n"},
		{"attribute", AppendAttributeHeader(nil, 1), "|1\r\n"},
		{"double", AppendDouble(nil, 1.5), ",1.5\r\n"},
		{"double integral", AppendDouble(nil, 3), ",3\r\n"},
		{"double 17 digits", AppendDouble(nil, 0.1), ",0.10000000000000001\r\n"},
		{"double exponent", AppendDouble(nil, 1e17), ",1e+17\r\n"},
		{"double small exponent", AppendDouble(nil, 1e-5), ",1.0000000000000001e-05\r\n"},
		{"double negative zero", AppendDouble(nil, math.Copysign(0, -1)), ",-0\r\n"},
		{"double inf", AppendDouble(nil, math.Inf(1)), ",inf\r\n"},
		{"double -inf", AppendDouble(nil, math.Inf(-1)), ",-inf\r\n"},
		{"double nan", AppendDouble(nil, math.NaN()), ",nan\r\n"},
		{"float bulk", AppendFloatBulk(nil, 2.5), "$3\r\n2.5\r\n"},
		{"float bulk inf", AppendFloatBulk(nil, math.Inf(-1)), "$4\r\n-inf\r\n"},
		{"bool true", AppendBool(nil, true), "#t\r\n"},
		{"bool false", AppendBool(nil, false), "#f\r\n"},
		{"big number", AppendBigNumber(nil, "3492890328409238509324850943850943825024385"), "(3492890328409238509324850943850943825024385\r\n"},
		{"verbatim", AppendVerbatim(nil, "txt", []byte("Some string")), "=15\r\ntxt:Some string\r\n"},
		{"verbatim short format padded", AppendVerbatim(nil, "md", []byte("x")), "=5\r\nmd :x\r\n"},
		{"verbatim long format cut", AppendVerbatim(nil, "text", nil), "=4\r\ntex:\r\n"},
		{"blob error", AppendBlobError(nil, "SYNTAX a\r\nb"), "!11\r\nSYNTAX a\r\nb\r\n"},
		{"command", AppendCommand(nil, "SET", "k", ""), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"},
		{"command bytes", AppendCommandBytes(nil, []byte("GET"), []byte("k")), "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"},
		{"appends", AppendInt(AppendSimpleString([]byte("x"), "OK"), 1), "x+OK\r\n:1\r\n"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestDoubleMatchesCPrintf checks %.17g on values whose formatting differs
// between naive implementations: exponent thresholds, rounding, subnormals.
func TestDoubleMatchesCPrintf(t *testing.T) {
	// Expected texts are glibc's printf("%.17g") output.
	tests := []struct {
		f    float64
		want string
	}{
		{100000, "100000"},
		{1e16, "10000000000000000"},
		{123456789012345678, "1.2345678901234568e+17"},
		{0.0001, "0.0001"},
		{1e300, "1.0000000000000001e+300"},
		{5e-324, "4.9406564584124654e-324"},
		{1.0 / 3, "0.33333333333333331"},
		{-2.5e-10, "-2.5000000000000002e-10"},
	}
	for _, tt := range tests {
		if got := string(AppendDouble(nil, tt.f)); got != ","+tt.want+"\r\n" {
			t.Errorf("AppendDouble(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestWritersRoundTripThroughParser(t *testing.T) {
	cmds := [][]string{
		{"PING"},
		{"SET", "key", "value with spaces", ""},
		{"ECHO", "\r\n\x00\xff"},
		{"MSET", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6"},
	}
	var stream []byte
	for _, c := range cmds {
		stream = AppendCommand(stream, c...)
	}
	var p Parser
	for i, c := range cmds {
		args, n, err := p.Parse(stream)
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		if !slices.Equal(strs(args), c) {
			t.Errorf("command %d = %q, want %q", i, strs(args), c)
		}
		stream = stream[n:]
	}
	if len(stream) != 0 {
		t.Errorf("%d bytes left", len(stream))
	}
}

func TestWritersDoNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 4096)
	v := []byte("value")
	allocs := testing.AllocsPerRun(100, func() {
		b := buf[:0]
		b = AppendSimpleString(b, "OK")
		b = AppendError(b, "ERR x")
		b = AppendInt(b, 12345)
		b = AppendBulk(b, v)
		b = AppendBulkString(b, "s")
		b = AppendBulkInt(b, 99)
		b = AppendNullBulk(b)
		b = AppendNullArray(b)
		b = AppendNull(b)
		b = AppendArrayHeader(b, 100)
		b = AppendMapHeader(b, 1)
		b = AppendSetHeader(b, 1)
		b = AppendPushHeader(b, 1)
		b = AppendDouble(b, 3.14159)
		b = AppendFloatBulk(b, 2.71828)
		b = AppendBool(b, true)
		b = AppendBigNumber(b, "123")
		b = AppendVerbatim(b, "txt", v)
		b = AppendBlobError(b, "ERR x")
		b = AppendCommand(b, "GET", "key")
		_ = b
	})
	if allocs != 0 {
		t.Errorf("writers allocate %.1f times", allocs)
	}
}
