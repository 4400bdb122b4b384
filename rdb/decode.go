package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// decoder reads strings and values from a source into an arena; Reader
// (files) and DecodeDump (payloads) share it.
type decoder struct {
	src   *source
	arena arena
	lzfIn []byte // compressed bytes, reused
	at    int64  // offset of the field being read, for errors

	// into is the value packed elements are added to, by add: a func
	// made once, as a closure per value would be an allocation per key.
	into *Value
	num  [20]byte // an integer element formatted
	add  func(elem []byte, scratch bool) error
}

// adder returns d.add, adding to v.
func (d *decoder) adder(v *Value) func([]byte, bool) error {
	d.into = v
	if d.add == nil {
		d.add = func(elem []byte, scratch bool) error {
			d.into.Items = append(d.into.Items, d.keep(elem, scratch))
			return nil
		}
	}
	return d.add
}

// fail returns a CorruptError at the offset of the field being read; a
// short input is reported as truncated, a read error as itself.
func (d *decoder) fail(err error, format string, args ...any) error {
	reason := fmt.Sprintf(format, args...)
	var sentinel error
	switch {
	case errors.Is(err, errShort):
		sentinel = ErrTruncated
		reason += ": " + ErrTruncated.Error()
	case err != nil:
		sentinel = err
		reason += ": " + err.Error()
	}
	return &CorruptError{Offset: d.at, Reason: reason, Err: sentinel}
}

// maxPrealloc bounds the capacity reserved from a count before the
// elements are seen: a corrupt count must not allocate gigabytes.
const maxPrealloc = 1024

// readLen reads a length, or reports the special encoding (0..3) of an
// encoded string that follows instead.
func (d *decoder) readLen(what string) (n uint64, special int, err error) {
	d.at = d.src.offset()
	c, err := d.src.readByte()
	if err != nil {
		return 0, -1, d.fail(err, "reading the length of %s", what)
	}
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3F), -1, nil
	case 1:
		c2, err := d.src.readByte()
		if err != nil {
			return 0, -1, d.fail(err, "reading the length of %s", what)
		}
		return uint64(c&0x3F)<<8 | uint64(c2), -1, nil
	case 3:
		return 0, int(c & 0x3F), nil
	}
	var b []byte
	switch c {
	case 0x80:
		b, err = d.src.take(4)
		if err == nil {
			return uint64(binary.BigEndian.Uint32(b)), -1, nil
		}
	case 0x81:
		b, err = d.src.take(8)
		if err == nil {
			return binary.BigEndian.Uint64(b), -1, nil
		}
	default:
		return 0, -1, d.fail(nil, "invalid length encoding %#x for %s", c, what)
	}
	return 0, -1, d.fail(err, "reading the length of %s", what)
}

// readCount reads a length that must not be an encoded string.
func (d *decoder) readCount(what string) (uint64, error) {
	n, special, err := d.readLen(what)
	if err == nil && special >= 0 {
		return 0, d.fail(nil, "expected the length of %s, found a string encoding (%d)", what, special)
	}
	return n, err
}

// readBytes reads an n-byte string into memory valid until the arena's
// reset (or, reading a payload, into the payload itself). When the input's
// end is unknown the memory grows as the bytes arrive, so a corrupt length
// costs at most as much as the input really holds.
func (d *decoder) readBytes(n uint64, what string) ([]byte, error) {
	if rem := d.src.remaining(); rem >= 0 {
		if n > uint64(rem) {
			return nil, d.fail(errShort, "%s of %d bytes with %d left", what, n, rem)
		}
		p := d.src.buf[d.src.r : d.src.r+int(n) : d.src.r+int(n)]
		d.src.r += int(n)
		return p, nil
	}
	if n < arenaOwn {
		p := d.arena.alloc(int(n))
		if err := d.src.readInto(p); err != nil {
			return nil, d.fail(err, "reading %s of %d bytes", what, n)
		}
		return p, nil
	}
	const step = 1 << 20
	var p []byte
	for uint64(len(p)) < n {
		k := int(min(n-uint64(len(p)), step))
		p = append(p, make([]byte, k)...)
		if err := d.src.readInto(p[len(p)-k:]); err != nil {
			return nil, d.fail(err, "reading %s of %d bytes", what, n)
		}
	}
	return p[:n:n], nil
}

// readString reads a string: verbatim, integer-encoded or LZF-compressed.
func (d *decoder) readString(what string) ([]byte, error) {
	n, special, err := d.readLen(what)
	if err != nil {
		return nil, err
	}
	if special < 0 {
		return d.readBytes(n, what)
	}
	var v int64
	switch special {
	case 0, 1, 2:
		b, err := d.src.take(1 << special)
		if err != nil {
			return nil, d.fail(err, "reading integer-encoded %s", what)
		}
		switch special {
		case 0:
			v = int64(int8(b[0]))
		case 1:
			v = int64(int16(binary.LittleEndian.Uint16(b)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		}
		var num [11]byte
		return d.arena.copy(strconv.AppendInt(num[:0], v, 10)), nil
	case 3:
		return d.readLZF(what)
	}
	return nil, d.fail(nil, "unknown string encoding %d for %s", special, what)
}

func (d *decoder) readLZF(what string) ([]byte, error) {
	start := d.at
	clen, err := d.readCount(what + " compressed")
	if err != nil {
		return nil, err
	}
	ulen, err := d.readCount(what + " uncompressed")
	if err != nil {
		return nil, err
	}
	d.at = start
	if clen == 0 || ulen/lzfMaxRatio > clen {
		return nil, d.fail(nil, "%s compressed to %d bytes cannot expand to %d", what, clen, ulen)
	}
	if rem := d.src.remaining(); rem >= 0 && clen > uint64(rem) {
		return nil, d.fail(errShort, "%s compressed to %d bytes with %d left", what, clen, rem)
	}
	var in []byte
	if d.src.remaining() >= 0 || clen >= arenaOwn {
		in, err = d.readBytes(clen, "the compressed bytes of "+what)
	} else {
		d.lzfIn = append(d.lzfIn[:0], make([]byte, clen)...)
		in = d.lzfIn
		if err = d.src.readInto(in); err != nil {
			err = d.fail(err, "reading the compressed bytes of %s", what)
		}
	}
	if err != nil {
		return nil, err
	}
	out := d.arena.alloc(int(ulen))
	if err := lzfDecompress(out, in); err != nil {
		d.at = start
		return nil, d.fail(nil, "%s compressed with LZF: %v", what, err)
	}
	return out, nil
}

// readValue reads a value of type t into v.
func (d *decoder) readValue(t byte, v *Value) error {
	v.Reset()
	switch t {
	case TypeString:
		v.Kind = KindString
		s, err := d.readString("a string value")
		v.Str = s
		return err
	case TypeList, TypeSet:
		v.Kind = KindList
		if t == TypeSet {
			v.Kind = KindSet
		}
		return d.readElements(v, 1, "element")
	case TypeHash:
		v.Kind = KindHash
		return d.readElements(v, 2, "field or value")
	case TypeZSet, TypeZSet2:
		return d.readZSet(t, v)
	case TypeListQuicklist, TypeListQuicklist2:
		return d.readQuicklist(t, v)
	case TypeHashZipmap, TypeListZiplist, TypeSetIntset, TypeZSetZiplist, TypeHashZiplist, TypeHashListpack, TypeZSetListpack:
		return d.readPacked(t, v)
	case TypeStreamListpacks, TypeStreamListpacks2:
		return d.readStream(t, v)
	case TypeModule, TypeModule2:
		return &CorruptError{Offset: d.at, Reason: "a value of type " + typeName(t) + ", which this reader does not load", Err: ErrUnsupported}
	}
	return &CorruptError{Offset: d.at, Reason: "unknown value type " + typeName(t)}
}

// readElements reads a count and count*per strings into v.Items.
func (d *decoder) readElements(v *Value, per uint64, what string) error {
	n, err := d.readCount("a collection")
	if err != nil {
		return err
	}
	if n > math.MaxUint64/per {
		return d.fail(nil, "collection of %d elements", n)
	}
	n *= per
	v.Items = growItems(v.Items, n)
	for i := uint64(0); i < n; i++ {
		s, err := d.readString(what)
		if err != nil {
			return err
		}
		v.Items = append(v.Items, s)
	}
	return nil
}

func growItems(items [][]byte, n uint64) [][]byte {
	if want := int(min(n, maxPrealloc)); cap(items) < want {
		return make([][]byte, 0, want)
	}
	return items
}

func (d *decoder) readZSet(t byte, v *Value) error {
	v.Kind = KindZSet
	n, err := d.readCount("a sorted set")
	if err != nil {
		return err
	}
	v.Items = growItems(v.Items, n)
	for i := uint64(0); i < n; i++ {
		m, err := d.readString("a sorted set member")
		if err != nil {
			return err
		}
		d.at = d.src.offset()
		var score float64
		if t == TypeZSet2 {
			b, err := d.src.take(8)
			if err != nil {
				return d.fail(err, "reading a score")
			}
			score = math.Float64frombits(binary.LittleEndian.Uint64(b))
		} else if score, err = d.readTextScore(); err != nil {
			return err
		}
		if math.IsNaN(score) {
			return d.fail(nil, "a sorted set score is NaN")
		}
		v.Items = append(v.Items, m)
		v.Scores = append(v.Scores, score)
	}
	return nil
}

// readTextScore reads a ZSET (version 1) score: a length byte (253 NaN,
// 254 +inf, 255 -inf) and the number as text.
func (d *decoder) readTextScore() (float64, error) {
	c, err := d.src.readByte()
	if err != nil {
		return 0, d.fail(err, "reading a score")
	}
	switch c {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := d.src.take(int(c))
	if err != nil {
		return 0, d.fail(err, "reading a score")
	}
	f, perr := strconv.ParseFloat(string(b), 64)
	if perr != nil && !errors.Is(perr, strconv.ErrRange) {
		return 0, d.fail(nil, "score %q is not a number", b)
	}
	return f, nil
}

// keep returns elem as a value element: elements formatted into a
// scratch buffer are copied to the arena, slices of a blob are kept.
func (d *decoder) keep(elem []byte, scratch bool) []byte {
	if scratch {
		return d.arena.copy(elem)
	}
	return elem
}

func (d *decoder) readQuicklist(t byte, v *Value) error {
	v.Kind = KindList
	nodes, err := d.readCount("a quicklist")
	if err != nil {
		return err
	}
	for i := uint64(0); i < nodes; i++ {
		container := uint64(quicklistNodePacked)
		if t == TypeListQuicklist2 {
			if container, err = d.readCount("a quicklist node's container"); err != nil {
				return err
			}
			if container != quicklistNodePlain && container != quicklistNodePacked {
				return d.fail(nil, "quicklist node container %d is neither PLAIN (1) nor PACKED (2)", container)
			}
		}
		at := d.src.offset()
		blob, err := d.readString("a quicklist node")
		if err != nil {
			return err
		}
		if len(blob) == 0 {
			d.at = at
			return d.fail(nil, "empty quicklist node")
		}
		add := d.adder(v)
		switch {
		case container == quicklistNodePlain:
			v.Items = append(v.Items, blob)
		case t == TypeListQuicklist2:
			_, err = lpEach(blob, d.num[:0], add)
		default:
			_, err = ziplistEach(blob, d.num[:0], add)
		}
		if err != nil {
			d.at = at
			return d.fail(nil, "quicklist node: %v", err)
		}
	}
	return nil
}

// readPacked reads a value stored as one blob: an intset, listpack,
// ziplist or zipmap.
func (d *decoder) readPacked(t byte, v *Value) error {
	at := d.src.offset()
	blob, err := d.readString("an encoded value")
	if err != nil {
		return err
	}
	add := d.adder(v)
	var n int
	switch t {
	case TypeSetIntset:
		v.Kind = KindSet
		n, err = intsetEach(blob, d.num[:0], add)
	case TypeListZiplist:
		v.Kind = KindList
		n, err = ziplistEach(blob, d.num[:0], add)
	case TypeHashListpack, TypeZSetListpack:
		v.Kind = KindHash
		n, err = lpEach(blob, d.num[:0], add)
	case TypeHashZiplist, TypeZSetZiplist:
		v.Kind = KindHash
		n, err = ziplistEach(blob, d.num[:0], add)
	case TypeHashZipmap:
		v.Kind = KindHash
		n, err = zipmapEach(blob, func(f, val []byte) error {
			v.Items = append(v.Items, f, val)
			return nil
		})
		n *= 2
	}
	d.at = at
	if err != nil {
		return d.fail(nil, "%s value: %v", typeName(t), err)
	}
	if v.Kind == KindHash && n%2 != 0 {
		return d.fail(nil, "%s value has %d elements, not pairs", typeName(t), n)
	}
	if t == TypeZSetListpack || t == TypeZSetZiplist {
		return d.pairsToZSet(v)
	}
	return nil
}

// pairsToZSet turns member, score-text pairs read into v.Items into
// members and scores.
func (d *decoder) pairsToZSet(v *Value) error {
	v.Kind = KindZSet
	n := len(v.Items) / 2
	for i := 0; i < n; i++ {
		text := v.Items[2*i+1]
		f, err := strconv.ParseFloat(string(text), 64)
		if (err != nil && !errors.Is(err, strconv.ErrRange)) || math.IsNaN(f) {
			return d.fail(nil, "sorted set score %q is not a number", text)
		}
		v.Items[i] = v.Items[2*i]
		v.Scores = append(v.Scores, f)
	}
	clear(v.Items[n:])
	v.Items = v.Items[:n]
	return nil
}
