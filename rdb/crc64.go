package rdb

import (
	"encoding/binary"
	"hash/crc64"
)

// Redis checksums files and DUMP payloads with CRC-64/Jones: the reflected
// polynomial 0xad93d23594c935a9, initial value 0 and no final xor (check
// value 0xe9c6d914c4b8d9ca for "123456789"). hash/crc64 builds the
// byte-wise table of any polynomial but complements the value around its
// Update and would rebuild its eight-table form on every call for a
// polynomial other than ISO's and ECMA's, so the update is done here,
// eight bytes at a time.
var jonesTables = makeSlicing8(crc64.MakeTable(0x95ac9329ac4bc9b5)) // the polynomial, bit-reversed

func makeSlicing8(t *crc64.Table) *[8][256]uint64 {
	var s [8][256]uint64
	s[0] = *t
	for i := range 256 {
		c := s[0][i]
		for k := 1; k < 8; k++ {
			c = s[0][c&0xff] ^ c>>8
			s[k][i] = c
		}
	}
	return &s
}

// crcUpdate returns Redis's CRC-64 of the bytes that gave crc followed by p.
func crcUpdate(crc uint64, p []byte) uint64 {
	t := jonesTables
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}

// CRC64 is Redis's crc64(0, p): the checksum of RDB files and DUMP
// payloads.
func CRC64(p []byte) uint64 { return crcUpdate(0, p) }
