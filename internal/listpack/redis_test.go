package listpack

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/redistest"
)

// rdbLen reads an RDB length (6-bit, 14-bit or 32-bit; not the special
// encodings, which these payloads do not use) and returns it with the rest.
func rdbLen(t *testing.T, b []byte) (int, []byte) {
	t.Helper()
	switch c := b[0]; {
	case c>>6 == 0:
		return int(c & 0x3F), b[1:]
	case c>>6 == 1:
		return int(c&0x3F)<<8 | int(b[1]), b[2:]
	case c == 0x80:
		return int(binary.BigEndian.Uint32(b[1:])), b[5:]
	}
	t.Fatalf("DUMP payload: a length encoded as %#x, want a plain one", b[0])
	return 0, nil
}

// rdbString reads an uncompressed RDB string.
func rdbString(t *testing.T, b []byte) ([]byte, []byte) {
	t.Helper()
	n, b := rdbLen(t, b)
	if n > len(b) {
		t.Fatalf("DUMP payload: a %d-byte string in %d bytes", n, len(b))
	}
	return b[:n], b[n:]
}

// dumpedListpack returns the listpack in a DUMP payload of a hash in a
// listpack (RDB type 16) or of a one-node stream (type 19, the node's
// master ID and then its listpack).
func dumpedListpack(t *testing.T, payload []byte) []byte {
	t.Helper()
	var lp []byte
	switch payload[0] {
	case 16:
		lp, _ = rdbString(t, payload[1:])
	case 19:
		nodes, b := rdbLen(t, payload[1:])
		if nodes != 1 {
			t.Fatalf("DUMP payload: a stream of %d nodes, want 1", nodes)
		}
		_, b = rdbString(t, b)
		lp, _ = rdbString(t, b)
	default:
		t.Fatalf("DUMP payload of type %d, want a listpack hash (16) or a stream (19)", payload[0])
	}
	return lp
}

// TestSameBytesAsRedisServer compares listpacks built here with the ones
// redis-server 7.0 writes for the same hashes, read back from DUMP: every
// encoding's edges, backlens of one to four bytes, and a count past 65535.
func TestSameBytesAsRedisServer(t *testing.T) {
	addr := redistest.StartServer(t, "--rdbcompression", "no",
		"--hash-max-listpack-entries", "100000", "--hash-max-listpack-value", "4000000",
		"--stream-node-max-entries", "0", "--stream-node-max-bytes", "0")
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()

	var small [][]byte
	for _, v := range []int64{0, 127, 128, -1, 4095, -4096, 4096, -4097, 32767, -32768, 32768, -32769,
		1<<23 - 1, -1 << 23, 1 << 23, 1<<31 - 1, -1 << 31, 1 << 31, 1<<63 - 1, -1 << 63} {
		small = append(small, []byte(strconv.FormatInt(v, 10)))
	}
	for _, s := range []string{"", "-0", "01", "+1", "9223372036854775808", "1.5"} {
		small = append(small, []byte(s))
	}
	for _, n := range []int{63, 64, 125, 126, 4095, 4096, 16377, 16378, 2097146} {
		small = append(small, bytes.Repeat([]byte{'s'}, n))
	}
	if len(small)%2 != 0 {
		small = append(small, []byte("pad"))
	}
	// A one-node stream of 14000 entries holds 70000 elements, so the
	// header's count is CountUnknown (a hash that size would take
	// redis-server minutes to build: each HSET scans the listpack). The
	// node as streamAppendItem lays it out: the master entry (count,
	// deleted, fields, terminator), then per entry its flags (SAMEFIELDS),
	// ID deltas, value and element count.
	const entries = 14000
	pipe := c.Pipeline()
	stream := AppendHeader(nil)
	for _, v := range []int64{entries, 0, 1} {
		stream = AppendInt(stream, v)
	}
	stream = AppendString(stream, []byte("f"))
	stream = AppendInt(stream, 0)
	for i := 0; i < entries; i++ {
		val := []byte(strconv.Itoa(i*37 - 200000))
		if i%3 == 0 {
			val = []byte(fmt.Sprint("v", i))
		}
		pipe.Do(ctx, "XADD", "stream", fmt.Sprint("1-", i+1), "f", val)
		for _, v := range []int64{2, 0, int64(i)} {
			stream = AppendInt(stream, v)
		}
		stream = AppendString(stream, val)
		stream = AppendInt(stream, 4)
	}
	stream = Finish(stream, 5+5*entries)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("XADD: %v", err)
	}
	if Count(stream) != CountUnknown {
		t.Fatalf("the stream node's count is %d, want CountUnknown", Count(stream))
	}
	theirs, ours := dumpedListpack(t, []byte(c.Dump(ctx, "stream").Val())), stream
	if !bytes.Equal(theirs, ours) {
		t.Errorf("stream node: listpacks of %d (redis-server) and %d bytes differ first at byte %d",
			len(theirs), len(ours), firstDifference(theirs, ours))
	}

	args := []any{"HSET", "hash"}
	for _, e := range small {
		args = append(args, e)
	}
	if err := c.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("HSET: %v", err)
	}
	if enc := c.ObjectEncoding(ctx, "hash").Val(); enc != "listpack" {
		t.Fatalf("redis-server encoded the hash as %q", enc)
	}
	theirs, ours = dumpedListpack(t, []byte(c.Dump(ctx, "hash").Val())), build(small...)
	if !bytes.Equal(theirs, ours) {
		t.Errorf("hash: listpacks of %d (redis-server) and %d bytes differ first at byte %d",
			len(theirs), len(ours), firstDifference(theirs, ours))
	}
	if n, err := Validate(theirs); err != nil || n != len(small) {
		t.Errorf("redis-server's listpack validates as %d entries, %v; want %d", n, err, len(small))
	}
}

func firstDifference(a, b []byte) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return i
}
