package kv

import (
	"encoding/binary"
	"math/bits"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Bitmaps: Redis 7.0's bit commands over string values. Bit 0 is the most
// significant bit of byte 0. The commands read and change the value where
// the store keeps it (store.ViewString, store.GrowString); only BITOP
// builds a new value.
//
// Writes are logged as they are: SETBIT and BITFIELD preceded by a DEL
// when they met a missing or expired key (a replay keeps expired keys
// until the load ends, and would change the old string), BITOP preceded by
// a DEL of each of its keys that was missing.
var _ = registerFamily(family{commands: []*command{
	{
		name: "setbit", arity: 4, fn: cmdSetBit, log: logRMW,
		flags: "write denyoom", acl: "@write @bitmap @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets or clears one bit of a string, growing it with zero bytes as needed; returns the old bit.", "2.2.0", "bitmap", "O(1)"},
	},
	{
		name: "getbit", arity: 3, fn: cmdGetBit,
		flags: "readonly fast", acl: "@read @bitmap @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns one bit of a string (0 past its end).", "2.2.0", "bitmap", "O(1)"},
	},
	{
		name: "bitcount", arity: -2, fn: cmdBitCount,
		flags: "readonly", acl: "@read @bitmap @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Counts the set bits of a string, or of a range of its bytes or bits.", "2.6.0", "bitmap", "O(N)"},
	},
	{
		name: "bitpos", arity: -3, fn: cmdBitPos,
		flags: "readonly", acl: "@read @bitmap @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the position of the first set or clear bit of a string, or of a range of it.", "2.8.7", "bitmap", "O(N)"},
	},
	{
		name: "bitop", arity: -4, fn: cmdBitOp, log: logDelAbsent,
		flags: "write denyoom", acl: "@write @bitmap @slow",
		firstKey: 2, lastKey: -1, step: 1, keySpecs: []keySpec{
			{flags: "OW update", index: 2, keyStep: 1},
			{flags: "RO access", index: 3, lastKey: -1, keyStep: 1},
		},
		doc: commandDoc{"Stores the AND, OR, XOR of strings, or the NOT of one, at a key.", "2.6.0", "bitmap", "O(N)"},
	},
	{
		name: "bitfield", arity: -2, fn: cmdBitField, log: logRMW,
		flags: "write denyoom", acl: "@write @bitmap @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{
			notes: "This command allows both access and modification of the key",
			flags: "RW access update variable_flags", index: 1, keyStep: 1,
		}},
		doc: commandDoc{"Reads, sets and increments integers of any width from 1 to 64 bits at any bit offset of a string.", "3.2.0", "bitmap", "O(1) for each subcommand specified"},
	},
	{
		name: "bitfield_ro", arity: -2, fn: cmdBitFieldRO,
		flags: "readonly fast", acl: "@read @bitmap @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Reads integers of any width at any bit offset of a string (BITFIELD with GET only).", "6.0.0", "bitmap", "O(1) for each subcommand specified"},
	},
}})

const (
	errBitOffset = "ERR bit offset is not an integer or out of range"
	errBitValue  = "ERR bit is not an integer or out of range"
	errBitArg    = "ERR The bit argument must be 1 or 0."
	errBitOpNot  = "ERR BITOP NOT must be called with a single source key."
)

// parseBitOffset parses a bit offset as Redis does: a non-negative integer
// whose byte lies below proto-max-bulk-len, or with hash and BITFIELD's
// width, "#n" for the n-th field of that width. The check comes before any
// lookup, so a huge offset allocates nothing.
func (h *Handler) parseBitOffset(arg []byte, hash bool, width int) (uint64, bool) {
	useHash := hash && width > 0 && len(arg) > 0 && arg[0] == '#'
	if useHash {
		arg = arg[1:]
	}
	n, ok := ascii.ParseInt(arg)
	if !ok {
		return 0, false
	}
	if useHash {
		n *= int64(width) // wraps negative as Redis's does, and is refused below
	}
	if n < 0 || n>>3 >= h.opts.Limits.MaxBulkLen {
		return 0, false
	}
	return uint64(n), true
}

func cmdSetBit(h *Handler, cl *client, args [][]byte) {
	offset, ok := h.parseBitOffset(args[2], false, 0)
	if !ok {
		cl.writeError(errBitOffset)
		return
	}
	on, ok := ascii.ParseInt(args[3])
	if !ok || on&^1 != 0 {
		cl.writeError(errBitValue)
		return
	}
	byteAt, mask := offset>>3, byte(0x80)>>(offset&7)
	var old byte
	created, grown, err := cl.db().GrowString(args[1], int(byteAt)+1, func(v []byte) {
		old = v[byteAt] & mask
		if on == 1 {
			v[byteAt] |= mask
		} else {
			v[byteAt] &^= mask
		}
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(boolInt(old != 0))
	if created || grown || (old != 0) != (on == 1) {
		cl.notifyNew(created, args[1])
		cl.notify(evString, "setbit", args[1])
	}
}

func cmdGetBit(h *Handler, cl *client, args [][]byte) {
	offset, ok := h.parseBitOffset(args[2], false, 0)
	if !ok {
		cl.writeError(errBitOffset)
		return
	}
	var bit bool
	_, err := cl.db().ViewString(args[1], func(v []byte) {
		if at := offset >> 3; at < uint64(len(v)) {
			bit = v[at]&(0x80>>(offset&7)) != 0
		}
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(boolInt(bit))
}

func cmdBitCount(h *Handler, cl *client, args [][]byte) {
	var n int64
	var errText string
	_, err := cl.db().ViewString(args[1], func(v []byte) { n, errText = bitCountArgs(v, args[2:]) })
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case errText != "":
		cl.writeError(errText)
	default:
		cl.writeInt(n) // 0 for a missing key, whatever the arguments
	}
}

// bitCountArgs is BITCOUNT on value v with the arguments after the key.
func bitCountArgs(v []byte, rest [][]byte) (int64, string) {
	switch len(rest) {
	case 0:
		return popcount(v), ""
	case 2, 3:
	default:
		return 0, errSyntax
	}
	start, ok1 := ascii.ParseInt(rest[0])
	end, ok2 := ascii.ParseInt(rest[1])
	if !ok1 || !ok2 {
		return 0, errNotInteger
	}
	if start < 0 && end < 0 && start > end {
		return 0, "" // before the unit is even looked at, as Redis does
	}
	isBit, ok := bitUnit(rest[2:])
	if !ok {
		return 0, errSyntax
	}
	r := clampBitRange(int64(len(v)), start, end, isBit)
	if r.start > r.end {
		return 0, ""
	}
	n := popcount(v[r.start : r.end+1])
	n -= int64(bits.OnesCount8(v[r.start]&r.firstMask) + bits.OnesCount8(v[r.end]&r.lastMask))
	return n, ""
}

// bitUnit parses the optional BYTE|BIT of BITCOUNT and BITPOS.
func bitUnit(rest [][]byte) (isBit, ok bool) {
	if len(rest) == 0 {
		return false, true
	}
	switch {
	case ascii.EqualFold(rest[0], "bit"):
		return true, true
	case ascii.EqualFold(rest[0], "byte"):
		return false, true
	}
	return false, false
}

// bitRange is a BITCOUNT or BITPOS range in bytes: [start, end], and in
// BIT mode the masks of the bits of its first and last bytes that lie
// outside the range.
type bitRange struct {
	start, end          int64
	firstMask, lastMask byte
}

// clampBitRange turns start and end (bytes, or bits when isBit; negative
// counting from the end) into a byte range of a string of n bytes, clamped
// as Redis clamps it. start > end means empty.
func clampBitRange(n, start, end int64, isBit bool) bitRange {
	total := n
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	r := bitRange{start: start, end: end}
	if isBit && start <= end {
		r.firstMask = ^byte(0xff >> (start & 7))
		r.lastMask = byte(1<<(7-(end&7))) - 1
		r.start, r.end = start>>3, end>>3
	}
	return r
}

func cmdBitPos(h *Handler, cl *client, args [][]byte) {
	bit, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	if bit != 0 && bit != 1 {
		cl.writeError(errBitArg)
		return
	}
	var pos int64
	var errText string
	found, err := cl.db().ViewString(args[1], func(v []byte) { pos, errText = bitPosArgs(v, byte(bit), args[3:]) })
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case !found: // a missing key is zeros without end, whatever the range
		cl.writeInt(-bit)
	case errText != "":
		cl.writeError(errText)
	default:
		cl.writeInt(pos)
	}
}

// bitPosArgs is BITPOS for bit on value v with the arguments after the bit.
func bitPosArgs(v []byte, bit byte, rest [][]byte) (int64, string) {
	if len(rest) > 3 {
		return 0, errSyntax
	}
	r := bitRange{start: 0, end: int64(len(v)) - 1}
	endGiven := len(rest) >= 2
	if len(rest) > 0 {
		start, ok := ascii.ParseInt(rest[0])
		if !ok {
			return 0, errNotInteger
		}
		isBit, ok := bitUnit(rest[min(len(rest), 2):])
		if !ok {
			return 0, errSyntax
		}
		end := int64(len(v)) - 1
		if isBit {
			end = int64(len(v))<<3 + 7
		}
		if endGiven {
			if end, ok = ascii.ParseInt(rest[1]); !ok {
				return 0, errNotInteger
			}
		}
		r = clampBitRange(int64(len(v)), start, end, isBit)
	}
	if r.start > r.end {
		return -1, ""
	}
	pos, start, bytes := bitPosIn(v, bit, r)
	// With an explicit end, the bits right of the range are not zeros to
	// find: a clear bit found only there is none.
	if endGiven && bit == 0 && pos == bytes<<3 {
		return -1, ""
	}
	if pos != -1 {
		pos += start << 3
	}
	return pos, ""
}

// bitPosIn searches range r of v for bit, the masked edge bytes apart, in
// the steps Redis takes, and returns what Redis's last step found: pos
// relative to byte start of the span of bytes it searched.
func bitPosIn(v []byte, bit byte, r bitRange) (pos, start, bytes int64) {
	start, bytes = r.start, r.end-r.start+1
	edge := func(b, mask byte) byte {
		if bit == 1 {
			return b &^ mask
		}
		return b | mask
	}
	if r.firstMask != 0 {
		b := edge(v[start], r.firstMask)
		if r.lastMask != 0 && bytes == 1 {
			b = edge(b, r.lastMask)
		}
		pos = firstBit([]byte{b}, bit)
		if bytes == 1 || (pos != -1 && pos != 8) {
			return pos, start, bytes
		}
		start, bytes = start+1, bytes-1
	}
	inner := bytes
	if r.lastMask != 0 {
		inner--
	}
	if inner > 0 {
		pos = firstBit(v[start:start+inner], bit)
		if bytes == inner || (pos != -1 && pos != inner<<3) {
			return pos, start, bytes
		}
		start, bytes = start+inner, bytes-inner
	}
	return firstBit([]byte{edge(v[r.end], r.lastMask)}, bit), start, bytes
}

// popcount counts the set bits of p.
func popcount(p []byte) int64 {
	n := 0
	for len(p) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	for _, b := range p {
		n += bits.OnesCount8(b)
	}
	return int64(n)
}

// firstBit returns the position of the first bit of p equal to bit; when
// there is none, -1 for a set bit and len(p)*8 for a clear one (the string
// is taken as zero-padded on the right).
func firstBit(p []byte, bit byte) int64 {
	skipByte, skipWord := byte(0), uint64(0)
	if bit == 0 {
		skipByte, skipWord = 0xff, ^uint64(0)
	}
	i := 0
	for i+8 <= len(p) && binary.LittleEndian.Uint64(p[i:]) == skipWord {
		i += 8
	}
	for ; i < len(p); i++ {
		if b := p[i]; b != skipByte {
			if bit == 0 {
				b = ^b
			}
			return int64(i)<<3 + int64(bits.LeadingZeros8(b))
		}
	}
	if bit == 1 {
		return -1
	}
	return int64(len(p)) << 3
}

// bitOpKind is BITOP's operation.
type bitOpKind uint8

const (
	bitAnd bitOpKind = iota
	bitOr
	bitXor
	bitNot
)

func cmdBitOp(h *Handler, cl *client, args [][]byte) {
	var op bitOpKind
	switch name := args[1]; {
	case ascii.EqualFold(name, "and"):
		op = bitAnd
	case ascii.EqualFold(name, "or"):
		op = bitOr
	case ascii.EqualFold(name, "xor"):
		op = bitXor
	case ascii.EqualFold(name, "not"):
		op = bitNot
	default:
		cl.writeError(errSyntax)
		return
	}
	if op == bitNot && len(args) != 4 {
		cl.writeError(errBitOpNot)
		return
	}
	res, err := bitOp(cl.db(), args[3:], op)
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	dest := args[2]
	if len(res) == 0 {
		if cl.db().Del(args[2:3]) > 0 {
			cl.notify(evGeneric, "del", dest)
		}
		cl.writeInt(0)
		return
	}
	created := cl.keyIsNew(dest)
	if _, _, _, err := cl.db().Set(nil, dest, res, store.SetOptions{}); err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(len(res)))
	cl.notifyNew(created, dest)
	cl.notify(evString, "set", dest)
}

// bitOp folds the strings at keys with op into a new value as long as the
// longest, a missing key or the bytes past a shorter string's end counting
// as zeros. A key of another kind is ErrWrongType.
func bitOp(db *store.Store, keys [][]byte, op bitOpKind) ([]byte, error) {
	var res []byte
	for i, key := range keys {
		found, err := db.ViewString(key, func(v []byte) {
			if i == 0 {
				res = append(res, v...)
				return
			}
			if len(v) > len(res) {
				res = append(res, make([]byte, len(v)-len(res))...)
			}
			switch op {
			case bitAnd:
				for j, b := range v {
					res[j] &= b
				}
				clear(res[len(v):])
			case bitOr:
				for j, b := range v {
					res[j] |= b
				}
			case bitXor:
				for j, b := range v {
					res[j] ^= b
				}
			}
		})
		if err != nil {
			return nil, err
		}
		if !found && op == bitAnd {
			clear(res)
		}
	}
	if op == bitNot {
		for i := range res {
			res[i] = ^res[i]
		}
	}
	return res, nil
}
