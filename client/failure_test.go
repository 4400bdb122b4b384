package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/internal/tcptest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/resp"
	edge "github.com/shoalkv/shoal/server"
	"github.com/shoalkv/shoal/store"
)

// echoKey answers GET k with the value k, after the handshake.
func echoKey(args []string) []byte {
	if out, ok := handshakeOK(args); ok {
		return out
	}
	return resp.AppendBulkString(nil, args[1])
}

func TestCancelledCallReturnsAtOnceAndItsReplyIsDropped(t *testing.T) {
	gate := make(chan struct{})
	srv := startScripted(t, func(_ int64, args []string) []byte {
		if args[0] == "GET" && args[1] == "slow" {
			<-gate
		}
		return echoKey(args)
	})
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	dst := make([]byte, 0, 16)
	if _, err := c.GetInto(ctx, dst, "slow"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetInto with a 50 ms deadline against a stalled server: err %v, want DeadlineExceeded", err)
	}
	// The next call is behind the abandoned one on the wire; it must get
	// its own reply, not the late "slow".
	got := make(chan string)
	go func() {
		v, err := c.Get(context.Background(), "fast")
		got <- fmt.Sprintf("%s %v", v, err)
	}()
	time.Sleep(20 * time.Millisecond)
	close(gate)
	if g := <-got; g != "fast <nil>" {
		t.Fatalf("the call after the abandoned one got %q, want \"fast <nil>\"", g)
	}
	if got := dst[:cap(dst)]; strings.Trim(string(got), "\x00") != "" {
		t.Fatalf("the cancelled GetInto's late reply was written into dst: %q", got)
	}
}

func TestCallCancelledBeforeItIsWrittenIsNeverSent(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := startScripted(t, func(_ int64, args []string) []byte {
		mu.Lock()
		seen = append(seen, strings.Join(args, " "))
		mu.Unlock()
		return echoKey(args)
	})
	var writes atomic.Int64
	hold := newHoldGate()
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 1, Dialer: countingDialer(&writes, hold)})
	first := hold.holdFirst(func() error { _, err := c.Get(context.Background(), "first"); return err })
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error)
	go func() { _, err := c.Get(ctx, "cancelled"); second <- err }()
	waitQueued(t, c, 1)
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled queued call: err %v, want Canceled", err)
	}
	close(hold.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(context.Background(), "third"); err != nil || string(v) != "third" {
		t.Fatalf("third = %q, %v", v, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.Contains(s, "cancelled") {
			t.Fatalf("the server received %q although it was cancelled before being written; all: %q", s, seen)
		}
	}
}

// pingEveryConn sends a PING down each of the client's connections and
// waits for the replies: everything written before on them has then been
// executed.
func pingEveryConn(t *testing.T, c *Client) {
	t.Helper()
	for i, s := range c.slots {
		// A connection may still be in its reconnection backoff when the
		// others already carry calls; it must be back within the deadline.
		eventually(t, 10*time.Second, fmt.Sprintf("connection %d answering PING", i), func() bool {
			cl := getCall(wantAny)
			cl.buf = resp.AppendCommand(cl.buf[:0], "PING")
			if _, err := s.link.Load().enqueue(cl, false); err != nil {
				putCall(cl)
				return false
			}
			<-cl.done
			ok := cl.err == nil && cl.v == "PONG"
			putCall(cl)
			return ok
		})
	}
}

// waitQueued waits until the client's only connection has n calls queued.
func waitQueued(t *testing.T, c *Client, n int) {
	t.Helper()
	l := c.slots[0].link.Load()
	eventually(t, 10*time.Second, fmt.Sprintf("%d queued calls", n), func() bool {
		queued := 0
		for c := l.pending.Load(); c != nil; c = c.next {
			queued++
		}
		return queued == n
	})
}

func TestCancellationStormKeepsConnectionsInStep(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := newClient(t, Options{Addr: srv.addr, Conns: 2})
			const goroutines, rounds = 200, 30 // timeouts from 1 µs to 20 ms, log-uniform
			var cancelled atomic.Int64
			wait := inGoroutines(goroutines, func(g int) error {
				k := key("storm", g)
				for r := 0; r < rounds; r++ {
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(math.Exp(rand.Float64()*math.Log(20000)))*time.Microsecond)
					var err error
					switch r % 3 {
					case 0:
						err = c.Set(ctx, k, []byte(fmt.Sprintf("%d-%d", g, r)))
					case 1:
						var v []byte
						v, err = c.Get(ctx, k)
						if err == nil && !strings.HasPrefix(string(v), fmt.Sprintf("%d-", g)) {
							err = fmt.Errorf("goroutine %d got another's value %q", g, v)
						}
					default:
						_, err = c.Incr(ctx, k+":n")
					}
					cancel()
					if errors.Is(err, context.DeadlineExceeded) {
						cancelled.Add(1)
					} else if err != nil && !errors.Is(err, ErrNil) {
						return err
					}
				}
				return nil
			})
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			// A call that timed out after being written still runs on the
			// server; let every connection's backlog drain before checking.
			pingEveryConn(t, c)
			wait = inGoroutines(goroutines, func(g int) error {
				// After the storm: every goroutine still gets its own replies.
				k := key("storm", g)
				ctx := context.Background()
				want := fmt.Sprintf("%d-final", g)
				if err := c.Set(ctx, k, []byte(want)); err != nil {
					return err
				}
				if v, err := c.Get(ctx, k); err != nil || string(v) != want {
					return fmt.Errorf("goroutine %d after the storm: Get = %q, %v; want %q", g, v, err, want)
				}
				before, err := c.Do(ctx, "GET", k+":n")
				if errors.Is(err, ErrNil) {
					before, err = "0", nil
				}
				n, err2 := c.Incr(ctx, k+":n")
				b, _ := strconv.ParseInt(fmt.Sprint(before), 10, 64)
				if err != nil || err2 != nil || n != b+1 {
					return fmt.Errorf("goroutine %d after the storm: counter %v then Incr %d (%v, %v)", g, before, n, err, err2)
				}
				return nil
			})
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			if cancelled.Load() == 0 {
				t.Fatal("no call timed out: the storm tested nothing")
			}
			t.Logf("%d of %d calls timed out", cancelled.Load(), goroutines*rounds)
		})
	}
}

// redisProc is a redis-server on a fixed port that a test can kill and
// start again.
type redisProc struct {
	t    *testing.T
	path string
	port int
	args []string
	cmd  *exec.Cmd
}

func (p *redisProc) start() {
	p.t.Helper()
	args := append([]string{"--port", strconv.Itoa(p.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", "--dir", p.t.TempDir()}, p.args...)
	p.cmd = exec.Command(p.path, args...)
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	if !redistest.WaitPing(p.addr(), 10*time.Second) {
		p.t.Fatal("redis-server did not start")
	}
}

func (p *redisProc) kill() {
	_ = p.cmd.Process.Kill() // this PID only
	_ = p.cmd.Wait()
}

func (p *redisProc) addr() string { return fmt.Sprintf("127.0.0.1:%d", p.port) }

// shoalProc is an in-process Shoal on a fixed port that a test can stop
// and start again.
type shoalProc struct {
	t    *testing.T
	port int
	pw   string
	srv  *eventloop.Server
	h    *kv.Handler
	st   *store.Store
}

func (p *shoalProc) start() {
	p.t.Helper()
	p.st = store.New(store.Options{})
	p.h = kv.New(p.st, kv.Options{RequirePass: p.pw})
	var err error
	for try := 0; try < 100; try++ { // the old socket may linger a moment
		p.srv, err = eventloop.NewServer(edge.New(p.h), eventloop.Options{Addr: p.addr(), Loops: 2})
		if err == nil {
			if err = p.srv.Start(); err == nil {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatal(err)
}

func (p *shoalProc) kill() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	p.h.Close()
	p.st.Close()
}

func (p *shoalProc) addr() string { return fmt.Sprintf("127.0.0.1:%d", p.port) }

func TestServerKilledAndRestartedMidLoad(t *testing.T) {
	const pw = "restart-secret"
	type proc interface {
		start()
		kill()
		addr() string
	}
	procs := map[string]proc{
		"redis": &redisProc{t: t, path: redistest.Binary(t, "redis-server"), port: redistest.FreePort(t), args: []string{"--requirepass", pw}},
		"shoal": &shoalProc{t: t, port: redistest.FreePort(t), pw: pw},
	}
	for _, name := range []string{"redis", "shoal"} {
		p := procs[name]
		t.Run(name, func(t *testing.T) {
			p.start()
			running := true
			defer func() {
				if running {
					p.kill()
				}
			}()
			o := Options{Addr: p.addr(), Password: pw, Conns: 2, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
			if name == "redis" { // HELLO 3 and SELECT are redone on reconnection too
				o.Protocol, o.DB = 3, 2
			}
			c := newClient(t, o)
			var ok, failed, refused atomic.Int64
			var firstErr atomic.Value
			stop := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for g := 0; g < 50; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := context.Background()
					for r := 0; ; r++ {
						select {
						case <-stop:
							return
						default:
						}
						want := fmt.Sprintf("%d-%d", g, r)
						err := c.Set(ctx, key("restart", g), []byte(want))
						if err == nil {
							var v []byte
							v, err = c.Get(ctx, key("restart", g))
							if err == nil && string(v) != want {
								errs <- fmt.Errorf("goroutine %d: Get = %q, want %q", g, v, want)
								return
							}
						}
						switch {
						case err == nil || errors.Is(err, ErrNil): // ErrNil: the restart fell between Set and Get
							ok.Add(1)
						default:
							var ce *ConnError
							if !errors.As(err, &ce) || !strings.Contains(err.Error(), p.addr()) {
								errs <- fmt.Errorf("during the restart: err %v (%T), want a *ConnError naming %s", err, err, p.addr())
								return
							}
							firstErr.CompareAndSwap(nil, err.Error())
							failed.Add(1)
							if ce.Reconnecting {
								refused.Add(1)
							}
							time.Sleep(time.Millisecond)
						}
					}
				}()
			}
			eventually(t, 10*time.Second, "calls before the kill", func() bool { return ok.Load() > 500 })
			p.kill()
			running = false
			eventually(t, 10*time.Second, "calls refused at once while reconnecting", func() bool { return refused.Load() > 50 })
			p.start()
			running = true
			atRestart := ok.Load()
			eventually(t, 10*time.Second, "calls succeeding after the restart", func() bool { return ok.Load() > atRestart+500 })
			close(stop)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			t.Logf("%d calls succeeded, %d failed; first failure: %v", ok.Load(), failed.Load(), firstErr.Load())
			// Every connection is back, authenticated.
			pingEveryConn(t, c)
			if name != "redis" {
				return
			}
			for i := 0; i < 2*o.Conns; i++ { // on every connection, with luck
				if r, err := c.Do(context.Background(), "CONFIG", "GET", "maxmemory"); err != nil {
					t.Fatal(err)
				} else if _, isMap := r.(map[any]any); !isMap {
					t.Fatalf("CONFIG GET after the restart = %#v, want a RESP3 map", r)
				}
			}
			if err := c.Set(context.Background(), "in-db-2", []byte("x")); err != nil {
				t.Fatal(err)
			}
			for db, want := range map[int]error{0: ErrNil, 2: nil} {
				o2 := Options{Addr: p.addr(), Password: pw, Conns: 1, DB: db}
				if _, err := newClient(t, o2).Get(context.Background(), "in-db-2"); !errors.Is(err, want) && err != want {
					t.Fatalf("Get from DB %d: err %v, want %v", db, err, want)
				}
			}
		})
	}
}

func TestReadTimeoutFailsTheConnectionAndItReconnects(t *testing.T) {
	var answer atomic.Bool
	srv := startScripted(t, func(_ int64, args []string) []byte {
		if out, ok := handshakeOK(args); ok {
			return out
		}
		if !answer.Load() {
			return nil // swallow it
		}
		return echoKey(args)
	})
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 1, ReadTimeout: 100 * time.Millisecond, MinBackoff: time.Millisecond})
	_, err := c.Get(context.Background(), "k")
	var ce *ConnError
	if !errors.As(err, &ce) || !errors.Is(err, os.ErrDeadlineExceeded) || !strings.Contains(err.Error(), "ReadTimeout") {
		t.Fatalf("Get from a server that never answers: err %v, want a *ConnError wrapping os.ErrDeadlineExceeded", err)
	}
	answer.Store(true)
	eventually(t, 10*time.Second, "a reconnection", func() bool { return srv.Accepted() >= 2 })
	eventually(t, 10*time.Second, "a call to succeed", func() bool {
		v, err := c.Get(context.Background(), "k")
		return err == nil && string(v) == "k"
	})
}

func TestCloseFailsWaitingCallsWithErrClosed(t *testing.T) {
	var got atomic.Int64
	srv := startScripted(t, func(_ int64, args []string) []byte {
		if out, ok := handshakeOK(args); ok {
			return out
		}
		got.Add(1)
		return nil
	})
	c, err := New(Options{Addr: srv.Addr(), Conns: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := c.Get(context.Background(), "k"); done <- err }()
	eventually(t, 10*time.Second, "the server to receive the call", func() bool { return got.Load() == 1 })
	c.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("call waiting at Close: err %v, want ErrClosed", err)
	}
	if err := c.Set(context.Background(), "k", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: err %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestPushMessagesAreNotTakenForReplies(t *testing.T) {
	srv := startScripted(t, func(_ int64, args []string) []byte {
		if out, ok := handshakeOK(args); ok {
			return out
		}
		push := ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nx\r\n"
		attr := "|1\r\n+ttl\r\n:3\r\n"
		return append([]byte(push+attr), resp.AppendBulkString(nil, args[1])...)
	})
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 1})
	for _, k := range []string{"a", "b", "c"} {
		if v, err := c.Get(context.Background(), k); err != nil || string(v) != k {
			t.Fatalf("Get(%q) = %q, %v", k, v, err)
		}
	}
}

func TestAReplyNobodyAskedForFailsTheConnection(t *testing.T) {
	srv := startScripted(t, func(_ int64, args []string) []byte {
		if out, ok := handshakeOK(args); ok {
			return out
		}
		return []byte("+OK\r\n+EXTRA\r\n")
	})
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 1, MinBackoff: time.Hour, DialTimeout: 200 * time.Millisecond, ReadTimeout: 100 * time.Millisecond})
	if err := c.Set(context.Background(), "k", nil); err != nil {
		t.Fatal(err)
	}
	var err error
	eventually(t, 10*time.Second, "the connection to fail", func() bool {
		err = c.Set(context.Background(), "k", nil)
		return err != nil
	})
	var ce *ConnError
	if !errors.As(err, &ce) || !errors.Is(err, resp.ErrInvalidReply) || !strings.Contains(err.Error(), "no call waiting") {
		t.Fatalf("after an unasked-for reply: err %v, want a *ConnError wrapping ErrInvalidReply 'no call waiting'", err)
	}
}

// closingIdle is a scripted server that closes a connection once it has been
// idle for d.
func closingIdle(t *testing.T, d time.Duration) *tcptest.Server {
	return startScriptedIdle(t, func(_ int64, args []string) []byte { return echoKey(args) }, d)
}

func TestAServerClosingIdleConnectionsIsNoticedInTheBackground(t *testing.T) {
	restore := idleCheckEvery
	t.Cleanup(func() { idleCheckEvery = restore }) // after the client's Close
	idleCheckEvery = 20 * time.Millisecond
	srv := closingIdle(t, 100*time.Millisecond)
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 2, MinBackoff: time.Millisecond})
	if v, err := c.Get(context.Background(), "a"); err != nil || string(v) != "a" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	// Both connections are closed by the server and re-dialled with no call made.
	eventually(t, 10*time.Second, "reconnections", func() bool { return srv.Accepted() >= 4 })
}

func TestACallAfterTheServerClosedIdleConnectionsWaitsForTheReconnection(t *testing.T) {
	d, s := idleCheckEvery, staleAfter
	t.Cleanup(func() { idleCheckEvery, staleAfter = d, s })     // after the client's Close
	idleCheckEvery, staleAfter = time.Hour, 50*time.Millisecond // only the call notices
	srv := closingIdle(t, 300*time.Millisecond)                 // ample for a new connection's first call
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 2, MinBackoff: time.Millisecond})
	for i := 0; i < 3; i++ {
		time.Sleep(700 * time.Millisecond) // the server closes both connections
		k := fmt.Sprint("k", i)
		if v, err := c.Get(context.Background(), k); err != nil || string(v) != k {
			t.Fatalf("Get after the server closed the idle connections = %q, %v; want %q", v, err, k)
		}
	}
}

func TestCallsGoToTheConnectionsThatAreUp(t *testing.T) {
	addr := servers(t)[0].addr
	c := newClient(t, Options{Addr: addr, Conns: 3, MinBackoff: time.Hour})
	broken := c.slots[1].link.Load()
	broken.fail(errors.New("broken by the test"))
	for i := 0; i < 200; i++ {
		if err := c.Set(context.Background(), key("up", i), []byte("v")); err != nil {
			t.Fatalf("call %d with one of three connections down: %v", i, err)
		}
	}
	// With all of them down, calls fail at once with the cause.
	for _, s := range c.slots {
		s.link.Load().fail(errors.New("broken by the test"))
	}
	var ce *ConnError
	eventually(t, 10*time.Second, "calls to be refused", func() bool {
		err := c.Set(context.Background(), "k", nil)
		return errors.As(err, &ce) && ce.Reconnecting && strings.Contains(err.Error(), "broken by the test")
	})
}

func TestDialTimeoutBoundsTheHandshake(t *testing.T) {
	srv := startScripted(t, func(int64, []string) []byte { return nil }) // never answers
	_, err := New(Options{Addr: srv.Addr(), DialTimeout: 200 * time.Millisecond})
	if !errors.Is(err, os.ErrDeadlineExceeded) || !strings.Contains(err.Error(), "PING handshake with "+srv.Addr()) {
		t.Fatalf("New against a server that never answers: err %v, want a handshake timeout", err)
	}
}

func TestNegativeReadTimeoutNeverDeclaresTheConnectionDead(t *testing.T) {
	srv := startScripted(t, func(_ int64, args []string) []byte {
		if out, ok := handshakeOK(args); ok {
			return out
		}
		return nil // never answers a call
	})
	c := newClient(t, Options{Addr: srv.Addr(), Conns: 1, ReadTimeout: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := c.Get(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's DeadlineExceeded, not a ReadTimeout", err)
	}
	if n := srv.Accepted(); n != 1 {
		t.Fatalf("%d connections accepted, want 1 (no reconnection)", n)
	}
}

func TestConnsDefaultsToGOMAXPROCSAndAtLeastTwo(t *testing.T) {
	c := newClient(t, Options{Addr: servers(t)[0].addr})
	if want := max(2, runtime.GOMAXPROCS(0)); len(c.slots) != want {
		t.Fatalf("%d connections, want %d", len(c.slots), want)
	}
}
