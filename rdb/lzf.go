package rdb

import (
	"errors"
	"slices"
)

// LZF, the compression Redis applies to strings in RDB files. The format
// is a sequence of runs, each starting with a control byte c:
//
//   - c < 32: a literal run; the next c+1 bytes are copied to the output.
//   - else a back reference: length n = c>>5 (when 7, the next byte is
//     added), distance d = (c&31)<<8 + the byte after; n+2 bytes are
//     copied from d+1 bytes back in the output, the copy may overlap
//     what it produces.
//
// The compressor is liblzf 3.6's algorithm as redis-server builds it (a
// 2^16-slot hash table, "very fast" mode), so Shoal's compressed strings,
// and so its DUMP payloads and RDB files, are redis-server's byte for byte.

const (
	lzfMaxLiteral = 1 << 5          // a literal run holds 1..32 bytes
	lzfMaxOffset  = 1 << 13         // back references reach 8 KiB back
	lzfMaxRef     = 1<<8 + 1<<3     // 264: the longest match one reference copies
	lzfHashLog    = 16              // slots in the match finder's table, as Redis's build
	lzfMaxRatio   = lzfMaxRef/3 + 1 // output bytes per input byte at most (3-byte references of 264)
)

// lzfCompressor holds the match finder's table between calls. Entries are
// positions plus base; an entry below base is from an earlier input, so the
// table needs no clearing between inputs (liblzf starts each input with
// none that can match either).
type lzfCompressor struct {
	table [1 << lzfHashLog]uint32
	base  uint32
	out   []byte
}

func lzfIndex(h uint32) uint32 {
	return ((h >> (3*8 - lzfHashLog)) - h*5) & (1<<lzfHashLog - 1)
}

// compress appends in compressed to dst if that takes at most limit bytes,
// and reports whether it did; dst is returned unchanged when not. Like
// lzf_compress, it gives up on inputs under 3 bytes.
func (c *lzfCompressor) compress(dst, in []byte, limit int) ([]byte, bool) {
	end := len(in)
	if end < 3 || limit <= 0 {
		return dst, false
	}
	if uint64(c.base)+uint64(end)+2 >= 1<<32 {
		c.table = [1 << lzfHashLog]uint32{}
		c.base = 0
	}
	base := c.base + 1 // entries >= base hold this input's positions, +base
	c.base += uint32(end) + 1
	pos := func(slot uint32) int { // -1: no earlier position of this input
		if e := c.table[slot]; e >= base {
			return int(e - base)
		}
		return -1
	}
	// The checks are liblzf's, which may step a few bytes past the limit
	// before failing: the slack keeps them in the buffer.
	c.out = slices.Grow(c.out[:0], limit+8)[:limit+8]
	out := c.out
	ip, op, lit := 0, 1, 0 // out[0] is the first literal run's header
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < end-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := lzfIndex(hval)
		ref := pos(slot)
		c.table[slot] = uint32(ip) + base
		if ref > 0 && ref < ip && ip-ref-1 < lzfMaxOffset &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			maxLen := min(end-ip-2, lzfMaxRef)
			if op+3+1 >= limit && op-oneIf(lit == 0)+3+1 >= limit {
				return dst, false
			}
			out[op-lit-1] = byte(lit - 1) // close the literal run
			op -= oneIf(lit == 0)         // or drop its empty header
			n := lzfMatch(in, ref, ip, maxLen) - 2
			ip++
			if n < 7 {
				out[op] = byte(off>>8) + byte(n<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(n - 7)
				op += 2
			}
			out[op] = byte(off)
			op += 2 // and the next literal run's header
			lit = 0
			ip += n + 1
			if ip >= end-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			for range 2 {
				hval = hval<<8 | uint32(in[ip+2])
				c.table[lzfIndex(hval)] = uint32(ip) + base
				ip++
			}
			continue
		}
		if op >= limit {
			return dst, false
		}
		op, lit = lzfLiteral(out, op, lit, in[ip])
		ip++
	}
	if op+3 > limit {
		return dst, false
	}
	for ; ip < end; ip++ {
		op, lit = lzfLiteral(out, op, lit, in[ip])
	}
	out[op-lit-1] = byte(lit - 1)
	op -= oneIf(lit == 0)
	return append(dst, out[:op]...), true
}

// lzfLiteral writes b at out[op] as the next byte of the literal run of lit
// bytes written so far, closing the run when it reaches lzfMaxLiteral and
// leaving room for the next run's header; it returns the new op and lit.
func lzfLiteral(out []byte, op, lit int, b byte) (int, int) {
	out[op] = b
	op++
	lit++
	if lit == lzfMaxLiteral {
		out[op-lit-1] = byte(lit - 1)
		lit = 0
		op++
	}
	return op, lit
}

// lzfMatch is how many bytes match at ref and ip, counted as liblzf counts
// them: 16 at a time without the limit while more than 16 may match, then
// one at a time up to maxLen.
func lzfMatch(in []byte, ref, ip, maxLen int) int {
	n := 2
	if maxLen > 16 {
		for range 16 {
			n++
			if in[ref+n] != in[ip+n] {
				return n
			}
		}
	}
	for {
		n++
		if n >= maxLen || in[ref+n] != in[ip+n] {
			return n
		}
	}
}

func oneIf(b bool) int {
	if b {
		return 1
	}
	return 0
}

var errLZF = errors.New("invalid LZF data")

// lzfDecompress decompresses in into out, which must be exactly the
// uncompressed length.
func lzfDecompress(out, in []byte) error {
	op := 0
	for ip := 0; ip < len(in); {
		ctrl := int(in[ip])
		ip++
		if ctrl < 32 {
			n := ctrl + 1
			if ip+n > len(in) || op+n > len(out) {
				return errLZF
			}
			copy(out[op:], in[ip:ip+n])
			ip += n
			op += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if ip >= len(in) {
				return errLZF
			}
			n += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return errLZF
		}
		ref := op - (ctrl&31)<<8 - int(in[ip]) - 1
		ip++
		n += 2
		if ref < 0 || op+n > len(out) {
			return errLZF
		}
		for k := 0; k < n; k++ { // byte by byte: the source may overlap the copy
			out[op+k] = out[ref+k]
		}
		op += n
	}
	if op != len(out) {
		return errLZF
	}
	return nil
}

// CompressLZF appends in compressed as redis-server compresses it, if the
// result takes at most limit bytes (Redis asks for len(in)-4), and
// reports whether it did; dst is returned unchanged when not. For one-off
// strings (FUNCTION DUMP); an Encoder reuses its compressor.
func CompressLZF(dst, in []byte, limit int) ([]byte, bool) {
	return new(lzfCompressor).compress(dst, in, limit)
}

// DecompressLZF expands in into out, which must be exactly the
// uncompressed length.
func DecompressLZF(out, in []byte) error { return lzfDecompress(out, in) }

// MaxLZFRatio bounds the bytes one compressed byte expands to: a length
// claimed past len(compressed)*MaxLZFRatio is corrupt.
const MaxLZFRatio = lzfMaxRatio
