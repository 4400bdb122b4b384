package kv

import (
	"bytes"
	"math"

	"github.com/shoalkv/shoal/internal/ascii"
)

// BITFIELD and BITFIELD_RO: integers of 1 to 64 bits (unsigned: 63) at any
// bit offset of a string, most significant bit first, as Redis lays them
// out. The subcommands are parsed and checked in full before the key is
// looked up, so a bad one changes nothing.

const (
	errBitFieldType     = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errBitFieldOverflow = "ERR Invalid OVERFLOW type specified"
	errBitFieldRO       = "ERR BITFIELD_RO only supports the GET subcommand"
)

type fieldOpKind uint8

const (
	fieldGet fieldOpKind = iota
	fieldSet
	fieldIncrBy
)

// overflowMode is BITFIELD's OVERFLOW: what a SET or INCRBY does with a
// result the field cannot hold.
type overflowMode uint8

const (
	overflowWrap overflowMode = iota // keep the low bits (two's complement for signed)
	overflowSat                      // clamp to the field's minimum or maximum
	overflowFail                     // write nothing and reply null
)

// fieldOp is one parsed GET, SET or INCRBY.
type fieldOp struct {
	offset   uint64
	value    int64 // SET's value or INCRBY's increment
	kind     fieldOpKind
	overflow overflowMode
	width    uint8
	signed   bool
}

func cmdBitField(h *Handler, cl *client, args [][]byte)   { h.bitField(cl, args, false) }
func cmdBitFieldRO(h *Handler, cl *client, args [][]byte) { h.bitField(cl, args, true) }

func (h *Handler) bitField(cl *client, args [][]byte, readOnly bool) {
	var stack [8]fieldOp
	ops, highest, errText := h.parseBitField(args[2:], stack[:0])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	if highest < 0 { // GETs only
		found, err := cl.db().ViewString(args[1], func(v []byte) { runFieldOps(cl, v, ops) })
		switch {
		case err != nil:
			cl.writeError(err.Error())
		case !found: // a missing key reads as zeros
			runFieldOps(cl, nil, ops)
		}
		return
	}
	if readOnly {
		cl.writeError(errBitFieldRO)
		return
	}
	var wrote, changed int
	created, grown, err := cl.db().GrowString(args[1], int(highest>>3)+1, func(v []byte) {
		wrote, changed = runFieldOps(cl, v, ops)
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.notifyNew(created, args[1])
	// Redis counts a write as a change when it changed the field or the
	// string was created or grown for it; an OVERFLOW FAIL writes nothing.
	if changed > 0 || (wrote > 0 && (created || grown)) {
		cl.notify(evString, "setbit", args[1])
	}
}

// parseBitField parses BITFIELD's subcommands onto ops, and returns the
// last bit a SET or INCRBY reaches (-1 when there are only GETs), or
// Redis's error for the first bad subcommand.
func (h *Handler) parseBitField(args [][]byte, ops []fieldOp) ([]fieldOp, int64, string) {
	highest := int64(-1)
	overflow := overflowWrap
	for j := 0; j < len(args); j++ {
		rest := len(args) - j - 1
		var op fieldOp
		switch sub := args[j]; {
		case ascii.EqualFold(sub, "get") && rest >= 2:
			op.kind = fieldGet
		case ascii.EqualFold(sub, "set") && rest >= 3:
			op.kind = fieldSet
		case ascii.EqualFold(sub, "incrby") && rest >= 3:
			op.kind = fieldIncrBy
		case ascii.EqualFold(sub, "overflow") && rest >= 1:
			j++
			switch mode := args[j]; {
			case ascii.EqualFold(mode, "wrap"):
				overflow = overflowWrap
			case ascii.EqualFold(mode, "sat"):
				overflow = overflowSat
			case ascii.EqualFold(mode, "fail"):
				overflow = overflowFail
			default:
				return nil, 0, errBitFieldOverflow
			}
			continue
		default:
			return nil, 0, errSyntax
		}
		signed, width, ok := parseFieldType(args[j+1])
		if !ok {
			return nil, 0, errBitFieldType
		}
		offset, ok := h.parseBitOffset(args[j+2], true, int(width))
		if !ok {
			return nil, 0, errBitOffset
		}
		op.offset, op.width, op.signed, op.overflow = offset, width, signed, overflow
		if op.kind != fieldGet {
			highest = max(highest, int64(offset)+int64(width)-1)
			if op.value, ok = ascii.ParseInt(args[j+3]); !ok {
				return nil, 0, errNotInteger
			}
			j++
		}
		j += 2
		ops = append(ops, op)
	}
	return ops, highest, ""
}

// parseFieldType parses i1..i64 or u1..u63. Redis reads the width as a C
// string, so it ends at a NUL byte.
func parseFieldType(arg []byte) (signed bool, width uint8, ok bool) {
	if len(arg) == 0 || (arg[0] != 'i' && arg[0] != 'u') {
		return false, 0, false
	}
	signed = arg[0] == 'i'
	digits := arg[1:]
	if nul := bytes.IndexByte(digits, 0); nul >= 0 {
		digits = digits[:nul]
	}
	n, ok := ascii.ParseInt(digits)
	if !ok || n < 1 || n > 64 || (!signed && n > 63) {
		return false, 0, false
	}
	return signed, uint8(n), true
}

// runFieldOps runs ops on v and writes their replies: an array with one
// integer per op, or null for a SET or INCRBY that OVERFLOW FAIL stopped.
// A SET or INCRBY finds v long enough (the caller grew it); a GET reads
// zeros past its end. It returns how many ops wrote, and how many of those
// changed their field.
func runFieldOps(cl *client, v []byte, ops []fieldOp) (wrote, changed int) {
	cl.writeArray(len(ops))
	for _, op := range ops {
		old := getField(v, op.offset, op.width)
		if op.kind == fieldGet {
			if op.signed {
				cl.writeInt(signExtend(old, op.width))
			} else {
				cl.writeInt(int64(old))
			}
			continue
		}
		next, reply, failed := fieldResult(op, old)
		if failed {
			cl.writeNull()
			continue
		}
		cl.writeInt(reply)
		setField(v, op.offset, op.width, next)
		wrote++
		if next&widthMask(op.width) != old {
			changed++
		}
	}
	return wrote, changed
}

// fieldResult computes a SET or INCRBY on a field holding old (raw bits):
// the new raw value, the reply (SET: the old value, INCRBY: the new one),
// and whether OVERFLOW FAIL refused it.
func fieldResult(op fieldOp, old uint64) (next uint64, reply int64, failed bool) {
	if op.signed {
		oldVal := signExtend(old, op.width)
		var val, limit int64
		var over bool
		if op.kind == fieldIncrBy {
			over, limit = signedOverflow(oldVal, op.value, op.width, op.overflow)
			val = oldVal + op.value
		} else {
			over, limit = signedOverflow(op.value, 0, op.width, op.overflow)
			val = op.value
		}
		if over {
			val = limit
		}
		reply = val
		if op.kind == fieldSet {
			reply = oldVal
		}
		return uint64(val) & widthMask(op.width), reply, over && op.overflow == overflowFail
	}
	var val, limit uint64
	var over bool
	if op.kind == fieldIncrBy {
		over, limit = unsignedOverflow(old, op.value, op.width, op.overflow)
		val = old + uint64(op.value)
	} else {
		over, limit = unsignedOverflow(uint64(op.value), 0, op.width, op.overflow)
		val = uint64(op.value)
	}
	if over {
		val = limit
	}
	reply = int64(val)
	if op.kind == fieldSet {
		reply = int64(old)
	}
	return val & widthMask(op.width), reply, over && op.overflow == overflowFail
}

// unsignedOverflow reports whether value+incr leaves a u<width> field, and
// then the value WRAP or SAT gives instead (FAIL's is unused).
func unsignedOverflow(value uint64, incr int64, width uint8, mode overflowMode) (bool, uint64) {
	limit := widthMask(width)
	maxIncr := int64(limit - value)
	minIncr := -int64(value)
	switch {
	case value > limit || (incr > 0 && incr > maxIncr):
		if mode == overflowSat {
			return true, limit
		}
	case incr < 0 && incr < minIncr:
		if mode == overflowSat {
			return true, 0
		}
	default:
		return false, 0
	}
	return true, (value + uint64(incr)) & limit
}

// signedOverflow is unsignedOverflow for an i<width> field; WRAP keeps the
// low width bits as a two's complement number.
func signedOverflow(value, incr int64, width uint8, mode overflowMode) (bool, int64) {
	hi := int64(math.MaxInt64)
	if width < 64 {
		hi = 1<<(width-1) - 1
	}
	lo := -hi - 1
	maxIncr := int64(uint64(hi) - uint64(value))
	minIncr := lo - value
	switch {
	case value > hi || (width != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr):
		if mode == overflowSat {
			return true, hi
		}
	case value < lo || (width != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr):
		if mode == overflowSat {
			return true, lo
		}
	default:
		return false, 0
	}
	return true, signExtend(uint64(value)+uint64(incr), width)
}

// widthMask has the low width bits set.
func widthMask(width uint8) uint64 {
	if width >= 64 {
		return math.MaxUint64
	}
	return 1<<width - 1
}

// signExtend reads the low width bits of raw as a two's complement number.
func signExtend(raw uint64, width uint8) int64 {
	shift := 64 - width
	return int64(raw<<shift) >> shift
}

// getField reads the width bits at bit offset of v, most significant
// first; bits past the end of v read as zeros.
func getField(v []byte, offset uint64, width uint8) uint64 {
	var x uint64
	for i := uint64(0); i < uint64(width); i++ {
		bit := offset + i
		x <<= 1
		if at := bit >> 3; at < uint64(len(v)) {
			x |= uint64(v[at]>>(7-bit&7)) & 1
		}
	}
	return x
}

// setField writes the low width bits of x at bit offset of v, which is
// long enough.
func setField(v []byte, offset uint64, width uint8, x uint64) {
	for i := uint64(0); i < uint64(width); i++ {
		bit := offset + i
		mask := byte(0x80) >> (bit & 7)
		if x>>(uint64(width)-1-i)&1 != 0 {
			v[bit>>3] |= mask
		} else {
			v[bit>>3] &^= mask
		}
	}
}
