package baseline

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/proto/resp"
)

type testServer interface {
	Addr() net.Addr
	Close() error
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// engines starts each baseline on its own store and stops it when the test ends.
var engines = []struct {
	name  string
	start func(t *testing.T) testServer
}{
	{"net", func(t *testing.T) testServer {
		s, err := ListenNet("127.0.0.1:0", NewStore())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"gnet", func(t *testing.T) testServer {
		s, err := ListenGnet(freeAddr(t), NewStore())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

func forEachEngine(t *testing.T, f func(t *testing.T, addr string)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			s := e.start(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			})
			f(t, s.Addr().String())
		})
	}
}

func TestCommandsWithGoRedis(t *testing.T) {
	forEachEngine(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
		defer c.Close()
		if got, err := c.Ping(ctx).Result(); err != nil || got != "PONG" {
			t.Fatalf("PING = %q, %v", got, err)
		}
		if _, err := c.Get(ctx, "missing").Result(); err != redis.Nil {
			t.Errorf("GET missing: err %v, want redis.Nil", err)
		}
		big := strings.Repeat("v", 100_000) // several reads on the server
		for _, v := range []string{"a", "", big, "short again"} {
			if err := c.Set(ctx, "k", v, 0).Err(); err != nil {
				t.Fatalf("SET of %d bytes: %.100v", len(v), err)
			}
			if got, err := c.Get(ctx, "k").Result(); err != nil || got != v {
				t.Fatalf("GET after SET of %d bytes: %d bytes, %.100v", len(v), len(got), err)
			}
		}
		for i := 1; i <= 3; i++ {
			if n, err := c.Incr(ctx, "n").Result(); err != nil || n != int64(i) {
				t.Fatalf("INCR = %d, %v; want %d", n, err, i)
			}
		}
		if err := c.Incr(ctx, "k").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
			t.Errorf("INCR on a non-integer: %v", err)
		}
		c.Set(ctx, "max", strconv.FormatInt(1<<63-1, 10), 0)
		if err := c.Incr(ctx, "max").Err(); err == nil || err.Error() != "ERR increment or decrement would overflow" {
			t.Errorf("INCR at MaxInt64: %v", err)
		}
		if err := c.Do(ctx, "GET").Err(); err == nil || err.Error() != "ERR wrong number of arguments for 'get' command" {
			t.Errorf("GET without key: %v", err)
		}
		if err := c.Do(ctx, "FLUSHALL").Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR unknown command 'FLUSHALL'") {
			t.Errorf("unknown command: %v", err)
		}
	})
}

func TestPipelineRepliesInOrder(t *testing.T) {
	forEachEngine(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
		defer c.Close()
		const n = 5000 // far more than one read's worth
		pipe := c.Pipeline()
		for i := range n {
			pipe.Set(ctx, fmt.Sprint("key:", i), i, 0)
			pipe.Incr(ctx, fmt.Sprint("key:", i))
			pipe.Get(ctx, fmt.Sprint("key:", i))
		}
		cmds, err := pipe.Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if got := cmds[3*i+2].(*redis.StringCmd).Val(); got != strconv.Itoa(i+1) {
				t.Fatalf("reply %d: GET = %q, want %d", i, got, i+1)
			}
		}
	})
}

// dial connects to addr; the connection closes when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Commands split at every byte boundary must still be answered exactly once each.
func TestCommandsSplitAcrossReads(t *testing.T) {
	forEachEngine(t, func(t *testing.T, addr string) {
		c := dial(t, addr)
		req := resp.AppendCommand(nil, "SET", "k", "hello")
		req = resp.AppendCommand(req, "GET", "k")
		req = append(req, "PING\r\n"...) // inline
		for i := range req {
			if _, err := c.Write(req[i : i+1]); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Microsecond) // let most bytes arrive alone
		}
		want := "+OK\r\n$5\r\nhello\r\n+PONG\r\n"
		got := make([]byte, len(want))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	})
}

func TestProtocolErrorClosesConnection(t *testing.T) {
	forEachEngine(t, func(t *testing.T, addr string) {
		c := dial(t, addr)
		c.Write([]byte("*1\r\n$x\r\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil || string(got) != "-ERR Protocol error: invalid bulk length\r\n" {
			t.Fatalf("got %q, %v; want the protocol error then EOF", got, err)
		}
	})
}

func TestManyConcurrentClients(t *testing.T) {
	forEachEngine(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, PoolSize: 64})
		defer c.Close()
		errs := make(chan error, 64)
		for g := range 64 {
			go func() {
				for range 100 {
					if err := c.Incr(ctx, "shared").Err(); err != nil {
						errs <- err
						return
					}
				}
				errs <- c.Set(ctx, fmt.Sprint("own:", g), g, 0).Err()
			}()
		}
		for range 64 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if n, err := c.Get(ctx, "shared").Int(); err != nil || n != 6400 {
			t.Fatalf("shared counter %d, %v; want 6400", n, err)
		}
	})
}

func BenchmarkExecuteGet(b *testing.B) {
	st := NewStore()
	st.Set([]byte("key:000000000001"), []byte("xxx"))
	args := [][]byte{[]byte("GET"), []byte("key:000000000001")}
	out := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		out = Execute(st, args, out[:0])
	}
}

func BenchmarkExecuteSet(b *testing.B) {
	st := NewStore()
	args := [][]byte{[]byte("SET"), []byte("key:000000000001"), []byte("xxx")}
	out := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		out = Execute(st, args, out[:0])
	}
}
