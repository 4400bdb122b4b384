package rdb

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/internal/redistest"
)

// Encodings older Redis versions wrote and a 7.0 file may still hold after
// an upgrade (7.0 loads them and keeps them until the key is rewritten):
// this file builds them from the format description, checks that
// redis-server 7.0 loads them, and that Reader reads what redis serves.

// appendZiplist encodes elements as a ziplist, choosing the encodings as
// Redis's ziplistPush did: integers in the narrowest integer encoding.
func appendZiplist(dst []byte, elems [][]byte) []byte {
	zl := make([]byte, zipHeaderSize)
	prev, last := 0, zipHeaderSize
	for _, e := range elems {
		start := len(zl)
		last = start
		if prev < 254 {
			zl = append(zl, byte(prev))
		} else {
			zl = binary.LittleEndian.AppendUint32(append(zl, 0xFE), uint32(prev))
		}
		if v, ok := ascii.ParseInt(e); ok {
			switch {
			case v >= 0 && v <= 12:
				zl = append(zl, 0xF1+byte(v))
			case v >= math.MinInt8 && v <= math.MaxInt8:
				zl = append(zl, 0xFE, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				zl = binary.LittleEndian.AppendUint16(append(zl, 0xC0), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				zl = append(zl, 0xF0, byte(v), byte(v>>8), byte(v>>16))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				zl = binary.LittleEndian.AppendUint32(append(zl, 0xD0), uint32(v))
			default:
				zl = binary.LittleEndian.AppendUint64(append(zl, 0xE0), uint64(v))
			}
		} else {
			switch n := len(e); {
			case n < 64:
				zl = append(zl, byte(n))
			case n < 1<<14:
				zl = append(zl, byte(n>>8)|0x40, byte(n))
			default:
				zl = binary.BigEndian.AppendUint32(append(zl, 0x80), uint32(n))
			}
			zl = append(zl, e...)
		}
		prev = len(zl) - start
	}
	zl = append(zl, 0xFF)
	binary.LittleEndian.PutUint32(zl, uint32(len(zl)))
	binary.LittleEndian.PutUint32(zl[4:], uint32(last))
	binary.LittleEndian.PutUint16(zl[8:], uint16(min(len(elems), 65535)))
	return append(dst, zl...)
}

// appendZipmap encodes field, value pairs as a zipmap, with free bytes
// after some values as a zipmap that was updated in place has.
func appendZipmap(dst []byte, items [][]byte) []byte {
	zmLen := func(b []byte, n int) []byte {
		if n < 254 {
			return append(b, byte(n))
		}
		return binary.LittleEndian.AppendUint32(append(b, 254), uint32(n))
	}
	dst = append(dst, byte(min(len(items)/2, 254)))
	for i := 0; i < len(items); i += 2 {
		dst = append(zmLen(dst, len(items[i])), items[i]...)
		free := i % 4 / 2 * 3 // every other value has 3 free bytes
		dst = append(zmLen(dst, len(items[i+1])), byte(free))
		dst = append(dst, items[i+1]...)
		dst = append(dst, make([]byte, free)...)
	}
	return append(dst, 0xFF)
}

// legacyFile builds a version-10 file holding values in the old
// encodings, with an expiry in seconds (EXPIRETIME) on one key.
func legacyFile() ([]byte, map[string]Value) {
	e := newEncoder(Options{NoCompression: true})
	long := strings.Repeat("L", 300) // a prevlen that needs 5 bytes after it
	want := map[string]Value{}
	file := []byte("REDIS0010")
	file = append(file, opAux)
	file = e.appendString(file, []byte("redis-ver"))
	file = e.appendString(file, []byte("7.0.15"))
	file = append(file, opSelectDB, 0)
	add := func(key string, typ byte, body []byte, v Value) {
		file = append(file, typ)
		file = e.appendString(file, []byte(key))
		file = append(file, body...)
		want[key] = v
	}
	listElems := strs("a", "0", "12", "13", "-100", "1000", "-70000", "8000000", "2000000000", "-9000000000000", long, "tail")
	add("list:ziplist", TypeListZiplist, e.appendString(nil, appendZiplist(nil, listElems)), Value{Kind: KindList, Items: listElems})

	var ql []byte
	ql = appendLen(ql, 2)
	ql = e.appendString(ql, appendZiplist(nil, listElems[:5]))
	ql = e.appendString(ql, appendZiplist(nil, listElems[5:]))
	add("list:quicklist", TypeListQuicklist, ql, Value{Kind: KindList, Items: listElems})

	var plainList []byte
	plainList = appendLen(plainList, uint64(len(listElems)))
	for _, it := range listElems {
		plainList = e.appendString(plainList, it)
	}
	add("list:plain", TypeList, plainList, Value{Kind: KindList, Items: listElems})

	hashItems := strs("f1", "v1", "n", "42", "empty", "", "long", long, "f5", "-7")
	add("hash:ziplist", TypeHashZiplist, e.appendString(nil, appendZiplist(nil, hashItems)), Value{Kind: KindHash, Items: hashItems})
	add("hash:zipmap", TypeHashZipmap, e.appendString(nil, appendZipmap(nil, hashItems)), Value{Kind: KindHash, Items: hashItems})

	zsetItems := strs("m1", "-2.5", "m2", "0", "m3", "7", "m4", "3.25e+20", "m5", "inf")
	add("zset:ziplist", TypeZSetZiplist, e.appendString(nil, appendZiplist(nil, zsetItems)),
		Value{Kind: KindZSet, Items: strs("m1", "m2", "m3", "m4", "m5"), Scores: []float64{-2.5, 0, 7, 3.25e20, math.Inf(1)}})

	var textZSet []byte
	textZSet = appendLen(textZSet, 3)
	for _, p := range []struct {
		m, score string
	}{{"a", "1.5"}, {"b", "\xfe"}, {"c", "-3"}} {
		textZSet = e.appendString(textZSet, []byte(p.m))
		if p.score == "\xfe" {
			textZSet = append(textZSet, 254) // +inf
		} else {
			textZSet = append(append(textZSet, byte(len(p.score))), p.score...)
		}
	}
	add("zset:text", TypeZSet, textZSet, Value{Kind: KindZSet, Items: strs("a", "b", "c"), Scores: []float64{1.5, math.Inf(1), -3}})

	// An expiry in seconds, far in the future.
	file = append(file, opExpireTime)
	file = binary.LittleEndian.AppendUint32(file, 2000000000) // a signed 32-bit number of seconds: 2033
	add("str:expiring", TypeString, e.appendString(nil, []byte("v")), Value{Kind: KindString, Str: []byte("v")})

	file = append(file, opEOF)
	return binary.LittleEndian.AppendUint64(file, crcUpdate(0, file)), want
}

func TestReadLegacyEncodings(t *testing.T) {
	file, want := legacyFile()
	got, _ := readAll(t, file)
	for key, v := range want {
		g, ok := got["0/"+key]
		if !ok || canonical(g.val) != canonical(v) {
			t.Errorf("%s: read %.200s, want %.200s", key, canonical(g.val), canonical(v))
		}
	}
	if g := got["0/str:expiring"]; g.meta.ExpireAt != 2000000000000 {
		t.Errorf("EXPIRETIME in seconds read as %d ms", g.meta.ExpireAt)
	}
}

// TestRedisServerAgreesOnLegacyEncodings: redis-check-rdb accepts the
// hand-built file and redis-server 7.0 serves what Reader reads from it.
func TestRedisServerAgreesOnLegacyEncodings(t *testing.T) {
	redistest.Binary(t, "redis-server")
	file, want := legacyFile()
	dir := t.TempDir()
	path := filepath.Join(dir, "legacy.rdb")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	redistest.CheckRDB(t, path)
	addr := redistest.StartServer(t, "--dir", dir, "--dbfilename", "legacy.rdb")
	c := dialRedis(t, addr, 0)
	for key, v := range want {
		served, _, at := fetch(t, c, key)
		if canonical(served) != canonical(v) {
			t.Errorf("%s: redis serves %.200s, Reader reads %.200s", key, canonical(served), canonical(v))
		}
		if key == "str:expiring" && at != 2000000000000 {
			t.Errorf("%s: PEXPIRETIME %d", key, at)
		}
	}
	if n := c.DBSize(context.Background()).Val(); n != int64(len(want)) {
		t.Errorf("DBSIZE %d, want %d", n, len(want))
	}
}

// TestOldVersionHeaders: files of versions before 10 are read (version 4
// and older end without a checksum).
func TestOldVersionHeaders(t *testing.T) {
	e := newEncoder(Options{})
	for _, version := range []int{1, 4, 6, 9} {
		file := []byte(fmt.Sprintf("REDIS%04d", version))
		file = append(file, opSelectDB, 0, TypeString)
		file = e.appendString(file, []byte("k"))
		file = e.appendString(file, []byte("v"))
		file = append(file, opEOF)
		if version >= 5 {
			file = binary.LittleEndian.AppendUint64(file, crcUpdate(0, file))
		}
		got, _ := readAll(t, file)
		if v := got["0/k"].val; !bytes.Equal(v.Str, []byte("v")) {
			t.Errorf("version %d: read %+v", version, got)
		}
	}
}
