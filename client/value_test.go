package client

import (
	"math"
	"testing"

	"github.com/shoalkv/shoal/proto/resp"
)

func TestAppendArgsEncodesEveryNumberType(t *testing.T) {
	for _, tc := range []struct {
		arg  any
		want string
	}{
		{int(-7), "-7"}, {int8(math.MinInt8), "-128"}, {int16(math.MaxInt16), "32767"},
		{int32(math.MinInt32), "-2147483648"}, {int64(math.MaxInt64), "9223372036854775807"},
		{uint(7), "7"}, {uint8(math.MaxUint8), "255"}, {uint16(math.MaxUint16), "65535"},
		{uint32(math.MaxUint32), "4294967295"}, {uint64(math.MaxUint64), "18446744073709551615"},
		{float32(1.5), "1.5"}, {float64(-0.25), "-0.25"}, {true, "1"}, {false, "0"},
		{"s", "s"}, {[]byte("b"), "b"},
	} {
		got, err := appendArgs(nil, []any{"SET", "k", tc.arg})
		if want := resp.AppendCommand(nil, "SET", "k", tc.want); err != nil || string(got) != string(want) {
			t.Errorf("%T %v: %q, %v; want %q", tc.arg, tc.arg, got, err, want)
		}
	}
}

func TestAppendArgsOfIntegersDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	args := []any{"SETRANGE", int64(1) << 40, uint16(9), -3}
	if n := testing.AllocsPerRun(1000, func() { _, _ = appendArgs(buf[:0], args) }); n != 0 {
		t.Errorf("%v allocations per call, want 0", n)
	}
}
