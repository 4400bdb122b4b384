package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testKey is one key of a sample data set, with the encoding Redis 7.0
// holds it in and the RDB type the writer must choose for it.
type testKey struct {
	db   int
	key  string
	val  Value
	meta KeyMeta
	typ  byte
	enc  string // OBJECT ENCODING
}

func strs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func seq(prefix string, n, pad int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(prefix + strconv.Itoa(i) + strings.Repeat("x", pad))
	}
	return out
}

func pairs(n, pad int) [][]byte {
	out := make([][]byte, 0, 2*n)
	for i := 0; i < n; i++ {
		out = append(out, []byte("f"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i)+strings.Repeat("y", pad)))
	}
	return out
}

func scores(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)*1.5 - 7
	}
	return out
}

// sampleKeys covers every type in every encoding the writer picks, small
// and large, integers, compressible strings, big list elements and
// expiries, over two databases.
func sampleKeys() []testKey {
	ints := seq("", 600, 0) // "0".."599": integers, more than an intset holds
	return []testKey{
		{key: "s:raw", val: Value{Kind: KindString, Str: []byte("hello world")}, typ: TypeString, enc: "embstr"},
		{key: "s:empty", val: Value{Kind: KindString, Str: []byte{}}, typ: TypeString, enc: "embstr"},
		{key: "s:int8", val: Value{Kind: KindString, Str: []byte("-12")}, typ: TypeString, enc: "int"},
		{key: "s:int16", val: Value{Kind: KindString, Str: []byte("30000")}, typ: TypeString, enc: "int"},
		{key: "s:int32", val: Value{Kind: KindString, Str: []byte("-2000000000")}, typ: TypeString, enc: "int"},
		{key: "s:int64", val: Value{Kind: KindString, Str: []byte("9223372036854775807")}, typ: TypeString, enc: "int"},
		{key: "s:notint", val: Value{Kind: KindString, Str: []byte("007")}, typ: TypeString, enc: "embstr"},
		{key: "s:lzf", val: Value{Kind: KindString, Str: bytes.Repeat([]byte("abcdefgh"), 500)}, typ: TypeString, enc: "raw"},
		{key: "s:binary", val: Value{Kind: KindString, Str: []byte("\x00\xff\r\n\x01 binary and longer than forty-four bytes")}, typ: TypeString, enc: "raw"},
		{key: "s:ttl", val: Value{Kind: KindString, Str: []byte("v")}, meta: KeyMeta{ExpireAt: 4102444800000}, typ: TypeString, enc: "embstr"},
		{key: "l:small", val: Value{Kind: KindList, Items: strs("a", "1", "-5", "bb", "123456789012", "")}, typ: TypeListQuicklist2, enc: "quicklist"},
		{key: "l:big", val: Value{Kind: KindList, Items: seq("elem-", 5000, 10)}, typ: TypeListQuicklist2, enc: "quicklist"},
		{key: "l:huge-elem", val: Value{Kind: KindList, Items: [][]byte{[]byte("a"), bytes.Repeat([]byte("z"), 20000), []byte("b")}}, typ: TypeListQuicklist2, enc: "quicklist"},
		{key: "h:small", val: Value{Kind: KindHash, Items: pairs(10, 0)}, typ: TypeHashListpack, enc: "listpack", meta: KeyMeta{ExpireAt: 4102444800123}},
		{key: "h:many", val: Value{Kind: KindHash, Items: pairs(600, 0)}, typ: TypeHash, enc: "hashtable"},
		{key: "h:longval", val: Value{Kind: KindHash, Items: pairs(3, 70)}, typ: TypeHash, enc: "hashtable"},
		{key: "set:ints", val: Value{Kind: KindSet, Items: strs("5", "-3", "100000", "9223372036854775807")}, typ: TypeSetIntset, enc: "intset"},
		{key: "set:manyints", val: Value{Kind: KindSet, Items: ints}, typ: TypeSet, enc: "hashtable"},
		{key: "set:strs", val: Value{Kind: KindSet, Items: strs("a", "b", "1")}, typ: TypeSet, enc: "hashtable"},
		{key: "z:small", val: Value{Kind: KindZSet, Items: strs("a", "b", "c", "d", "e"), Scores: []float64{1, -2.5, math.Inf(1), math.Inf(-1), 0.1}}, typ: TypeZSetListpack, enc: "listpack"},
		{key: "z:many", val: Value{Kind: KindZSet, Items: seq("m", 200, 0), Scores: scores(200)}, typ: TypeZSet2, enc: "skiplist"},
		{key: "z:longmember", val: Value{Kind: KindZSet, Items: seq("m", 3, 80), Scores: scores(3)}, typ: TypeZSet2, enc: "skiplist"},
		{db: 3, key: "s:db3", val: Value{Kind: KindString, Str: []byte("in db 3")}, typ: TypeString, enc: "embstr"},
		{db: 3, key: "h:db3", val: Value{Kind: KindHash, Items: pairs(2, 0)}, typ: TypeHashListpack, enc: "listpack", meta: KeyMeta{ExpireAt: 4102444800000}},
	}
}

// writeSample writes keys as Redis would: aux fields, then per database
// SELECTDB, RESIZEDB and the keys.
func writeSample(t testing.TB, keys []testKey, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, o)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.WriteAux("redis-ver", "7.0.15"))
	must(w.WriteAuxInt("redis-bits", 64))
	must(w.WriteAuxInt("ctime", 1700000000))
	must(w.WriteAuxInt("used-mem", 1<<20))
	must(w.WriteAuxInt("aof-base", 0))
	byDB := map[int][]testKey{}
	var dbs []int
	for _, k := range keys {
		if byDB[k.db] == nil {
			dbs = append(dbs, k.db)
		}
		byDB[k.db] = append(byDB[k.db], k)
	}
	slices.Sort(dbs)
	for _, db := range dbs {
		expires := 0
		for _, k := range byDB[db] {
			if k.meta.ExpireAt != 0 {
				expires++
			}
		}
		must(w.SelectDB(db, len(byDB[db]), expires))
		for _, k := range byDB[db] {
			must(w.WriteKey([]byte(k.key), &k.val, k.meta))
		}
	}
	must(w.Close())
	return buf.Bytes()
}

// readAll reads every key record of a file.
func readAll(t testing.TB, file []byte) (map[string]testKey, map[string]string) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]testKey{}
	aux := map[string]string{}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return keys, aux
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case RecordAux:
			aux[string(rec.AuxKey)] = string(rec.AuxValue)
		case RecordFunction: // kept with the aux fields, under a name no aux field has
			aux["function"] = string(rec.Function)
		case RecordKey:
			keys[fmt.Sprintf("%d/%s", rec.DB, rec.Key)] = testKey{db: rec.DB, key: string(rec.Key), val: cloneValue(&rec.Value), meta: rec.Meta, typ: rec.Type}
		}
	}
}

func cloneValue(v *Value) Value {
	c := Value{Kind: v.Kind, Str: bytes.Clone(v.Str), Scores: slices.Clone(v.Scores)}
	if v.Kind == KindString && c.Str == nil {
		c.Str = []byte{}
	}
	for _, it := range v.Items {
		c.Items = append(c.Items, bytes.Clone(it))
	}
	return c
}

// canonical renders a value for comparison: sets, hashes and sorted sets
// in sorted order.
func canonical(v Value) string {
	var parts []string
	switch v.Kind {
	case KindString:
		return "string:" + strconv.Quote(string(v.Str))
	case KindList:
		for _, it := range v.Items {
			parts = append(parts, strconv.Quote(string(it)))
		}
		return "list:" + strings.Join(parts, ",")
	case KindSet:
		for _, it := range v.Items {
			parts = append(parts, strconv.Quote(string(it)))
		}
	case KindHash:
		for i := 0; i+1 < len(v.Items); i += 2 {
			parts = append(parts, strconv.Quote(string(v.Items[i]))+"="+strconv.Quote(string(v.Items[i+1])))
		}
	case KindZSet:
		for i, it := range v.Items {
			parts = append(parts, strconv.Quote(string(it))+"="+strconv.FormatFloat(v.Scores[i], 'g', -1, 64))
		}
	}
	slices.Sort(parts)
	return v.Kind.String() + ":" + strings.Join(parts, ",")
}

func TestWriteThenReadGivesTheSameKeys(t *testing.T) {
	for _, o := range []Options{{}, {NoCompression: true, NoChecksum: true}} {
		keys := sampleKeys()
		got, aux := readAll(t, writeSample(t, keys, o))
		if aux["redis-ver"] != "7.0.15" || aux["aof-base"] != "0" {
			t.Errorf("aux fields: %v", aux)
		}
		if len(got) != len(keys) {
			t.Errorf("read %d keys, wrote %d", len(got), len(keys))
		}
		for _, k := range keys {
			g, ok := got[fmt.Sprintf("%d/%s", k.db, k.key)]
			switch {
			case !ok:
				t.Errorf("%s: missing", k.key)
			case canonical(g.val) != canonical(k.val):
				t.Errorf("%s: read %.200s, wrote %.200s", k.key, canonical(g.val), canonical(k.val))
			case g.typ != k.typ:
				t.Errorf("%s: written as %s, want %s", k.key, typeName(g.typ), typeName(k.typ))
			case g.meta != k.meta:
				t.Errorf("%s: meta %+v, want %+v", k.key, g.meta, k.meta)
			}
		}
	}
}

func TestCompressionSavesSpace(t *testing.T) {
	v := Value{Kind: KindString, Str: bytes.Repeat([]byte("0123456789"), 1000)}
	on := writeSample(t, []testKey{{key: "k", val: v}}, Options{})
	off := writeSample(t, []testKey{{key: "k", val: v}}, Options{NoCompression: true})
	if len(on) >= len(off)/10 {
		t.Fatalf("compressed file %d bytes, uncompressed %d", len(on), len(off))
	}
}

func TestLZFRoundTrip(t *testing.T) {
	var c lzfCompressor
	inputs := [][]byte{
		bytes.Repeat([]byte("a"), 1000),
		[]byte("the quick brown fox jumps over the lazy dog; the quick brown fox jumps over the lazy dog"),
		bytes.Repeat([]byte("0123456789abcdef"), 3000), // matches beyond 8 KiB back are not used
	}
	rnd := make([]byte, 5000)
	x := uint32(1)
	for i := range rnd {
		x = x*1103515245 + 12345
		rnd[i] = byte(x >> 24)
	}
	inputs = append(inputs, rnd)
	for i, in := range inputs {
		out, ok := c.compress(nil, in, len(in)+len(in)/32+1)
		if !ok {
			t.Fatalf("input %d: not compressed within the limit", i)
		}
		back := make([]byte, len(in))
		if err := lzfDecompress(back, out); err != nil || !bytes.Equal(back, in) {
			t.Fatalf("input %d: round trip failed: %v", i, err)
		}
	}
}

func TestDumpRoundTrip(t *testing.T) {
	enc := NewEncoder(Options{})
	for _, k := range sampleKeys() {
		payload, err := enc.AppendDump(nil, &k.val)
		if err != nil {
			t.Fatal(err)
		}
		var v Value
		typ, err := DecodeDump(payload, &v)
		if err != nil {
			t.Fatalf("%s: %v", k.key, err)
		}
		if typ != k.typ || canonical(v) != canonical(k.val) {
			t.Errorf("%s: decoded %s %.100s", k.key, typeName(typ), canonical(v))
		}
		payload[len(payload)-1] ^= 1
		if _, err := DecodeDump(payload, &v); err != ErrDumpFooter {
			t.Errorf("%s: a wrong checksum gave %v", k.key, err)
		}
	}
}

func TestWriterRefusesBadValues(t *testing.T) {
	w := NewWriter(io.Discard, Options{})
	for _, v := range []Value{
		{Kind: KindList},
		{Kind: KindHash, Items: strs("f")},
		{Kind: KindZSet, Items: strs("m"), Scores: []float64{math.NaN()}},
		{Kind: KindZSet, Items: strs("m")},
		{Kind: KindSet, Items: strs("1", "1")},
	} {
		if err := w.WriteKey([]byte("k"), &v, KeyMeta{}); err == nil {
			t.Errorf("%+v: written", v)
		}
	}
}

func TestReaderErrorsCarryOffsets(t *testing.T) {
	file := writeSample(t, sampleKeys(), Options{})
	cases := map[string]struct {
		file   []byte
		target error
	}{
		"truncated":    {file[:len(file)/2], ErrTruncated},
		"no checksum":  {file[:len(file)-3], ErrTruncated},
		"bad checksum": {append(slices.Clone(file[:len(file)-1]), file[len(file)-1]^0xff), ErrChecksum},
		"version 11":   {append([]byte("REDIS0011"), file[9:]...), ErrUnsupported},
	}
	for name, c := range cases {
		r, err := NewReader(bytes.NewReader(c.file))
		for err == nil {
			_, err = r.Next()
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, c.target) {
			t.Errorf("%s: %v, want a CorruptError wrapping %v", name, err, c.target)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
	// A module value: refused with its type and offset.
	module := []byte("REDIS0010\xfe\x00\x07\x03key")
	r, _ := NewReader(bytes.NewReader(module))
	_, err := r.Next()
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "MODULE_2 (7)") || !strings.Contains(err.Error(), "at byte 11") {
		t.Errorf("module value: %v", err)
	}
	// A stream value cut short: truncated.
	stream := []byte("REDIS0010\xfe\x00\x0f\x03key")
	r, _ = NewReader(bytes.NewReader(stream))
	_, err = r.Next()
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated stream value: %v", err)
	}
}

// TestStreamValueRoundTrip writes a stream with groups as a DUMP payload
// and reads it back field for field.
func TestStreamValueRoundTrip(t *testing.T) {
	lp := []byte{7, 0, 0, 0, 0, 0, 0xFF}
	v := Value{Kind: KindStream, Stream: &Stream{
		Nodes:  []StreamNode{{Master: StreamID{1, 2}, LP: lp}, {Master: StreamID{1 << 40, 1<<64 - 1}, LP: lp}},
		Length: 5, LastID: StreamID{9, 9}, FirstID: StreamID{1, 2}, MaxDeletedID: StreamID{3, 4}, EntriesAdded: 70000,
		Groups: []StreamGroup{{Name: []byte("g"), LastID: StreamID{5, 0}, EntriesRead: 3,
			PEL:       []StreamPending{{ID: StreamID{1, 2}, DeliveryTime: 1700000000000, DeliveryCount: 2}},
			Consumers: []StreamConsumer{{Name: []byte("alice"), SeenTime: 1700000000001, PEL: []StreamID{{1, 2}}}}}},
	}}
	payload, err := NewEncoder(Options{}).AppendDump(nil, &v)
	if err != nil {
		t.Fatal(err)
	}
	var back Value
	typ, err := DecodeDump(payload, &back)
	if err != nil || typ != TypeStreamListpacks2 {
		t.Fatalf("DecodeDump: type %d, %v", typ, err)
	}
	if fmt.Sprint(*back.Stream) != fmt.Sprint(*v.Stream) {
		t.Errorf("read back %+v\nwrote %+v", *back.Stream, *v.Stream)
	}
	for i := 1; i < len(payload)-10; i++ {
		var cut Value
		if _, err := DecodeDump(append(payload[:i:i], payload[len(payload)-10:]...), &cut); err == nil {
			t.Errorf("payload cut at %d decoded", i)
		}
	}
}

func TestHugeLengthsDoNotAllocate(t *testing.T) {
	// A string claiming 4 GiB, a list claiming 2^62 elements, and an LZF
	// string claiming to expand to 4 GiB, each in a tiny file.
	for _, body := range []string{
		"\x00\x01k\x81\x00\x00\x00\x01\x00\x00\x00\x00abc",
		"\x12\x01k\x81\x40\x00\x00\x00\x00\x00\x00\x00\x02\x05hello",
		"\x00\x01k\xc3\x05\x80\xff\xff\xff\xff\x00abcde",
	} {
		file := append([]byte("REDIS0010"), body...)
		r, err := NewReader(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = r.Next()
		runtime.ReadMemStats(&after)
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("%q: %v", body, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
			t.Errorf("%q: allocated %d bytes", body, n)
		}
		t.Logf("%v", err)
	}
}
