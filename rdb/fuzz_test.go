package rdb

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// smallSample is one small key of each type and encoding, so fuzz seeds
// stay short.
func smallSample() []testKey {
	var out []testKey
	for _, k := range sampleKeys() {
		if k.val.Len() <= 20 && len(k.val.Str) < 100 {
			out = append(out, k)
		}
	}
	return out
}

// FuzzReader feeds the reader arbitrary files: it must return records or a
// *CorruptError, never panic, and what it reads must write and read back
// the same.
func FuzzReader(f *testing.F) {
	legacy, _ := legacyFile()
	f.Add(legacy)
	if saved, err := os.ReadFile("testdata/redis-7.0.15.rdb"); err == nil {
		f.Add(saved)
	}
	f.Add(writeSample(f, smallSample(), Options{}))
	f.Add(writeSample(f, smallSample(), Options{NoCompression: true, NoChecksum: true}))
	f.Add(writeSample(f, []testKey{{key: "l", val: Value{Kind: KindList, Items: [][]byte{bytes.Repeat([]byte("ab"), 40), []byte("x")}}}}, Options{ListPlainThreshold: 50}))
	f.Fuzz(func(t *testing.T, file []byte) {
		r, err := NewReader(bytes.NewReader(file))
		if err != nil {
			checkCorrupt(t, err)
			return
		}
		var buf bytes.Buffer
		w := NewWriter(&buf, Options{})
		var keys []string
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				checkCorrupt(t, err)
				return
			}
			if rec.Kind == RecordKey {
				if err := w.WriteKey(rec.Key, &rec.Value, KeyMeta{}); err == nil {
					keys = append(keys, canonical(rec.Value))
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			rec, err := again.Next()
			if err == io.EOF {
				if i != len(keys) {
					t.Fatalf("wrote %d keys, read back %d", len(keys), i)
				}
				return
			}
			if err != nil {
				t.Fatalf("reading back what was written: %v", err)
			}
			if got := canonical(rec.Value); got != keys[i] {
				t.Fatalf("key %d: wrote %.100s, read back %.100s", i, keys[i], got)
			}
		}
	})
}

func checkCorrupt(t *testing.T, err error) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *CorruptError", err, err)
	}
}

// FuzzDecodeDump feeds DecodeDump payloads with a valid footer around
// arbitrary values.
func FuzzDecodeDump(f *testing.F) {
	enc := NewEncoder(Options{})
	for _, k := range smallSample() {
		p, _ := enc.AppendDump(nil, &k.val)
		f.Add(p[:len(p)-10])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		payload := append(bytes.Clone(body), Version, 0)
		payload = append(payload, make([]byte, 8)...)
		sum := crcUpdate(0, payload[:len(payload)-8])
		for i := range 8 {
			payload[len(payload)-8+i] = byte(sum >> (8 * i))
		}
		var v Value
		if _, err := DecodeDump(payload, &v); err != nil {
			checkCorrupt(t, err)
		}
	})
}
