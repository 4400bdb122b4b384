package rdb

import (
	"bytes"
	"io"
	"strconv"
	"testing"
)

// BenchmarkWriteKeys writes the sample data set: every type and encoding.
func BenchmarkWriteKeys(b *testing.B) {
	keys := sampleKeys()
	w := NewWriter(io.Discard, Options{})
	b.ReportAllocs()
	for b.Loop() {
		for i := range keys {
			if err := w.WriteKey([]byte(keys[i].key), &keys[i].val, keys[i].meta); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWriteSmallStrings is the common case of a snapshot: short
// string keys and values.
func BenchmarkWriteSmallStrings(b *testing.B) {
	w := NewWriter(io.Discard, Options{})
	v := Value{Kind: KindString, Str: []byte("value-0123456789")}
	key := []byte("key:000000000001")
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteKey(key, &v, KeyMeta{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFile reads a file of 20000 small strings and hashes plus
// the sample data set: what loading a snapshot costs per byte.
func BenchmarkReadFile(b *testing.B) {
	keys := sampleKeys()
	for i := range 10000 {
		keys = append(keys,
			testKey{key: "str:" + strconv.Itoa(i), val: Value{Kind: KindString, Str: []byte("value-" + strconv.Itoa(i))}},
			testKey{key: "hash:" + strconv.Itoa(i), val: Value{Kind: KindHash, Items: pairs(5, 0)}})
	}
	file := writeSample(b, keys, Options{})
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(file))
		if err != nil {
			b.Fatal(err)
		}
		for err == nil {
			_, err = r.Next()
		}
		if err != io.EOF {
			b.Fatal(err)
		}
	}
}
