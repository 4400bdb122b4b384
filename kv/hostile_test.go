package kv_test

import (
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestSetRangeHugeOffsetOverSocket: SETRANGE with an offset near MaxInt64 used to
// panic the whole server (the store's length check wrapped). It must answer Redis's
// error and keep serving.
func TestSetRangeHugeOffsetOverSocket(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	r := dialRaw(t, srv.addr)
	const tooLong = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
	if got := r.Do("SET", "exists", "abc"); got != "+OK\r\n" {
		t.Fatalf("SET = %q", got)
	}
	for _, key := range []string{"missing", "exists"} {
		for _, off := range []string{"9223372036854775807", "9223372036854775806", "536870912"} {
			if got := r.Do("SETRANGE", key, off, "x"); got != tooLong {
				t.Errorf("SETRANGE %s %s x = %q, want %q", key, off, got, tooLong)
			}
		}
	}
	if got := r.Do("GET", "exists"); got != "$3\r\nabc\r\n" {
		t.Errorf("GET exists = %q after refused SETRANGEs", got)
	}
	if got := dialRaw(t, srv.addr).Do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING on a new connection = %q", got)
	}
}
