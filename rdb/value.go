package rdb

import (
	"errors"
	"fmt"
)

// Version is the RDB format version this package writes: redis-server 7.0's.
const Version = 10

// Kind is the type of a value, as TYPE names it.
type Kind uint8

// Kinds of values.
const (
	KindString Kind = iota + 1
	KindList
	KindSet
	KindZSet
	KindHash
	KindStream
)

// String returns the kind's TYPE name.
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindList:
		return "list"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindHash:
		return "hash"
	case KindStream:
		return "stream"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Value is one key's value, independent of how any server holds it.
//
//   - KindString: Str.
//   - KindList: Items, head to tail.
//   - KindSet: Items, the members.
//   - KindZSet: Items, the members, and Scores, Scores[i] being Items[i]'s.
//   - KindHash: Items, fields and values alternating: field, value, field, ...
//   - KindStream: Stream (its nodes as listpacks; see stream.go).
//
// A Value filled by Reader points into memory the reader reuses; see
// Reader.Next. Reset empties a Value for reuse, keeping its capacity.
type Value struct {
	Kind   Kind
	Str    []byte
	Items  [][]byte
	Scores []float64
	Stream *Stream
}

// Reset empties v, keeping the capacity of its slices.
func (v *Value) Reset() {
	clear(v.Items) // drop the references, so reused capacity keeps nothing alive
	*v = Value{Items: v.Items[:0], Scores: v.Scores[:0]}
}

// Len is the number of elements: 1 for a string, fields for a hash.
func (v *Value) Len() int {
	switch v.Kind {
	case KindString:
		return 1
	case KindHash:
		return len(v.Items) / 2
	case KindStream:
		return 1 // a stream is kept when it has no entries
	}
	return len(v.Items)
}

// KeyMeta is what a file records of a key besides its value.
type KeyMeta struct {
	ExpireAt int64 // unix time in ms; 0 for none
	// Idle is the LRU idle time in seconds, written and read with HasIdle
	// (Redis writes it under an LRU maxmemory-policy).
	Idle    int64
	HasIdle bool
	// Freq is the LFU counter, written and read with HasFreq (Redis writes
	// it under an LFU maxmemory-policy).
	Freq    uint8
	HasFreq bool
}

// Type bytes of values and opcodes, as rdb.h numbers them.
const (
	TypeString           = 0
	TypeList             = 1
	TypeSet              = 2
	TypeZSet             = 3
	TypeHash             = 4
	TypeZSet2            = 5
	TypeModule           = 6
	TypeModule2          = 7
	TypeHashZipmap       = 9
	TypeListZiplist      = 10
	TypeSetIntset        = 11
	TypeZSetZiplist      = 12
	TypeHashZiplist      = 13
	TypeListQuicklist    = 14
	TypeStreamListpacks  = 15
	TypeHashListpack     = 16
	TypeZSetListpack     = 17
	TypeListQuicklist2   = 18
	TypeStreamListpacks2 = 19
	opFunction2          = 245
	opFunction           = 246
	opModuleAux          = 247
	opIdle               = 248
	opFreq               = 249
	opAux                = 250
	opResizeDB           = 251
	opExpireTimeMS       = 252
	opExpireTime         = 253
	opSelectDB           = 254
	opEOF                = 255
	quicklistNodePlain   = 1
	quicklistNodePacked  = 2
)

// typeName names a type byte in errors.
func typeName(t byte) string {
	if n, ok := typeNames[t]; ok {
		return fmt.Sprintf("%s (%d)", n, t)
	}
	return fmt.Sprintf("%d", t)
}

var typeNames = map[byte]string{
	TypeString: "STRING", TypeList: "LIST", TypeSet: "SET", TypeZSet: "ZSET", TypeHash: "HASH",
	TypeZSet2: "ZSET_2", TypeModule: "MODULE", TypeModule2: "MODULE_2", TypeHashZipmap: "HASH_ZIPMAP",
	TypeListZiplist: "LIST_ZIPLIST", TypeSetIntset: "SET_INTSET", TypeZSetZiplist: "ZSET_ZIPLIST",
	TypeHashZiplist: "HASH_ZIPLIST", TypeListQuicklist: "LIST_QUICKLIST", TypeStreamListpacks: "STREAM_LISTPACKS",
	TypeHashListpack: "HASH_LISTPACK", TypeZSetListpack: "ZSET_LISTPACK", TypeListQuicklist2: "LIST_QUICKLIST_2",
	TypeStreamListpacks2: "STREAM_LISTPACKS_2", 20: "SET_LISTPACK", 21: "STREAM_LISTPACKS_3",
	opModuleAux: "MODULE_AUX", opFunction: "FUNCTION (7.0 release candidates)",
}

// Errors a CorruptError may wrap, for errors.Is.
var (
	// ErrChecksum: the CRC-64 trailer does not match the content.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrTruncated: the input ended inside a record.
	ErrTruncated = errors.New("unexpected end of input")
	// ErrUnsupported: a valid record this package does not read (module
	// values, a newer format version).
	ErrUnsupported = errors.New("unsupported")
)

// CorruptError reports input this package cannot read, with the offset of
// the byte where reading failed and why.
type CorruptError struct {
	Offset int64
	Reason string
	Err    error // ErrChecksum, ErrTruncated, ErrUnsupported or nil
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("rdb: at byte %d: %s", e.Offset, e.Reason)
}

// Unwrap returns the sentinel the error wraps, if any.
func (e *CorruptError) Unwrap() error { return e.Err }
