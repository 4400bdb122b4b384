package client

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/internal/tcptest"
	"github.com/shoalkv/shoal/internal/waittest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/resp"
)

// startShoal runs an in-process Shoal (internal/shoaltest) on a loopback
// port and stops it when the test ends.
func startShoal(t testing.TB, o kv.Options) string {
	t.Helper()
	return shoaltest.Start(t, shoaltest.Options{KV: o}).Addr
}

// inGoroutines runs f(0) … f(n-1), each in a goroutine of its own. The
// wait it returns waits for them all and returns the first error one of them
// returned; call it once.
func inGoroutines(n int, f func(g int) error) (wait func() error) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(g); err != nil {
				errs <- err
			}
		}()
	}
	return func() error {
		wg.Wait()
		close(errs)
		return <-errs
	}
}

// server is one of the real servers every behaviour is checked against.
type server struct {
	name string
	addr string
}

func servers(t testing.TB) []server {
	return []server{
		{"shoal", startShoal(t, kv.Options{})},
		{"redis", redistest.StartServer(t)},
	}
}

func newClient(t testing.TB, o Options) *Client {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// countingConn counts the writes made on a connection, and can hold the
// first one until released.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
	hold   *holdGate
}

type holdGate struct {
	mu      sync.Mutex
	sizes   []int // sizes of the writes made while armed
	armed   atomic.Bool
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	if c.hold != nil && c.hold.armed.Load() {
		c.hold.mu.Lock()
		c.hold.sizes = append(c.hold.sizes, len(p))
		c.hold.mu.Unlock()
		first := false
		c.hold.once.Do(func() { first = true })
		if first {
			close(c.hold.entered)
			<-c.hold.release
		}
	}
	return c.Conn.Write(p)
}

func newHoldGate() *holdGate {
	return &holdGate{entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdGate) writeSizes() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.sizes...)
}

// arm makes the next write (after the handshake) wait for release.
func (h *holdGate) arm() { h.armed.Store(true) }

// holdFirst arms the gate and makes call in a goroutine of its own; it
// returns once call's write is held, with where call's error will arrive.
func (h *holdGate) holdFirst(call func() error) <-chan error {
	h.arm()
	first := make(chan error, 1)
	go func() { first <- call() }()
	<-h.entered
	return first
}

// countingDialer dials TCP and wraps each connection in a countingConn.
func countingDialer(writes *atomic.Int64, hold *holdGate) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: nc, writes: writes, hold: hold}, nil
	}
}

// startScripted starts a fake server for what a real one cannot be made to
// do on cue: it parses commands and serves each by calling answer(conn
// index, args), writing what it returns, which may block, delay or send raw
// bytes. A nil return sends nothing.
func startScripted(t testing.TB, answer func(n int64, args []string) []byte) *tcptest.Server {
	t.Helper()
	return startScriptedIdle(t, answer, 0)
}

// startScriptedIdle is startScripted with connections closed by the server
// once idle for closeIdle (if not 0).
func startScriptedIdle(t testing.TB, answer func(n int64, args []string) []byte, closeIdle time.Duration) *tcptest.Server {
	t.Helper()
	return tcptest.Serve(t, func(nc net.Conn, n int64) { serveScripted(nc, n, answer, closeIdle) })
}

func serveScripted(nc net.Conn, n int64, answer func(int64, []string) []byte, closeIdle time.Duration) {
	var p resp.Parser
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	for {
		if closeIdle > 0 {
			_ = nc.SetReadDeadline(time.Now().Add(closeIdle))
		}
		m, err := nc.Read(tmp)
		if err != nil {
			return
		}
		buf = append(buf, tmp[:m]...)
		for {
			args, used, err := p.Parse(buf)
			if err != nil {
				break
			}
			strs := make([]string, len(args))
			for i, a := range args {
				strs[i] = string(a)
			}
			buf = buf[used:]
			if len(strs) == 0 {
				continue
			}
			if out := answer(n, strs); out != nil {
				if _, err := nc.Write(out); err != nil {
					return
				}
			}
		}
		buf = append(buf[:0], buf...)
	}
}

// handshakeOK answers the handshake commands a client sends.
func handshakeOK(args []string) ([]byte, bool) {
	switch args[0] {
	case "PING":
		return []byte("+PONG\r\n"), true
	case "AUTH", "SELECT":
		return []byte("+OK\r\n"), true
	}
	return nil, false
}

// eventually polls cond until it holds or the time is up.
var eventually = waittest.Until

func key(prefix string, i int) string { return fmt.Sprintf("%s:%d", prefix, i) }

func startRedisWithPassword(t testing.TB, pw string) string {
	return redistest.StartServer(t, "--requirepass", pw)
}

func startShoalWithPassword(t testing.TB, pw string) string {
	return startShoal(t, kv.Options{RequirePass: pw})
}
