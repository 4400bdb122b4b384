package kv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/resp"
)

// TestGoRedisBitmaps drives the bitmap commands through go-redis in both
// protocols: a daily-active-users bitmap, flags read back with BITFIELD.
func TestGoRedisBitmaps(t *testing.T) {
	ctx := context.Background()
	eachProtocolConn(t, func(rdb *redis.Client, proto int) {
		for _, user := range []int64{1, 7, 8, 100, 1000, 99999} {
			if old := rdb.SetBit(ctx, "dau:mon", user, 1).Val(); old != 0 {
				t.Fatalf("RESP%d SETBIT %d = %d", proto, user, old)
			}
		}
		rdb.SetBit(ctx, "dau:tue", 7, 1)
		rdb.SetBit(ctx, "dau:tue", 5000, 1)
		if n := rdb.BitCount(ctx, "dau:mon", nil).Val(); n != 6 {
			t.Fatalf("RESP%d BITCOUNT = %d", proto, n)
		}
		if n := rdb.BitCount(ctx, "dau:mon", &redis.BitCount{Start: 0, End: 127, Unit: "BIT"}).Val(); n != 4 {
			t.Fatalf("RESP%d BITCOUNT 0 127 BIT = %d", proto, n)
		}
		if n := rdb.BitOpAnd(ctx, "both", "dau:mon", "dau:tue").Val(); n != 99999/8+1 {
			t.Fatalf("RESP%d BITOP AND = %d", proto, n)
		}
		if n := rdb.BitCount(ctx, "both", nil).Val(); n != 1 {
			t.Fatalf("RESP%d BITCOUNT of the AND = %d", proto, n)
		}
		if p := rdb.BitPos(ctx, "both", 1).Val(); p != 7 {
			t.Fatalf("RESP%d BITPOS 1 = %d", proto, p)
		}
		if p := rdb.BitPosSpan(ctx, "dau:mon", 1, 9, -1, "bit").Val(); p != 100 {
			t.Fatalf("RESP%d BITPOS 1 9 -1 BIT = %d", proto, p)
		}
		if rdb.GetBit(ctx, "dau:mon", 99999).Val() != 1 {
			t.Fatalf("RESP%d GETBIT 99999 not set", proto)
		}
		got := rdb.BitField(ctx, "counters", "SET", "u8", "#0", 250, "INCRBY", "u8", "#0", 10,
			"OVERFLOW", "SAT", "INCRBY", "i16", "#1", -40000, "OVERFLOW", "FAIL", "INCRBY", "u8", "#0", 1000).Val()
		if fmt.Sprint(got) != "[0 4 -32768 0]" { // the FAIL's null reads as 0 in go-redis's []int64
			t.Fatalf("RESP%d BITFIELD = %v", proto, got)
		}
		if v := rdb.BitFieldRO(ctx, "counters", "u8", "0", "i16", "16").Val(); fmt.Sprint(v) != "[4 -32768]" {
			t.Fatalf("RESP%d BITFIELD_RO = %v", proto, v)
		}
		if err := rdb.SetBit(ctx, "dau:mon", 1<<32, 1).Err(); err == nil || !strings.Contains(err.Error(), "bit offset is not an integer or out of range") {
			t.Fatalf("RESP%d SETBIT 2^32: %v", proto, err)
		}
	})
}

// TestBitOffsetBoundIsProtoMaxBulkLen: an offset whose byte reaches
// proto-max-bulk-len is refused before the key is looked at, so nothing is
// allocated for it; the last bit below the bound builds a string that
// long, as in Redis, and a BITFIELD field may run 63 bits past it. (The
// bound is 1 MiB here so the test builds 1 MiB, not Redis's 512 MiB.)
func TestBitOffsetBoundIsProtoMaxBulkLen(t *testing.T) {
	limits := resp.DefaultLimits
	limits.MaxBulkLen = 1 << 20
	srv := startShoal(t, kv.Options{Limits: limits}, eventloop.Options{})
	c := dialRaw(t, srv.addr)
	for _, off := range []string{"8388608", "4294967296", "9223372036854775807", "-1"} {
		if r := c.Do("SETBIT", "k", off, "1"); r != "-ERR bit offset is not an integer or out of range\r\n" {
			t.Fatalf("SETBIT k %s: %q", off, r)
		}
		if r := c.Do("BITFIELD", "k", "SET", "u8", off, "1"); r != "-ERR bit offset is not an integer or out of range\r\n" {
			t.Fatalf("BITFIELD SET at %s: %q", off, r)
		}
	}
	if r := c.Do("BITFIELD", "k", "SET", "u8", "#1048576", "1"); r != "-ERR bit offset is not an integer or out of range\r\n" {
		t.Fatalf("BITFIELD SET at #1048576: %q", r)
	}
	if r := c.Do("EXISTS", "k"); r != ":0\r\n" {
		t.Fatalf("a refused SETBIT made the key: %q", r)
	}
	if r := c.Do("SETBIT", "k", "8388607", "1"); r != ":0\r\n" {
		t.Fatalf("SETBIT at the last bit: %q", r)
	}
	if r := c.Do("STRLEN", "k"); r != ":1048576\r\n" {
		t.Fatalf("STRLEN after SETBIT at the last bit: %q", r)
	}
	if r := c.Do("BITCOUNT", "k"); r != ":1\r\n" {
		t.Fatalf("BITCOUNT: %q", r)
	}
	if r := c.Do("BITFIELD", "k", "SET", "i64", "8388607", "-1"); r != "*1\r\n:-9223372036854775808\r\n" {
		t.Fatalf("BITFIELD i64 across the end: %q", r)
	}
	if r := c.Do("STRLEN", "k"); r != ":1048584\r\n" {
		t.Fatalf("STRLEN after a field across the end: %q", r)
	}
	if r := c.Do("BITCOUNT", "k"); r != ":64\r\n" {
		t.Fatalf("BITCOUNT after the field: %q", r)
	}
}

// bitmapKeyspace reads keys as strings with their expiry.
func bitmapKeyspace(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	c := dialRaw(t, addr)
	m := map[string]string{}
	for _, k := range keys {
		m[k] = c.Do("TYPE", k) + c.Do("GET", k) + c.Do("PEXPIRETIME", k)
	}
	return m
}

// TestAOFBitmapReplay: concurrent bit writes of every kind, rewrites, and
// writes to keys that expired in between; a server that loads the file has
// the same strings.
func TestAOFBitmapReplay(t *testing.T) {
	s := startAOF(t, aof.FsyncEverySec)
	keys := []string{"b0", "b1", "b2", "and", "or", "not", "f0", "f1", "exp", "exp2", "gone"}
	writeConcurrently(t, s.addr, 4, 120, func(conn, i int) [][]string {
		b := fmt.Sprintf("b%d", (conn+i)%3)
		f := fmt.Sprintf("f%d", (conn+i)%2)
		return [][]string{
			{"SETBIT", b, fmt.Sprint((i * 37) % 700), fmt.Sprint(i % 2)},
			{"SETBIT", b, fmt.Sprint(conn*1000 + i), "1"},
			{"BITOP", "AND", "and", "b0", "b1"},
			{"BITOP", "OR", "or", "b0", "b1", "b2"},
			{"BITOP", "NOT", "not", b},
			{"BITFIELD", f, "INCRBY", "u7", fmt.Sprint(i % 50), "3", "OVERFLOW", "SAT", "INCRBY", "i12", "#3", "-100"},
			{"BITFIELD", f, "OVERFLOW", "FAIL", "INCRBY", "u2", "#7", "1", "SET", "i8", fmt.Sprint(200 + conn), fmt.Sprint(i)},
		}
	})
	c := dialRaw(t, s.addr)
	s.rewriteAndWait(c)
	doAll(t, c, [][]string{
		{"SETBIT", "exp", "3", "1"}, {"PEXPIRE", "exp", "30"},
		{"BITFIELD", "exp2", "SET", "u8", "0", "200"}, {"PEXPIRE", "exp2", "30"},
		{"SET", "gone", "x"},
	})
	time.Sleep(80 * time.Millisecond)
	doAll(t, c, [][]string{
		{"SETBIT", "exp", "20", "1"}, {"BITFIELD", "exp2", "INCRBY", "u8", "8", "1"},
		{"BITOP", "AND", "gone", "exp", "nokey"},
	})
	before := checkReplay(t, s, keys, bitmapKeyspace)
	if before["exp"] != "+string\r\n$3\r\n\x00\x00\b\r\n:-1\r\n" {
		t.Errorf("exp before the restart: %q", before["exp"])
	}
	if before["exp2"] != "+string\r\n$2\r\n\x00\x01\r\n:-1\r\n" {
		t.Errorf("exp2 before the restart: %q", before["exp2"])
	}
	if !strings.HasPrefix(before["gone"], "+string\r\n$3\r\n") {
		t.Errorf("gone before the restart: %q", before["gone"])
	}
}
