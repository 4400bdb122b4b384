// Package rdb reads and writes Redis's RDB format, version 10 (the format of
// redis-server 7.0), and the DUMP payloads of DUMP and RESTORE, which carry
// one value in the same encoding.
//
// A file is the header "REDIS0010", auxiliary fields (redis-ver, ctime,
// used-mem, aof-base, ...), then per database a SELECTDB and RESIZEDB
// opcode followed by its keys, each optionally preceded by its expiry in
// milliseconds and its LRU idle time or LFU frequency; an EOF opcode and a
// CRC-64 (Jones polynomial, as Redis; zero when checksums are off) end it.
//
// Writer produces such a file from Values, choosing each value's encoding
// as redis-server 7.0 would hold it, from its thresholds (see Options): so
// a redis-server that loads the file reports the same OBJECT ENCODING for
// every key as it would after building the value itself. Strings are
// written integer-encoded when they are the canonical text of a 32-bit
// integer and LZF-compressed when that saves space; lists as quicklists of
// listpacks (QUICKLIST_2); hashes and sorted sets as a listpack when small,
// else as HASH and ZSET_2 (binary scores); sets as an intset when small
// and all integers, else as SET.
//
// Reader streams a file record by record without holding more than one
// value at a time. Besides what Writer produces it reads every encoding a
// 7.0 server accepts from a file written by an older Redis: ziplists
// (HASH_ZIPLIST, ZSET_ZIPLIST, LIST_ZIPLIST, QUICKLIST of ziplists),
// ZIPMAP, the plain LIST, and ZSET with scores as text. Streams and module
// values are refused with an error naming the type and its offset.
//
// Bad input never panics and never makes the reader allocate in proportion
// to a length prefix it has not yet seen the bytes of: every error is a
// *CorruptError with the byte offset and the reason. The reader checks what
// would make a value unusable (lengths, encodings, intset order, NaN
// scores, the checksum) but not duplicate members: whoever builds the value
// from the Items sees duplicates collapse and can compare counts.
package rdb
