package loadgen

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

func testConfig(addr string) *Config {
	return &Config{
		Protocol: "resp", Addr: addr, Conns: 4, Pipeline: 8, Keyspace: 1000, ValueSize: 16,
		Dist: "uniform", ZipfS: 1.01, Timeout: 5 * time.Second, Seed: 1,
		Mix: []opWeight{{opGet, 1}},
	}
}

func mustRun(t *testing.T, cfg *Config) *Report {
	t.Helper()
	rep, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func checkLatency(t *testing.T, rep *Report) {
	t.Helper()
	l := rep.LatencyUs
	if !(l.P50 > 0 && l.P50 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.P9999 && l.P9999 <= l.Max) {
		t.Errorf("latencies not positive and ordered: %+v", l)
	}
}

func TestClosedLoopSendsExactlyN(t *testing.T) {
	addr := startRedis(t)
	for _, tc := range []struct {
		name string
		mix  []opWeight
		n    int64
		p    int
	}{
		{"get", []opWeight{{opGet, 1}}, 1003, 8}, // n not a multiple of P: the last batch is short
		{"set", []opWeight{{opSet, 1}}, 500, 1},
		{"mix", []opWeight{{opGet, 1}, {opSet, 1}, {opPing, 1}, {opIncr, 1}}, 2000, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := infoField(t, addr, "stats", "total_commands_processed")
			cfg := testConfig(addr)
			cfg.Mix, cfg.Requests, cfg.Pipeline = tc.mix, tc.n, tc.p
			rep := mustRun(t, cfg)
			after := infoField(t, addr, "stats", "total_commands_processed")
			if rep.Requests != tc.n || rep.Errors != 0 {
				t.Fatalf("requests %d errors %d %v, want %d and 0", rep.Requests, rep.Errors, rep.ErrorsByKind, tc.n)
			}
			// The server saw exactly n commands, plus the first INFO.
			if got := after - before - 1; got != tc.n {
				t.Errorf("server processed %d commands, want %d", got, tc.n)
			}
			if rep.Throughput <= 0 || rep.DurationSec <= 0 {
				t.Errorf("throughput %v over %v s", rep.Throughput, rep.DurationSec)
			}
			checkLatency(t, rep)
		})
	}
}

func TestClosedLoopWarmupIsNotCounted(t *testing.T) {
	addr := startRedis(t)
	before := infoField(t, addr, "stats", "total_commands_processed")
	cfg := testConfig(addr)
	cfg.Requests, cfg.Warmup = 400, 200*time.Millisecond
	rep := mustRun(t, cfg)
	sent := infoField(t, addr, "stats", "total_commands_processed") - before - 1
	if rep.Requests != 400 {
		t.Fatalf("measured %d requests, want 400", rep.Requests)
	}
	if sent <= 400 {
		t.Errorf("server saw %d commands: the warmup sent nothing", sent)
	}
}

func TestClosedLoopDuration(t *testing.T) {
	addr := startRedis(t)
	cfg := testConfig(addr)
	cfg.Duration = 300 * time.Millisecond
	rep := mustRun(t, cfg)
	if rep.Requests == 0 || rep.DurationSec < 0.3 || rep.DurationSec > 2 {
		t.Fatalf("%d requests in %.3f s, want some in about 0.3 s", rep.Requests, rep.DurationSec)
	}
	if rep.Requests%int64(cfg.Pipeline) != 0 {
		t.Errorf("%d requests is not whole batches of %d", rep.Requests, cfg.Pipeline)
	}
}

func TestOpenLoopSendsAtRate(t *testing.T) {
	addr := startRedis(t)
	t.Run("count", func(t *testing.T) {
		before := infoField(t, addr, "stats", "total_commands_processed")
		cfg := testConfig(addr)
		cfg.Rate, cfg.Requests = 5000, 1001
		start := time.Now()
		rep := mustRun(t, cfg)
		elapsed := time.Since(start)
		if rep.Requests != 1001 || rep.Errors != 0 {
			t.Fatalf("requests %d errors %v, want 1001 and none", rep.Requests, rep.ErrorsByKind)
		}
		if got := infoField(t, addr, "stats", "total_commands_processed") - before - 1; got != 1001 {
			t.Errorf("server processed %d commands, want 1001", got)
		}
		// 1001 requests at 5000/s take 0.2 s; a closed loop would take a few ms.
		if elapsed < 150*time.Millisecond {
			t.Errorf("1001 requests at 5000/s took %v: not rate limited", elapsed)
		}
		checkLatency(t, rep)
	})
	t.Run("duration", func(t *testing.T) {
		cfg := testConfig(addr)
		cfg.Rate, cfg.Duration, cfg.Warmup = 4000, 500*time.Millisecond, 100*time.Millisecond
		rep := mustRun(t, cfg)
		// Each connection sends every 1 ms: 500 measured requests each, give or take one.
		if rep.Requests < 2000-8 || rep.Requests > 2000+8 {
			t.Fatalf("%d requests, want 2000±8", rep.Requests)
		}
		checkLatency(t, rep)
	})
}

// A server that stops answering for a while must show up in open-loop latency even though
// the client sends nothing new while it waits (coordinated omission).
func TestOpenLoopCountsStallFromDueTime(t *testing.T) {
	addr := startRedis(t)
	cfg := testConfig(addr)
	cfg.Conns, cfg.Rate, cfg.Duration = 2, 2000, 800*time.Millisecond
	stalled := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		c, err := net.Dial("tcp", addr)
		if err == nil {
			defer c.Close()
			buf := make([]byte, 64)
			var n int
			if _, err = c.Write(resp.AppendCommand(nil, "DEBUG", "SLEEP", "0.2")); err == nil {
				if n, err = c.Read(buf); err == nil && string(buf[:n]) != "+OK\r\n" {
					err = fmt.Errorf("DEBUG SLEEP replied %q", buf[:n])
				}
			}
		}
		stalled <- err
	}()
	rep := mustRun(t, cfg)
	if err := <-stalled; err != nil {
		t.Fatal(err)
	}
	if rep.LatencyUs.Max < 150_000 {
		t.Errorf("max latency %.0f µs, want the 200 ms stall", rep.LatencyUs.Max)
	}
	// ~400 of ~1600 requests fell due during the stall; each waited for its end.
	if rep.LatencyUs.P90 < 20_000 {
		t.Errorf("p90 %.0f µs: the requests queued behind the stall were not counted from their due time", rep.LatencyUs.P90)
	}
}

func TestErrorRepliesAreCountedByKind(t *testing.T) {
	addr := startRedis(t)
	redisDo(t, addr, "LPUSH", "key:000000000000", "a")   // GET on it: WRONGTYPE
	redisDo(t, addr, "SET", "counter:000000000000", "x") // INCR on it: ERR not an integer
	cfg := testConfig(addr)
	cfg.Keyspace, cfg.Requests = 1, 600
	cfg.Mix = []opWeight{{opGet, 1}, {opIncr, 1}, {opPing, 1}}
	rep := mustRun(t, cfg)
	wt, er := rep.ErrorsByKind["WRONGTYPE"], rep.ErrorsByKind["ERR"]
	if rep.Requests != 600 || wt == 0 || er == 0 || wt+er != rep.Errors || len(rep.ErrorsByKind) != 2 {
		t.Fatalf("requests %d errors %d by kind %v", rep.Requests, rep.Errors, rep.ErrorsByKind)
	}
	// A third of the requests are PINGs, which succeed.
	if rep.Errors > 500 || rep.Errors < 300 {
		t.Errorf("%d errors of 600 requests, want about 400", rep.Errors)
	}
}

func TestIOErrorsAreCounted(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn) {
		c.Close() // every connection ends before its first reply
	})
	cfg := testConfig(addr)
	cfg.Requests = 100
	rep := mustRun(t, cfg)
	if rep.Requests != 0 || rep.Errors != int64(cfg.Conns) {
		t.Fatalf("requests %d errors %v, want 0 and one I/O error per connection", rep.Requests, rep.ErrorsByKind)
	}
	for k := range rep.ErrorsByKind {
		if !strings.HasPrefix(k, "io: ") {
			t.Errorf("error kind %q is not an I/O error", k)
		}
	}
}

func TestDialFailureIsAnError(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg := testConfig(addr)
	cfg.Requests = 10
	if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v, want one naming %s", err, addr)
	}
}

func TestSourceAddressesAreUsed(t *testing.T) {
	seen := make(chan string, 8)
	addr := fakeServer(t, func(c net.Conn) {
		seen <- c.RemoteAddr().(*net.TCPAddr).IP.String()
		c.Close()
	})
	cfg := testConfig(addr)
	cfg.Requests = 10
	cfg.Sources, _ = ParseSources("127.0.0.2,127.0.0.3")
	mustRun(t, cfg) // the server hangs up; only the source addresses matter here
	got := map[string]int{}
	for range cfg.Conns {
		got[<-seen]++
	}
	if got["127.0.0.2"] != 2 || got["127.0.0.3"] != 2 {
		t.Errorf("connections came from %v, want two each from 127.0.0.2 and 127.0.0.3", got)
	}
}

// When the reader gives up (here on a reply that is not RESP), the open-loop sender must
// stop too instead of running out the -d schedule.
func TestOpenLoopStopsWhenReaderFails(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 64<<10)
		if _, err := c.Read(buf); err != nil {
			return
		}
		c.Write([]byte("?not resp\r\n"))
		io.Copy(io.Discard, c) // keep reading so the client's writes never block
	})
	cfg := testConfig(addr)
	cfg.Conns, cfg.Rate, cfg.Duration = 1, 20000, 30*time.Second
	start := time.Now()
	rep := mustRun(t, cfg)
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("run took %v after the reader failed", elapsed)
	}
	if rep.Errors != 1 {
		t.Errorf("errors %v, want the one protocol error", rep.ErrorsByKind)
	}
}

// A reply with no request behind it is a protocol error, not a reason to spin through the
// batch ring.
func TestOpenLoopRejectsUnrequestedReply(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn) {
		// Two replies at once: at most the first request (due at once) can be out yet;
		// the second is 100 ms away.
		c.Write([]byte("+OK\r\n+OK\r\n"))
		io.Copy(io.Discard, c)
	})
	cfg := testConfig(addr)
	cfg.Conns, cfg.Rate, cfg.Duration = 1, 10, 2*time.Second
	rep := mustRun(t, cfg)
	if rep.Errors != 1 || rep.ErrorsByKind["protocol error: a reply arrived for no request"] != 1 {
		t.Errorf("errors %v, want one unrequested-reply protocol error", rep.ErrorsByKind)
	}
}
