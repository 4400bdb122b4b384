package http1

import "encoding/binary"

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// invalidValueByte returns the index of the first byte of v not allowed in a field
// value, or -1. Header values are most of a request's bytes, so it checks eight bytes
// per step: a word with no byte below 0x20 and none equal to 0x7F is all valid, and only
// a word that may hold one (often just an HTAB) is checked byte by byte.
func invalidValueByte(v []byte) int {
	i := 0
	for ; i+8 <= len(v); i += 8 {
		x := binary.LittleEndian.Uint64(v[i:])
		del := x ^ (0x7f * ones)
		if ((x-0x20*ones)&^x|(del-ones)&^del)&highs == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			if !valueChars[v[j]] {
				return j
			}
		}
	}
	for ; i < len(v); i++ {
		if !valueChars[v[i]] {
			return i
		}
	}
	return -1
}
