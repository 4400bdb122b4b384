package resp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/tcptest"
)

// replyServer is a tiny RESP server on loopback that answers each command
// with a canned reply encoded by this package. It parses what go-redis sends
// with Parser, so it also checks the parser against a real client's writer.
type replyServer struct {
	*tcptest.Server
	replies map[string][]byte
}

func startReplyServer(t *testing.T, replies map[string][]byte) *replyServer {
	t.Helper()
	s := &replyServer{replies: replies}
	s.Server = tcptest.Serve(t, func(c net.Conn, _ int64) { s.serve(t, c) })
	return s
}

func (s *replyServer) serve(t *testing.T, c net.Conn) {
	var p Parser
	var in, out []byte
	chunk := make([]byte, 4096)
	for {
		k, err := c.Read(chunk)
		if err != nil {
			return
		}
		in = append(in, chunk[:k]...)
		for {
			args, n, err := p.Parse(in)
			if errors.Is(err, ErrIncomplete) {
				break
			}
			if err != nil {
				t.Errorf("server: parsing %q: %v", in, err)
				return
			}
			in = in[n:]
			if len(args) > 0 {
				out = s.answer(out, args)
			}
		}
		if _, err := c.Write(out); err != nil {
			return
		}
		out = out[:0]
	}
}

func (s *replyServer) answer(out []byte, args [][]byte) []byte {
	name := strings.ToUpper(string(args[0]))
	switch {
	case name == "HELLO" && len(args) > 1 && string(args[1]) == "3":
		out = AppendMapHeader(out, 2)
		out = AppendBulkString(out, "server")
		out = AppendBulkString(out, "shoal-test")
		out = AppendBulkString(out, "proto")
		return AppendInt(out, 3)
	case name == "ECHOARGS": // replies with what the parser saw
		out = AppendArrayHeader(out, len(args)-1)
		for _, a := range args[1:] {
			out = AppendBulk(out, a)
		}
		return out
	}
	if r, ok := s.replies[name]; ok {
		return append(out, r...)
	}
	return AppendError(out, "ERR unknown command '"+string(args[0])+"'")
}

func concat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// TestGoRedisReadsWriterOutput is the differential test for the writers: a
// real go-redis client, over TCP, must decode each encoded reply to the Go
// value go-redis documents for that RESP type, under RESP2 and RESP3.
func TestGoRedisReadsWriterOutput(t *testing.T) {
	bigNum, _ := new(big.Int).SetString("3492890328409238509324850943850943825024385", 10)
	tests := []struct {
		name    string
		reply   []byte
		want    any
		wantErr string
	}{
		{"simple", AppendSimpleString(nil, "OK"), "OK", ""},
		{"error", AppendError(nil, "ERR boom"), nil, "ERR boom"},
		{"int", AppendInt(nil, -42), int64(-42), ""},
		{"bulk", AppendBulk(nil, []byte("hello\r\nworld\x00")), "hello\r\nworld\x00", ""},
		{"bulk empty", AppendBulk(nil, nil), "", ""},
		{"bulk int", AppendBulkInt(nil, 12), "12", ""},
		{"float bulk", AppendFloatBulk(nil, 2.5), "2.5", ""},
		{"null bulk", AppendNullBulk(nil), nil, "redis: nil"},
		{"null array", AppendNullArray(nil), nil, "redis: nil"},
		{"null", AppendNull(nil), nil, "redis: nil"},
		{"array", concat(AppendArrayHeader(nil, 3), AppendBulkString(nil, "a"), AppendInt(nil, 1),
			AppendArrayHeader(nil, 1), AppendSimpleString(nil, "x")),
			[]any{"a", int64(1), []any{"x"}}, ""},
		{"empty array", AppendArrayHeader(nil, 0), []any{}, ""},
		{"double", AppendDouble(nil, 1.5), 1.5, ""},
		{"double 0.1", AppendDouble(nil, 0.1), 0.1, ""},
		{"double inf", AppendDouble(nil, math.Inf(1)), math.Inf(1), ""},
		{"double -inf", AppendDouble(nil, math.Inf(-1)), math.Inf(-1), ""},
		{"bool true", AppendBool(nil, true), true, ""},
		{"bool false", AppendBool(nil, false), false, ""},
		{"big number", AppendBigNumber(nil, bigNum.String()), bigNum, ""},
		{"verbatim", AppendVerbatim(nil, "txt", []byte("Some string")), "Some string", ""},
		{"map", concat(AppendMapHeader(nil, 2), AppendBulkString(nil, "k"), AppendInt(nil, 1),
			AppendSimpleString(nil, "s"), AppendSetHeader(nil, 2), AppendBulkString(nil, "a"), AppendBulkString(nil, "b")),
			map[any]any{"k": int64(1), "s": []any{"a", "b"}}, ""},
		{"attribute then value", concat(AppendAttributeHeader(nil, 1), AppendSimpleString(nil, "ttl"),
			AppendInt(nil, 3600), AppendInt(nil, 7)), int64(7), ""},
		{"blob error", AppendBlobError(nil, "SYNTAX invalid syntax"), nil, "SYNTAX invalid syntax"},
	}
	replies := map[string][]byte{}
	for i, tt := range tests {
		replies["T"+string(rune('A'+i))] = tt.reply
	}
	srv := startReplyServer(t, replies)
	for _, protocol := range []int{2, 3} {
		rdb := redis.NewClient(&redis.Options{
			Addr: srv.Addr(), Protocol: protocol, DisableIdentity: true,
			PoolSize: 1, ReadTimeout: 5 * time.Second, MaxRetries: -1,
		})
		ctx := context.Background()
		for i, tt := range tests {
			got, err := rdb.Do(ctx, "T"+string(rune('A'+i))).Result()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("RESP%d %s: got %#v, %v; want error %q", protocol, tt.name, got, err, tt.wantErr)
				}
				continue
			}
			if err != nil {
				t.Errorf("RESP%d %s: %v", protocol, tt.name, err)
				continue
			}
			if !sameValue(got, tt.want) {
				t.Errorf("RESP%d %s: got %#v, want %#v", protocol, tt.name, got, tt.want)
			}
		}
		// go-redis's command writer against Parser, echoed back through the writers.
		sent := []any{"a b", "", "\r\n", "\x00\xff", strings.Repeat("v", 70000)}
		echoed, err := rdb.Do(ctx, append([]any{"ECHOARGS"}, sent...)...).StringSlice()
		if err != nil || len(echoed) != len(sent) {
			t.Fatalf("RESP%d ECHOARGS: %d values, %v", protocol, len(echoed), err)
		}
		for i := range sent {
			if echoed[i] != sent[i] {
				t.Errorf("RESP%d ECHOARGS arg %d: got %.20q, want %.20q", protocol, i, echoed[i], sent[i])
			}
		}
		// A pipeline: many commands in one write, many replies in one read.
		cmds, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for i := 0; i < 100; i++ {
				pipe.Do(ctx, "ECHOARGS", fmt.Sprint(i), "x")
			}
			return nil
		})
		if err != nil || len(cmds) != 100 {
			t.Fatalf("RESP%d pipeline: %d replies, %v", protocol, len(cmds), err)
		}
		for i, c := range cmds {
			got, err := c.(*redis.Cmd).StringSlice()
			if err != nil || len(got) != 2 || got[0] != fmt.Sprint(i) {
				t.Errorf("RESP%d pipeline reply %d: %q, %v", protocol, i, got, err)
			}
		}
		rdb.Close()
	}
}

// TestGoRedisParsesDoublesExactly checks that %.17g text is read back by
// go-redis as the very same float64, NaN included.
func TestGoRedisParsesDoublesExactly(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.0 / 3, math.Pi, 1e17, 1e-5, 123456789.123456789,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -2.5e-10, math.NaN()}
	replies := map[string][]byte{}
	for i, v := range values {
		replies["D"+string(rune('A'+i))] = AppendDouble(nil, v)
		replies["B"+string(rune('A'+i))] = AppendFloatBulk(nil, v)
	}
	srv := startReplyServer(t, replies)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 3, DisableIdentity: true, PoolSize: 1})
	defer rdb.Close()
	for i, v := range values {
		for _, prefix := range []string{"D", "B"} {
			cmd := rdb.Do(context.Background(), prefix+string(rune('A'+i)))
			var got float64
			var err error
			if prefix == "D" { // RESP3 double: go-redis returns a float64
				var ok bool
				if got, ok = cmd.Val().(float64); !ok {
					err = errors.Join(cmd.Err(), errors.New("not a float64"))
				}
			} else { // RESP2 bulk: go-redis parses the string
				got, err = cmd.Float64()
			}
			if err != nil {
				t.Errorf("%s %v: %v", prefix, v, err)
				continue
			}
			if math.Float64bits(got) != math.Float64bits(v) && !(math.IsNaN(got) && math.IsNaN(v)) {
				t.Errorf("%s: sent %v (%x), go-redis read %v (%x)", prefix, v, math.Float64bits(v), got, math.Float64bits(got))
			}
		}
	}
}

func sameValue(got, want any) bool {
	if w, ok := want.(*big.Int); ok {
		g, ok := got.(*big.Int)
		return ok && g.Cmp(w) == 0
	}
	return reflect.DeepEqual(got, want)
}
