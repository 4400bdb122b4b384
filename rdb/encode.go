package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/internal/listpack"
)

// Options are the settings of redis-server that decide how values are
// encoded. A zero field means Redis 7.0's built-in default (what
// redis-server uses without a configuration file); to set a threshold to
// 0, give a negative number.
type Options struct {
	NoCompression bool // rdbcompression no: strings are never LZF-compressed
	NoChecksum    bool // rdbchecksum no: files end with a zero checksum

	HashMaxListpackEntries int // hash-max-listpack-entries, 512
	HashMaxListpackValue   int // hash-max-listpack-value, 64
	SetMaxIntsetEntries    int // set-max-intset-entries, 512
	ZSetMaxListpackEntries int // zset-max-listpack-entries, 128
	ZSetMaxListpackValue   int // zset-max-listpack-value, 64
	// ListMaxListpackSize is list-max-listpack-size, -2: negative values
	// -1..-5 bound a quicklist node's listpack to 4, 8, 16, 32 or 64 KiB,
	// positive ones to that many elements.
	ListMaxListpackSize int
	// ListPlainThreshold is the element size from which a list element
	// gets a PLAIN quicklist node of its own: 1 GiB in Redis 7.0 (DEBUG
	// QUICKLIST-PACKED-THRESHOLD changes it there).
	ListPlainThreshold int
}

func orDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// resolved returns o with defaults filled in.
func (o Options) resolved() Options {
	o.HashMaxListpackEntries = orDefault(o.HashMaxListpackEntries, 512)
	o.HashMaxListpackValue = orDefault(o.HashMaxListpackValue, 64)
	o.SetMaxIntsetEntries = orDefault(o.SetMaxIntsetEntries, 512)
	o.ZSetMaxListpackEntries = orDefault(o.ZSetMaxListpackEntries, 128)
	o.ZSetMaxListpackValue = orDefault(o.ZSetMaxListpackValue, 64)
	if o.ListMaxListpackSize == 0 {
		o.ListMaxListpackSize = -2
	}
	o.ListPlainThreshold = orDefault(o.ListPlainThreshold, 1<<30)
	return o
}

// encoder appends values in RDB encoding; its buffers are reused from
// value to value.
type encoder struct {
	opts  Options // resolved
	lzf   *lzfCompressor
	lp    []byte // a listpack being written
	ints  []int64
	order []int
	blob  []byte // an intset being written
	lzfed []byte // the compressed form of the string being written
}

func newEncoder(o Options) *encoder {
	return &encoder{opts: o.resolved()}
}

// Errors for values that cannot be written.
var (
	ErrEmptyValue = errors.New("rdb: an empty collection cannot be written (Redis deletes emptied keys)")
	ErrNaNScore   = errors.New("rdb: a sorted set score is NaN")
	errOddHash    = errors.New("rdb: a hash value needs fields and values in pairs")
	errScoreCount = errors.New("rdb: a sorted set value needs one score per member")
)

// appendLen appends an RDB length: 6 bits, 14 bits, or a marker and 32 or
// 64 bits big-endian.
func appendLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0x81), n)
}

// rdbInt reports whether s is stored integer-encoded: the canonical text
// of an integer that fits 32 bits (rdbTryIntegerEncoding).
func rdbInt(s []byte) (int64, bool) {
	if len(s) > 11 {
		return 0, false
	}
	v, ok := ascii.ParseInt(s)
	return v, ok && v >= math.MinInt32 && v <= math.MaxInt32
}

// appendString appends s as Redis's rdbSaveRawString does: integer-encoded
// when it can be, else LZF-compressed when longer than 20 bytes and that
// saves at least 4 bytes, else verbatim.
func (e *encoder) appendString(dst, s []byte) []byte {
	if v, ok := rdbInt(s); ok {
		switch {
		case v >= math.MinInt8 && v <= math.MaxInt8:
			return append(dst, 0xC0, byte(v))
		case v >= math.MinInt16 && v <= math.MaxInt16:
			return append(dst, 0xC1, byte(v), byte(v>>8))
		}
		return binary.LittleEndian.AppendUint32(append(dst, 0xC2), uint32(v))
	}
	if !e.opts.NoCompression && len(s) > 20 {
		if e.lzf == nil {
			e.lzf = new(lzfCompressor)
		}
		var ok bool
		if e.lzfed, ok = e.lzf.compress(e.lzfed[:0], s, len(s)-4); ok {
			dst = append(dst, 0xC3)
			dst = appendLen(dst, uint64(len(e.lzfed)))
			dst = appendLen(dst, uint64(len(s)))
			return append(dst, e.lzfed...)
		}
	}
	return append(appendLen(dst, uint64(len(s))), s...)
}

// appendScoreText formats a score as Redis's d2string: integers (within
// ±2^62) as such, others with %.17g, and inf, -inf, -0.
func appendScoreText(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f):
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// appendValue appends v's encoding and returns it with the type byte to
// write before the key.
func (e *encoder) appendValue(dst []byte, v *Value) ([]byte, byte, error) {
	if v.Len() == 0 {
		return dst, 0, ErrEmptyValue
	}
	switch v.Kind {
	case KindString:
		return e.appendString(dst, v.Str), TypeString, nil
	case KindList:
		return e.appendList(dst, v.Items), TypeListQuicklist2, nil
	case KindSet:
		return e.appendSet(dst, v.Items)
	case KindZSet:
		return e.appendZSet(dst, v.Items, v.Scores)
	case KindHash:
		return e.appendHash(dst, v.Items)
	case KindStream:
		if v.Stream == nil {
			return dst, 0, ErrEmptyValue
		}
		return e.appendStream(dst, v.Stream), TypeStreamListpacks2, nil
	}
	return dst, 0, fmt.Errorf("rdb: cannot write a value of %s", v.Kind)
}

// appendList appends a QUICKLIST_2: the node count, then per node its
// container (PLAIN or PACKED) and its data. Nodes are cut where Redis's
// RPUSH would start a new one, so the layout is the one redis-server
// builds from the same elements.
func (e *encoder) appendList(dst []byte, items [][]byte) []byte {
	type node struct {
		plain    bool
		from, to int
	}
	var nodes []node
	fill := e.opts.ListMaxListpackSize
	sizeLimit := 0
	if fill < 0 {
		sizeLimit = 4096 << min(-fill-1, 4)
	}
	lpBytes, count := 0, 0
	for i, it := range items {
		if len(it) >= e.opts.ListPlainThreshold {
			nodes = append(nodes, node{plain: true, from: i, to: i + 1})
			count = 0
			continue
		}
		// _quicklistNodeAllowInsert: the listpack's bytes plus the element
		// and an 8-byte overestimate of its overhead.
		newSize := lpBytes + len(it) + 8
		allowed := count > 0 && ((sizeLimit > 0 && newSize <= sizeLimit) ||
			(sizeLimit == 0 && newSize <= 8192 && count < fill))
		if allowed {
			nodes[len(nodes)-1].to = i + 1
			lpBytes += listpack.EntrySize(it)
			count++
			continue
		}
		nodes = append(nodes, node{from: i, to: i + 1})
		lpBytes, count = listpack.HeaderSize+1+listpack.EntrySize(it), 1
	}
	dst = appendLen(dst, uint64(len(nodes)))
	for _, n := range nodes {
		if n.plain {
			dst = appendLen(dst, quicklistNodePlain)
			dst = e.appendString(dst, items[n.from])
			continue
		}
		dst = appendLen(dst, quicklistNodePacked)
		dst = e.appendListpack(dst, items[n.from:n.to])
	}
	return dst
}

func (e *encoder) appendSet(dst []byte, items [][]byte) ([]byte, byte, error) {
	if len(items) <= e.opts.SetMaxIntsetEntries {
		e.ints = e.ints[:0]
		for _, it := range items {
			v, ok := ascii.ParseInt(it)
			if !ok {
				break
			}
			e.ints = append(e.ints, v)
		}
		if len(e.ints) == len(items) {
			slices.Sort(e.ints)
			if len(slices.Compact(e.ints)) != len(items) {
				return dst, 0, errors.New("rdb: a set value has duplicate members")
			}
			e.blob = appendIntset(e.blob[:0], e.ints)
			return e.appendString(dst, e.blob), TypeSetIntset, nil
		}
	}
	dst = appendLen(dst, uint64(len(items)))
	for _, it := range items {
		dst = e.appendString(dst, it)
	}
	return dst, TypeSet, nil
}

func (e *encoder) appendHash(dst []byte, items [][]byte) ([]byte, byte, error) {
	if len(items)%2 != 0 {
		return dst, 0, errOddHash
	}
	small := len(items)/2 <= e.opts.HashMaxListpackEntries
	for i := 0; small && i < len(items); i++ {
		small = len(items[i]) <= e.opts.HashMaxListpackValue
	}
	if small {
		return e.appendListpack(dst, items), TypeHashListpack, nil
	}
	dst = appendLen(dst, uint64(len(items)/2))
	for _, it := range items {
		dst = e.appendString(dst, it)
	}
	return dst, TypeHash, nil
}

func (e *encoder) appendZSet(dst []byte, members [][]byte, scores []float64) ([]byte, byte, error) {
	if len(scores) != len(members) {
		return dst, 0, errScoreCount
	}
	small := len(members) <= e.opts.ZSetMaxListpackEntries
	for i, m := range members {
		if math.IsNaN(scores[i]) {
			return dst, 0, ErrNaNScore
		}
		small = small && len(m) <= e.opts.ZSetMaxListpackValue
	}
	if !small {
		dst = appendLen(dst, uint64(len(members)))
		for i, m := range members {
			dst = e.appendString(dst, m)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(scores[i]))
		}
		return dst, TypeZSet2, nil
	}
	// A listpack sorted set is kept in order: by score, then member bytes.
	e.order = e.order[:0]
	for i := range members {
		e.order = append(e.order, i)
	}
	slices.SortFunc(e.order, func(a, b int) int {
		if scores[a] != scores[b] {
			if scores[a] < scores[b] {
				return -1
			}
			return 1
		}
		return bytes.Compare(members[a], members[b])
	})
	e.lp = listpack.AppendHeader(e.lp[:0])
	var num [32]byte
	for _, i := range e.order {
		e.lp = listpack.AppendString(e.lp, members[i])
		e.lp = listpack.AppendString(e.lp, appendScoreText(num[:0], scores[i]))
	}
	e.lp = listpack.Finish(e.lp, 2*len(e.order))
	return e.appendString(dst, e.lp), TypeZSetListpack, nil
}

// appendListpack appends items as one listpack, written as a string.
func (e *encoder) appendListpack(dst []byte, items [][]byte) []byte {
	e.lp = listpack.AppendHeader(e.lp[:0])
	for _, it := range items {
		e.lp = listpack.AppendString(e.lp, it)
	}
	e.lp = listpack.Finish(e.lp, len(items))
	return e.appendString(dst, e.lp)
}
