package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

func TestCommandsAgainstRealServers(t *testing.T) {
	ctx := context.Background()
	for _, srv := range servers(t) {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/resp%d", srv.name, proto), func(t *testing.T) {
				c := newClient(t, Options{Addr: srv.addr, Protocol: proto, Conns: 2})
				k := fmt.Sprintf("basic:%d", proto)
				if err := c.Set(ctx, k, []byte("hello")); err != nil {
					t.Fatal(err)
				}
				v, err := c.Get(ctx, k)
				if err != nil || string(v) != "hello" {
					t.Fatalf("Get = %q, %v; want hello", v, err)
				}
				dst := []byte("prefix-")
				v, err = c.GetInto(ctx, dst, k)
				if err != nil || string(v) != "prefix-hello" {
					t.Fatalf("GetInto = %q, %v; want prefix-hello", v, err)
				}
				if _, err := c.Get(ctx, k+":missing"); !errors.Is(err, ErrNil) {
					t.Fatalf("Get of a missing key: err %v, want ErrNil", err)
				}
				if v, err := c.GetInto(ctx, dst, k+":missing"); !errors.Is(err, ErrNil) || string(v) != "prefix-" {
					t.Fatalf("GetInto of a missing key = %q, %v; want dst unchanged and ErrNil", v, err)
				}
				for want := int64(1); want <= 3; want++ {
					n, err := c.Incr(ctx, k+":n")
					if err != nil || n != want {
						t.Fatalf("Incr = %d, %v; want %d", n, err, want)
					}
				}
				// A server error reply is an Error and leaves the connection usable.
				_, err = c.Incr(ctx, k)
				var se Error
				if !errors.As(err, &se) || !strings.Contains(string(se), "not an integer") {
					t.Fatalf("Incr of a string: err %v (%T), want Error 'not an integer'", err, err)
				}
				r, err := c.Do(ctx, "EXPIRE", k, 10)
				if err != nil || r != int64(1) {
					t.Fatalf("EXPIRE = %#v, %v; want int64 1", r, err)
				}
				r, err = c.Do(ctx, "MGET", k, k+":missing", []byte(k+":n"))
				want := []any{"hello", nil, "3"}
				if err != nil || fmt.Sprint(r) != fmt.Sprint(want) {
					t.Fatalf("MGET = %#v, %v; want %#v", r, err, want)
				}
				if r, err := c.Do(ctx, "PING"); err != nil || r != "PONG" {
					t.Fatalf("PING = %#v, %v", r, err)
				}
				if _, err := c.Do(ctx, "GET", k+":missing"); !errors.Is(err, ErrNil) {
					t.Fatalf("Do GET of a missing key: err %v, want ErrNil", err)
				}
				_, err = c.Do(ctx, "NOSUCHCOMMAND", 1)
				if !errors.As(err, &se) || !strings.HasPrefix(string(se), "ERR unknown command") {
					t.Fatalf("unknown command: err %v, want Error 'ERR unknown command...'", err)
				}
				if r, err := c.Do(ctx, "INCRBYFLOAT", k+":f", 1.5); err != nil || r != "1.5" {
					t.Fatalf("INCRBYFLOAT = %#v, %v; want \"1.5\"", r, err)
				}
				if v, err := c.Get(ctx, k); err != nil || string(v) != "hello" {
					t.Fatalf("after the errors Get = %q, %v", v, err)
				}
			})
		}
	}
}

func TestRESP3TypedReplies(t *testing.T) {
	ctx := context.Background()
	addr := servers(t)[1].addr // redis: sorted sets and CONFIG maps
	c := newClient(t, Options{Addr: addr, Protocol: 3})
	if _, err := c.Do(ctx, "ZADD", "z", 1.5, "a"); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Do(ctx, "ZSCORE", "z", "a"); err != nil || r != 1.5 {
		t.Fatalf("RESP3 ZSCORE = %#v, %v; want float64 1.5", r, err)
	}
	r, err := c.Do(ctx, "CONFIG", "GET", "maxmemory-policy")
	m, ok := r.(map[any]any)
	if err != nil || !ok || m["maxmemory-policy"] != "noeviction" {
		t.Fatalf("RESP3 CONFIG GET = %#v, %v; want map with noeviction", r, err)
	}
	// The same commands in RESP2: a bulk string and a flat array.
	c2 := newClient(t, Options{Addr: addr, Protocol: 2})
	if r, err := c2.Do(ctx, "ZSCORE", "z", "a"); err != nil || r != "1.5" {
		t.Fatalf("RESP2 ZSCORE = %#v, %v; want \"1.5\"", r, err)
	}
	if r, err := c2.Do(ctx, "CONFIG", "GET", "maxmemory-policy"); err != nil || fmt.Sprint(r) != "[maxmemory-policy noeviction]" {
		t.Fatalf("RESP2 CONFIG GET = %#v, %v", r, err)
	}
}

func TestDecodeEveryReplyType(t *testing.T) {
	big1, _ := new(big.Int).SetString("3492890328409238509324850943850943825024385", 10)
	cases := []struct {
		raw  string
		want any
		err  error
	}{
		{"+OK\r\n", "OK", nil},
		{"$3\r\nabc\r\n", "abc", nil},
		{":-42\r\n", int64(-42), nil},
		{",3.25\r\n", 3.25, nil},
		{",-inf\r\n", "-Inf", nil},
		{"#t\r\n", true, nil},
		{"(3492890328409238509324850943850943825024385\r\n", big1, nil},
		{"=7\r\ntxt:abc\r\n", "abc", nil},
		{"*3\r\n$1\r\na\r\n_\r\n-ERR inner\r\n", []any{"a", nil, Error("ERR inner")}, nil},
		{"~1\r\n:1\r\n", []any{int64(1)}, nil},
		{"%1\r\n+k\r\n*1\r\n:2\r\n", map[any]any{"k": []any{int64(2)}}, nil},
		{"|1\r\n+ttl\r\n:3\r\n:7\r\n", int64(7), nil},
		{"$-1\r\n", nil, ErrNil},
		{"_\r\n", nil, ErrNil},
		{"-WRONGTYPE bad\r\n", nil, Error("WRONGTYPE bad")},
		{"!5\r\nERR x\r\n", nil, Error("ERR x")},
	}
	for _, tc := range cases {
		got, err := decodeTop([]byte(tc.raw))
		if tc.err != nil {
			if !errors.Is(err, tc.err) && err != tc.err {
				t.Errorf("%q: err %v, want %v", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.raw, err)
			continue
		}
		if f, ok := got.(float64); ok && tc.want == "-Inf" {
			if fmt.Sprint(f) != "-Inf" {
				t.Errorf("%q = %v", tc.raw, f)
			}
			continue
		}
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
			if b, ok := got.(*big.Int); !ok || b.Cmp(big1) != 0 {
				t.Errorf("%q = %#v, want %#v", tc.raw, got, tc.want)
			}
		}
	}
	if _, err := decodeTop([]byte("%1\r\n*1\r\n:1\r\n:2\r\n")); err == nil || !strings.Contains(err.Error(), "map key") {
		t.Errorf("aggregate map key: err %v, want a clear error", err)
	}
	deep := strings.Repeat("*1\r\n", maxDepth+2) + ":1\r\n"
	if _, err := decodeTop([]byte(deep)); err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("deep nesting: err %v, want a depth error", err)
	}
}

func TestDoRefusesWhatBreaksSharedConnections(t *testing.T) {
	c := newClient(t, Options{Addr: servers(t)[0].addr})
	ctx := context.Background()
	for _, args := range [][]any{{"subscribe", "ch"}, {"MULTI"}, {"select", 1}, {"HELLO", 3}, {"client", "reply", "off"}, {"MONITOR"}} {
		_, err := c.Do(ctx, args...)
		if err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("Do(%v): err %v, want 'not supported'", args, err)
		}
	}
	if _, err := c.Do(ctx); err == nil || !strings.Contains(err.Error(), "command name") {
		t.Errorf("Do(): err %v", err)
	}
	if _, err := c.Do(ctx, "SET", "k", struct{}{}); err == nil || !strings.Contains(err.Error(), "argument 2 has unsupported type struct {}") {
		t.Errorf("Do with a struct: err %v", err)
	}
	if _, err := c.Do(ctx, "EXPIRE", "k", time.Second); err == nil || !strings.Contains(err.Error(), "time.Duration") {
		t.Errorf("Do with a Duration: err %v", err)
	}
	// Still in step after the refusals.
	if r, err := c.Do(ctx, "ECHO", "x"); err != nil || r != "x" {
		t.Fatalf("ECHO = %#v, %v", r, err)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{}, "Addr is empty"},
		{Options{Addr: "x:1", Protocol: 4}, "Protocol 4 is not 2 or 3"},
		{Options{Addr: "x:1", Conns: -1}, "Conns -1 is outside 0..1024"},
		{Options{Addr: "x:1", Conns: 5000}, "Conns 5000 is outside 0..1024"},
		{Options{Addr: "x:1", MaxBatchBytes: -5}, "MaxBatchBytes -5 is negative"},
		{Options{Addr: "x:1", DB: -1}, "DB -1 is negative"},
		{Options{Addr: "x:1", DialTimeout: -time.Second}, "DialTimeout -1s is negative"},
	} {
		_, err := New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): err %v, want %q", tc.o, err, tc.want)
		}
	}
}

func TestNewReportsHandshakeAndDialFailures(t *testing.T) {
	srv := servers(t)
	// Nothing listening.
	ln := startScripted(t, func(int64, []string) []byte { return nil })
	dead := ln.Addr()
	ln.Close()
	if _, err := New(Options{Addr: dead, DialTimeout: time.Second}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("New to a closed port: err %v, want connection refused", err)
	}
	for _, s := range srv {
		// No password while one is required is NOAUTH; a wrong one is refused.
		var addr string
		if s.name == "redis" {
			addr = startRedisWithPassword(t, "sesame")
		} else {
			addr = startShoalWithPassword(t, "sesame")
		}
		_, err := New(Options{Addr: addr, Conns: 1})
		var se Error
		if !errors.As(err, &se) || !strings.HasPrefix(string(se), "NOAUTH") {
			t.Errorf("%s without a password: err %v, want NOAUTH", s.name, err)
		}
		for _, proto := range []int{2, 3} {
			_, err = New(Options{Addr: addr, Conns: 1, Password: "wrong", Protocol: proto})
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "refused by "+addr) {
				t.Errorf("%s RESP%d wrong password: err %v, want refused Error", s.name, proto, err)
			}
			c, err := New(Options{Addr: addr, Conns: 1, Password: "sesame", Protocol: proto})
			if err != nil {
				t.Fatalf("%s RESP%d right password: %v", s.name, proto, err)
			}
			if r, err := c.Do(context.Background(), "PING"); err != nil || r != "PONG" {
				t.Errorf("%s RESP%d PING after AUTH = %#v, %v", s.name, proto, r, err)
			}
			c.Close()
		}
	}
}

func TestManyGoroutinesGetTheirOwnReplies(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := newClient(t, Options{Addr: srv.addr})
			const goroutines, rounds = 2000, 5
			ctx := context.Background()
			wait := inGoroutines(goroutines, func(g int) error {
				k := key("own", g)
				var buf []byte
				for r := 1; r <= rounds; r++ {
					val := fmt.Sprintf("g%d-r%d", g, r)
					if err := c.Set(ctx, k, []byte(val)); err != nil {
						return err
					}
					v, err := c.Get(ctx, k)
					if err != nil || string(v) != val {
						return fmt.Errorf("goroutine %d: Get = %q, %v; want %q", g, v, err, val)
					}
					buf, err = c.GetInto(ctx, buf[:0], k)
					if err != nil || string(buf) != val {
						return fmt.Errorf("goroutine %d: GetInto = %q, %v; want %q", g, buf, err, val)
					}
					n, err := c.Incr(ctx, k+":n")
					if err != nil || n != int64(r) {
						return fmt.Errorf("goroutine %d: Incr = %d, %v; want %d", g, n, err, r)
					}
				}
				return nil
			})
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestGetValuesMayBeKept(t *testing.T) {
	c := newClient(t, Options{Addr: servers(t)[0].addr, Conns: 1})
	ctx := context.Background()
	const n = 3000 // several 16 KiB blocks of values
	kept := make([][]byte, n)
	for i := range kept {
		val := []byte(fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%50)))
		if err := c.Set(ctx, key("keep", i), val); err != nil {
			t.Fatal(err)
		}
		v, err := c.Get(ctx, key("keep", i))
		if err != nil {
			t.Fatal(err)
		}
		kept[i] = v
		// Appending to one value must not spill into its neighbour.
		_ = append(v, "garbage"...)
	}
	big := bytes.Repeat([]byte("B"), 10000)
	if err := c.Set(ctx, "keep:big", big); err != nil {
		t.Fatal(err)
	}
	bv, err := c.Get(ctx, "keep:big")
	if err != nil || !bytes.Equal(bv, big) {
		t.Fatalf("big value: %d bytes, %v", len(bv), err)
	}
	for i, v := range kept {
		want := fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%50))
		if string(v) != want {
			t.Fatalf("kept value %d became %q, want %q", i, v, want)
		}
	}
}

func TestLargeValuesAndSmallBatches(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := newClient(t, Options{Addr: srv.addr, Conns: 1, MaxBatchBytes: 1024})
			ctx := context.Background()
			wait := inGoroutines(16, func(g int) error {
				size := 1 << (10 + 2*g) // 1 KiB .. 1 MiB
				if g >= 6 {
					size = 100 + g // and many small ones around them
				}
				val := bytes.Repeat([]byte{byte('a' + g)}, size)
				for r := 0; r < 3; r++ {
					if err := c.Set(ctx, key("large", g), val); err != nil {
						return err
					}
					v, err := c.Get(ctx, key("large", g))
					if err != nil || !bytes.Equal(v, val) {
						return fmt.Errorf("goroutine %d: %d bytes back of %d, %v", g, len(v), len(val), err)
					}
				}
				return nil
			})
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAppendArgsEncodesEveryNumberType(t *testing.T) {
	for _, tc := range []struct {
		arg  any
		want string
	}{
		{int(-7), "-7"}, {int8(math.MinInt8), "-128"}, {int16(math.MaxInt16), "32767"},
		{int32(math.MinInt32), "-2147483648"}, {int64(math.MaxInt64), "9223372036854775807"},
		{uint(7), "7"}, {uint8(math.MaxUint8), "255"}, {uint16(math.MaxUint16), "65535"},
		{uint32(math.MaxUint32), "4294967295"}, {uint64(math.MaxUint64), "18446744073709551615"},
		{float32(1.5), "1.5"}, {float64(-0.25), "-0.25"}, {true, "1"}, {false, "0"},
		{"s", "s"}, {[]byte("b"), "b"},
	} {
		got, err := appendArgs(nil, []any{"SET", "k", tc.arg})
		if want := resp.AppendCommand(nil, "SET", "k", tc.want); err != nil || string(got) != string(want) {
			t.Errorf("%T %v: %q, %v; want %q", tc.arg, tc.arg, got, err, want)
		}
	}
}

func TestAppendArgsOfIntegersDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	args := []any{"SETRANGE", int64(1) << 40, uint16(9), -3}
	if n := testing.AllocsPerRun(1000, func() { _, _ = appendArgs(buf[:0], args) }); n != 0 {
		t.Errorf("%v allocations per call, want 0", n)
	}
}
