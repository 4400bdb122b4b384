package rdb

import "errors"

// LZF, the compression Redis applies to strings in RDB files. The format
// is a sequence of runs, each starting with a control byte c:
//
//   - c < 32: a literal run; the next c+1 bytes are copied to the output.
//   - else a back reference: length n = c>>5 (when 7, the next byte is
//     added), distance d = (c&31)<<8 + the byte after; n+2 bytes are
//     copied from d+1 bytes back in the output, the copy may overlap
//     what it produces.
//
// Redis compresses with liblzf; this is a greedy compressor of its own
// over the same format: any output liblzf's decompressor accepts is
// equivalent, the bytes need not match liblzf's.

const (
	lzfMaxLiteral = 1 << 5          // a literal run holds 1..32 bytes
	lzfMaxOffset  = 1 << 13         // back references reach 8 KiB back
	lzfMaxRef     = 1<<8 + 1<<3     // 264: the longest match one reference copies
	lzfHashLog    = 14              // slots in the match finder's table: 16384
	lzfMaxRatio   = lzfMaxRef/3 + 1 // output bytes per input byte at most (3-byte references of 264)
)

// lzfCompressor holds the match finder's table between calls. Entries are
// positions plus base; an entry below base is from an earlier input, so the
// table needs no clearing between inputs.
type lzfCompressor struct {
	table [1 << lzfHashLog]uint32
	base  uint32
}

func lzfHash(p []byte) uint32 {
	v := uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])
	return (v * 2654435761) >> (32 - lzfHashLog)
}

// compress appends in compressed to dst if that takes at most limit bytes,
// and reports whether it did; dst is returned unchanged when not.
func (c *lzfCompressor) compress(dst, in []byte, limit int) ([]byte, bool) {
	if uint64(c.base)+uint64(len(in))+1 >= 1<<32 {
		c.table = [1 << lzfHashLog]uint32{}
		c.base = 0
	}
	base := c.base + 1 // entries >= base are this input's positions, +base
	c.base += uint32(len(in)) + 1
	start := len(dst)
	out := dst
	lit := 0 // literals pending, in[i-lit:i]
	flushLiterals := func(i int) {
		for lit > 0 {
			n := min(lit, lzfMaxLiteral)
			out = append(out, byte(n-1))
			out = append(out, in[i-lit:i-lit+n]...)
			lit -= n
		}
	}
	i := 0
	for i+2 < len(in) {
		if len(out)-start > limit {
			return dst, false
		}
		h := lzfHash(in[i:])
		cand := c.table[h]
		c.table[h] = uint32(i) + base
		if cand >= base {
			ref := int(cand - base)
			if dist := i - ref - 1; dist < lzfMaxOffset && in[ref] == in[i] && in[ref+1] == in[i+1] && in[ref+2] == in[i+2] {
				n := 3
				for n < lzfMaxRef && i+n < len(in) && in[ref+n] == in[i+n] {
					n++
				}
				flushLiterals(i)
				if l := n - 2; l < 7 {
					out = append(out, byte(l<<5|dist>>8), byte(dist))
				} else {
					out = append(out, byte(7<<5|dist>>8), byte(l-7), byte(dist))
				}
				// Index the positions the match covers, a few, so later
				// repeats of them are found.
				for j := i + 1; j < i+n && j+2 < len(in) && j < i+4; j++ {
					c.table[lzfHash(in[j:])] = uint32(j) + base
				}
				i += n
				continue
			}
		}
		lit++
		i++
	}
	lit += len(in) - i
	flushLiterals(len(in))
	if len(out)-start > limit {
		return dst, false
	}
	return out, true
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
