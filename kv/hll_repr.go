package kv

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// HyperLogLog values in Redis's own representation, so that a value moves
// between Shoal and redis-server (GET/SET, DUMP/RESTORE, RDB, the AOF) and
// counts the same on both. A value is a string: a 16-byte header ("HYLL",
// the encoding, three zero bytes, the cached cardinality as 8 bytes little
// endian whose top bit set means stale), then the registers, 16384 of 6
// bits each:
//
//   - dense: 12288 bytes, register i at bit 6*i, low bits first;
//   - sparse: run-length opcodes, ZERO (00xxxxxx: 1-64 zero registers),
//     XZERO (01xxxxxx xxxxxxxx: 1-16384 zero registers) and VAL
//     (1vvvvvxx: 1-4 registers of value 1-32).
//
// A new value is sparse; it turns dense when a register passes 32 or the
// sparse form would pass hll-sparse-max-bytes. Every step below takes the
// steps Redis takes (hyperloglog.c), opcode for opcode, so both servers
// build the same bytes from the same elements.

const (
	hllP          = 14
	hllQ          = 64 - hllP
	hllRegisters  = 1 << hllP
	hllHeaderSize = 16
	hllDenseSize  = hllHeaderSize + hllRegisters*6/8
	hllDense      = 0
	hllSparse     = 1

	sparseValMaxValue = 32
	sparseValMaxLen   = 4
	sparseZeroMaxLen  = 64
	sparseXZeroMaxLen = 16384

	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errCorruptHLL = "INVALIDOBJ Corrupted HLL object detected"
)

// murmurHash64A is MurmurHash2's 64-bit variant as Redis uses it, reading
// the input little endian on every platform.
func murmurHash64A(data []byte, seed uint64) uint64 {
	const m, r = 0xc6a4a7935bd1e995, 47
	h := seed ^ uint64(len(data))*m
	for ; len(data) >= 8; data = data[8:] {
		k := binary.LittleEndian.Uint64(data)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	if len(data) > 0 {
		for i := len(data) - 1; i >= 0; i-- {
			h ^= uint64(data[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPattern returns the register an element falls in and the length of
// the 0...01 run that starts its hash's remaining bits (1 to 51).
func hllPattern(ele []byte) (index int, count uint8) {
	h := murmurHash64A(ele, 0xadc83b19)
	index = int(h & (hllRegisters - 1))
	h >>= hllP
	h |= 1 << hllQ // the run ends by bit Q
	return index, uint8(bits.TrailingZeros64(h) + 1)
}

// isHLL reports whether v has a HyperLogLog's header, as Redis checks it
// before every HLL command (the sparse opcodes are checked as they are
// read).
func isHLL(v []byte) bool {
	if len(v) < hllHeaderSize || string(v[:4]) != "HYLL" || v[4] > hllSparse {
		return false
	}
	return v[4] != hllDense || len(v) == hllDenseSize
}

// newHLL returns an empty sparse HyperLogLog, its cache valid at 0.
func newHLL() []byte {
	v := make([]byte, hllHeaderSize, hllHeaderSize+64)
	copy(v, "HYLL")
	v[4] = hllSparse
	return append(v, 0x40|byte((hllRegisters-1)>>8), byte((hllRegisters-1)&0xff))
}

func hllInvalidateCache(v []byte) { v[15] |= 0x80 }

// hllCachedCount returns the cached cardinality, if valid.
func hllCachedCount(v []byte) (uint64, bool) {
	return binary.LittleEndian.Uint64(v[8:16]), v[15]&0x80 == 0
}

// denseRegister reads register i of dense registers regs.
func denseRegister(regs []byte, i int) uint8 {
	at, shift := i*6/8, uint(i*6&7)
	x := uint(regs[at]) >> shift
	if at+1 < len(regs) {
		x |= uint(regs[at+1]) << (8 - shift)
	}
	return uint8(x & 63)
}

// setDenseRegister sets register i of dense registers regs to val (< 64).
func setDenseRegister(regs []byte, i int, val uint8) {
	at, shift := i*6/8, uint(i*6&7)
	regs[at] &^= byte(63 << shift)
	regs[at] |= val << shift
	if at+1 < len(regs) {
		regs[at+1] &^= byte(63 >> (8 - shift))
		regs[at+1] |= val >> (8 - shift)
	}
}

// denseRaise sets register i to count if that raises it, and reports
// whether it did.
func denseRaise(regs []byte, i int, count uint8) bool {
	if count <= denseRegister(regs, i) {
		return false
	}
	setDenseRegister(regs, i, count)
	return true
}

// Sparse opcodes.
func sparseIsZero(b byte) bool  { return b&0xc0 == 0 }
func sparseIsXZero(b byte) bool { return b&0xc0 == 0x40 }
func sparseIsVal(b byte) bool   { return b&0x80 != 0 }
func sparseZeroLen(b byte) int  { return int(b&0x3f) + 1 }
func sparseValValue(b byte) int { return int(b>>2&0x1f) + 1 }
func sparseValLen(b byte) int   { return int(b&3) + 1 }
func sparseVal(val, n int) byte { return byte((val-1)<<2|(n-1)) | 0x80 }

// sparseXZeroLen reads the XZERO at v[p:]; a truncated one reads its second
// byte as 0, as Redis reads the NUL after its string.
func sparseXZeroLen(v []byte, p int) int {
	lo := 0
	if p+1 < len(v) {
		lo = int(v[p+1])
	}
	return (int(v[p]&0x3f)<<8 | lo) + 1
}

// appendZeros appends the ZERO or XZERO opcode for n zero registers.
func appendZeros(dst []byte, n int) []byte {
	if n > sparseZeroMaxLen {
		return append(dst, 0x40|byte((n-1)>>8), byte((n-1)&0xff))
	}
	return append(dst, byte(n-1))
}

// sparseOp decodes the opcode at v[p:]: how many registers it covers,
// their value (0 for the zero runs) and its length in bytes.
func sparseOp(v []byte, p int) (run, val, size int) {
	switch b := v[p]; {
	case sparseIsZero(b):
		return sparseZeroLen(b), 0, 1
	case sparseIsXZero(b):
		return sparseXZeroLen(v, p), 0, 2
	default:
		return sparseValLen(b), sparseValValue(b), 1
	}
}

// walkSparse calls visit for each VAL run of sparse HLL v (registers
// first..first+run-1 hold val) and reports whether the opcodes cover
// exactly 16384 registers. A VAL past the end stops it as corrupt:
// redis-server 7.0.15 as shipped refuses it even when the registers before
// it come to exactly 16384.
func walkSparse(v []byte, visit func(first, run int, val uint8)) bool {
	idx := 0
	for p := hllHeaderSize; p < len(v); {
		run, val, size := sparseOp(v, p)
		p += size
		if val != 0 {
			if idx+run > hllRegisters {
				return false
			}
			visit(idx, run, uint8(val))
		}
		idx += run
	}
	return idx == hllRegisters
}

// sparseToDense returns the dense form of sparse HLL v, its header (and
// cache) kept, or false when its opcodes are corrupt.
func sparseToDense(v []byte) ([]byte, bool) {
	d := make([]byte, hllDenseSize)
	copy(d, v[:hllHeaderSize])
	d[4] = hllDense
	regs := d[hllHeaderSize:]
	ok := walkSparse(v, func(first, run int, val uint8) {
		for i := first; i < first+run; i++ {
			setDenseRegister(regs, i, val)
		}
	})
	return d, ok
}

// sparseRaises reports whether adding elements to sparse HLL v would
// change it: false only when each element's register is found, as
// sparseSet finds it, already at least its count.
func sparseRaises(v []byte, elements [][]byte) bool {
	for _, ele := range elements {
		index, count := hllPattern(ele)
		first := 0
		found := false
		for p := hllHeaderSize; p < len(v); {
			run, val, size := sparseOp(v, p)
			if index <= first+run-1 {
				found = val >= int(count)
				break
			}
			p += size
			first += run
		}
		if !found {
			return true
		}
	}
	return false
}

// sparseSet raises register index of sparse HLL v to count, and returns
// the value (grown, or turned dense), with 1 if it changed, 0 if the
// register was already at least count, -1 if v's opcodes are corrupt.
// maxBytes is hll-sparse-max-bytes.
func sparseSet(v []byte, index int, count uint8, maxBytes int64) ([]byte, int) {
	if count > sparseValMaxValue {
		return promoteSet(v, index, count)
	}
	// Find the opcode covering index.
	p, end, prev := hllHeaderSize, len(v), -1
	first, span, size := 0, 0, 0
	for p < end {
		span, _, size = sparseOp(v, p)
		if index <= first+span-1 {
			break
		}
		prev = p
		p += size
		first += span
	}
	if span == 0 || p >= end {
		return v, -1
	}
	run, val, size := sparseOp(v, p)
	isVal := val != 0
	if isVal {
		if val >= int(count) {
			return v, 0
		}
		if run == 1 {
			v[p] = sparseVal(int(count), 1)
			return sparseMerge(v, prev), 1
		}
	}
	if !isVal && size == 1 && run == 1 {
		v[p] = sparseVal(int(count), 1)
		return sparseMerge(v, prev), 1
	}
	// Split the run into up to three opcodes around index.
	var seqBuf [5]byte
	seq := seqBuf[:0]
	last := first + span - 1
	if !isVal {
		if index != first {
			seq = appendZeros(seq, index-first)
		}
		seq = append(seq, sparseVal(int(count), 1))
		if index != last {
			seq = appendZeros(seq, last-index)
		}
	} else {
		if index != first {
			seq = append(seq, sparseVal(val, index-first))
		}
		seq = append(seq, sparseVal(int(count), 1))
		if index != last {
			seq = append(seq, sparseVal(val, last-index))
		}
	}
	delta := len(seq) - size
	if delta > 0 && int64(len(v)+delta) > maxBytes {
		return promoteSet(v, index, count)
	}
	// A truncated XZERO at the end (corrupt) has no second byte to skip.
	v = append(v[:p], append(seq, v[min(p+size, len(v)):]...)...)
	return sparseMerge(v, prev), 1
}

// sparseMerge joins adjacent VAL opcodes of one value, scanning up to five
// opcodes from prev (the opcode before the one just changed, -1 for the
// first), and marks the cache stale.
func sparseMerge(v []byte, prev int) []byte {
	p := prev
	if p < 0 {
		p = hllHeaderSize
	}
	for scan := 5; p < len(v) && scan > 0; scan-- {
		switch b := v[p]; {
		case sparseIsXZero(b):
			p += 2
			continue
		case sparseIsZero(b):
			p++
			continue
		}
		if p+1 < len(v) && sparseIsVal(v[p+1]) {
			v1, v2 := sparseValValue(v[p]), sparseValValue(v[p+1])
			if n := sparseValLen(v[p]) + sparseValLen(v[p+1]); v1 == v2 && n <= sparseValMaxLen {
				v[p+1] = sparseVal(v1, n)
				v = append(v[:p], v[p+1:]...)
				continue
			}
		}
		p++
	}
	hllInvalidateCache(v)
	return v
}

// promoteSet turns sparse v dense and then raises register index to count.
func promoteSet(v []byte, index int, count uint8) ([]byte, int) {
	d, ok := sparseToDense(v)
	if !ok {
		return v, -1
	}
	denseRaise(d[hllHeaderSize:], index, count)
	return d, 1
}

// hllAdd adds ele to HLL v (valid header) and returns the value, which a
// sparse one may have replaced, with 1 if a register changed, 0 if not, -1
// if v is corrupt.
func hllAdd(v, ele []byte, maxBytes int64) ([]byte, int) {
	index, count := hllPattern(ele)
	if v[4] == hllDense {
		if denseRaise(v[hllHeaderSize:], index, count) {
			return v, 1
		}
		return v, 0
	}
	return sparseSet(v, index, count, maxBytes)
}

// hllHistogram counts HLL v's registers by value. invalid reports sparse
// opcodes that do not cover exactly 16384 registers.
func hllHistogram(v []byte) (histo [64]int, invalid bool) {
	if v[4] == hllDense {
		regs := v[hllHeaderSize:]
		for i := range hllRegisters {
			histo[denseRegister(regs, i)]++
		}
		return histo, false
	}
	idx := 0
	for p := hllHeaderSize; p < len(v); {
		run, val, size := sparseOp(v, p)
		p += size
		idx += run
		histo[val] += run
	}
	return histo, idx != hllRegisters
}

// hllMergeInto raises maxRegs to HLL v's registers; false when v's sparse
// opcodes are corrupt.
func hllMergeInto(maxRegs *[hllRegisters]uint8, v []byte) bool {
	if v[4] == hllDense {
		regs := v[hllHeaderSize:]
		for i := range maxRegs {
			maxRegs[i] = max(maxRegs[i], denseRegister(regs, i))
		}
		return true
	}
	return walkSparse(v, func(first, run int, val uint8) {
		for i := first; i < first+run; i++ {
			maxRegs[i] = max(maxRegs[i], val)
		}
	})
}

// hllEstimate is Redis 7's cardinality estimate from a register histogram
// (Otmar Ertl's improved estimator, as hllCount computes it). The explicit
// float64 conversions keep Go from fusing a multiply and add into one
// rounding where C rounds twice.
func hllEstimate(histo *[64]int) uint64 {
	const m = float64(hllRegisters)
	z := m * hllTau((m-float64(histo[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += float64(m * hllSigma(float64(histo[0])/m))
	const alphaInf = 0.721347520444481703680 // 0.5/ln(2)
	return uint64(math.Round(float64(alphaInf*m*m) / z))
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y)
		y += y
		if prev == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if prev == z {
			return z / 3
		}
	}
}
