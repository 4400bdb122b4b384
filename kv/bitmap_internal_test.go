package kv

import (
	"math/big"
	"strconv"
	"testing"
)

// The bit commands' arithmetic against a model that works bit by bit and
// with unbounded integers, so that it shares none of the word tricks,
// masks and overflow tests of the real code.

// modelBit is bit i of v, zero past its end.
func modelBit(v []byte, i int64) byte {
	if i < 0 || i>>3 >= int64(len(v)) {
		return 0
	}
	return v[i>>3] >> (7 - i&7) & 1
}

// modelBitRange is a BITCOUNT/BITPOS range as bits [lo, hi], with Redis's
// clamping, done in bits.
func modelBitRange(n, start, end int64, isBit bool) (lo, hi int64) {
	total := n
	if !isBit {
		total = n // clamp in bytes first, then widen
	} else {
		total = n * 8
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, total-1)
	if !isBit {
		return start * 8, end*8 + 7
	}
	return start, end
}

func FuzzBitCountAndBitPos(f *testing.F) {
	f.Add([]byte("foobar"), int64(1), int64(-2), true, uint8(3), false)
	f.Add([]byte("\xff\xf0\x00"), int64(7), int64(15), true, uint8(7), true)
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"), int64(0), int64(-1), false, uint8(2), true)
	f.Add([]byte{}, int64(0), int64(0), false, uint8(0), false)
	f.Fuzz(func(t *testing.T, v []byte, start, end int64, isBit bool, form uint8, bit bool) {
		if len(v) > 1<<16 {
			return
		}
		unit := [][]byte{[]byte("BYTE")}
		if isBit {
			unit = [][]byte{[]byte("bit")}
		}
		num := func(n int64) []byte { return []byte(strconv.FormatInt(n, 10)) }
		var args [][]byte // the arguments after the key (BITCOUNT) or the bit (BITPOS)
		switch form % 4 {
		case 1:
			args = [][]byte{num(start)}
		case 2:
			args = [][]byte{num(start), num(end)}
		case 3:
			args = append([][]byte{num(start), num(end)}, unit...)
		}
		n := int64(len(v))
		useBit := form%4 == 3 && isBit

		// BITCOUNT
		wantCount, wantErr := int64(0), ""
		switch {
		case form%4 == 1:
			wantErr = errSyntax
		case form%4 == 0:
			for i := range n * 8 {
				wantCount += int64(modelBit(v, i))
			}
		case start < 0 && end < 0 && start > end:
		default:
			lo, hi := modelBitRange(n, start, end, useBit)
			for i := lo; i <= hi; i++ {
				wantCount += int64(modelBit(v, i))
			}
		}
		gotCount, gotErr := bitCountArgs(v, args)
		if gotCount != wantCount || gotErr != wantErr {
			t.Fatalf("BITCOUNT %q %q = %d %q, model %d %q", v, args, gotCount, gotErr, wantCount, wantErr)
		}

		// BITPOS
		b := byte(0)
		if bit {
			b = 1
		}
		lo, hi := int64(0), n*8-1
		if form%4 != 0 {
			e := end
			if form%4 == 1 {
				e = -1
				if useBit {
					e = -1
				}
			}
			lo, hi = modelBitRange(n, start, e, useBit)
		}
		want := int64(-1)
		if lo <= hi {
			for i := lo; i <= hi; i++ {
				if modelBit(v, i) == b {
					want = i
					break
				}
			}
			if want == -1 && b == 0 && form%4 <= 1 {
				want = (hi>>3 + 1) * 8 // no end given: the zeros right of the string count
			}
		}
		got, errText := bitPosArgs(v, b, args)
		if got != want || errText != "" {
			t.Fatalf("BITPOS %q %d %q = %d %q, model %d", v, b, args, got, errText, want)
		}
	})
}

// modelField computes a BITFIELD SET or INCRBY with unbounded integers.
func modelField(op fieldOp, old uint64) (next uint64, reply int64, failed bool) {
	w := uint(op.width)
	oldVal := new(big.Int).SetUint64(old)
	lo, hi := big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), w), big.NewInt(1))
	if op.signed {
		if old>>(w-1)&1 == 1 {
			oldVal.Sub(oldVal, new(big.Int).Lsh(big.NewInt(1), w))
		}
		hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), w-1), big.NewInt(1))
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), w-1))
	}
	var val *big.Int
	switch {
	case op.kind == fieldIncrBy:
		val = new(big.Int).Add(oldVal, big.NewInt(op.value))
	case op.signed:
		val = big.NewInt(op.value)
	default: // Redis takes an unsigned SET's value as a uint64
		val = new(big.Int).SetUint64(uint64(op.value))
	}
	over := val.Cmp(hi) > 0 || val.Cmp(lo) < 0
	if over {
		switch op.overflow {
		case overflowFail:
			return 0, 0, true
		case overflowSat:
			if val.Cmp(hi) > 0 {
				val = hi
			} else {
				val = lo
			}
		case overflowWrap:
			mod := new(big.Int).Lsh(big.NewInt(1), w)
			val = new(big.Int).Mod(val, mod)
			if op.signed && val.Cmp(hi) > 0 {
				val.Sub(val, mod)
			}
		}
	}
	raw := new(big.Int).Set(val)
	if raw.Sign() < 0 {
		raw.Add(raw, new(big.Int).Lsh(big.NewInt(1), w))
	}
	reply = val.Int64()
	if op.kind == fieldSet {
		reply = oldVal.Int64()
	}
	return raw.Uint64(), reply, false
}

func FuzzBitFieldArithmetic(f *testing.F) {
	f.Add(uint64(0), int64(1), uint8(8), true, true, uint8(0))
	f.Add(uint64(1)<<63, int64(-1), uint8(64), true, true, uint8(1))
	f.Add(uint64(255), int64(1), uint8(8), false, true, uint8(2))
	f.Add(uint64(3), int64(-9223372036854775808), uint8(63), false, false, uint8(1))
	f.Fuzz(func(t *testing.T, old uint64, value int64, width uint8, signed, incr bool, mode uint8) {
		width = width%64 + 1
		if !signed && width == 64 {
			width = 63
		}
		old &= widthMask(width)
		op := fieldOp{value: value, width: width, signed: signed, overflow: overflowMode(mode % 3), kind: fieldSet}
		if incr {
			op.kind = fieldIncrBy
		}
		next, reply, failed := fieldResult(op, old)
		wantNext, wantReply, wantFailed := modelField(op, old)
		if failed != wantFailed || (!failed && (next != wantNext || reply != wantReply)) {
			t.Fatalf("%+v on %#x: got %#x %d %v, model %#x %d %v", op, old, next, reply, failed, wantNext, wantReply, wantFailed)
		}
		// The field round-trips through a string at an odd offset.
		v := make([]byte, 10)
		for i := range v {
			v[i] = 0xa5
		}
		setField(v, 5, width, next)
		if got := getField(v, 5, width); got != next {
			t.Fatalf("setField/getField u%d at 5: wrote %#x, read %#x", width, next, got)
		}
		if width < 59 && getField(v, 5+uint64(width), 5) != getField([]byte{0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5}, 5+uint64(width), 5) {
			t.Fatalf("setField u%d at 5 changed the bits after the field", width)
		}
	})
}
