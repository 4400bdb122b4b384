// Package listpack encodes and decodes Redis 7's listpack, byte for byte as
// redis-server 7.0's listpack.c writes it. Listpacks hold small hashes, sets,
// sorted sets and list nodes in RDB files and DUMP payloads, and every node
// of a stream, which Shoal keeps in memory in this exact layout so that node
// boundaries, approximate trims and DUMP match Redis's.
//
// A listpack is a 6-byte header (the total bytes, uint32 little-endian; the
// element count, uint16 little-endian, CountUnknown when it does not fit),
// the entries, and the End byte 0xFF. An entry is an encoding byte carrying
// the type and maybe part of the integer or length, the data, and a backlen:
// the size of encoding plus data in 1 to 5 bytes of 7 bits, readable from
// its last byte, so that a listpack is walked in both directions.
//
// Entry encodings (the first byte):
//
//	0xxxxxxx                    7-bit unsigned integer, 0..127
//	10llllll + data             string of up to 63 bytes
//	110xxxxx xxxxxxxx           13-bit signed integer, -4096..4095
//	1110llll llllllll + data    string of up to 4095 bytes
//	11110000 + 4-byte length    string of up to 2^32-1 bytes
//	11110001/0010/0011/0100     16, 24, 32 and 64-bit signed integers
//	11111111                    the End byte
//
// Encoding appends to a caller's []byte ([AppendHeader], [AppendString],
// [AppendInt], [Finish]); nothing here allocates but append's growth.
// Decoding returns an [Entry] whose string is a slice of the listpack,
// valid as long as the listpack's bytes are.
//
// Two kinds of readers: [Validate], [Each] and [Decode] check every bound
// and return an error for any malformed input (they take untrusted bytes,
// such as a RESTORE payload), while [Next] and [Prev] trust a listpack that
// was validated or built here, as Redis's lpNext and lpPrev do, and are the
// fast path for iteration.
package listpack
