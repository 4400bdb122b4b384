package client

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// Client is a connection to one server, safe for use by any number of
// goroutines. Calls are spread over Options.Conns connections; each
// connection sends every call queued on it in one write and hands each
// reply back to its caller in order.
type Client struct {
	opts   Options
	slots  []*slot
	wg     sync.WaitGroup // every goroutine the client started
	closed atomic.Bool
	quit   chan struct{} // closed by Close
	epoch  time.Time     // origin of now()
}

// now is a monotonic clock in nanoseconds, never 0.
func (cl *Client) now() int64 { return int64(time.Since(cl.epoch)) + 1 }

// staleAfter is how long a connection may sit idle before a call checks
// that the server has not closed it meanwhile (a variable for tests).
var staleAfter = time.Second

// New connects Options.Conns connections to o.Addr, authenticates them and
// returns the client. It fails if the first connection cannot be made or
// refuses the handshake (a wrong password, a server without RESP3); later
// connections that fail are retried in the background like lost ones.
func New(o Options) (*Client, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	cl := &Client{opts: o, quit: make(chan struct{}), epoch: time.Now()}
	for i := 0; i < o.Conns; i++ {
		l, err := cl.connect()
		if err != nil {
			if i == 0 {
				return nil, err
			}
			l = deadLink(cl, &ConnError{Addr: o.Addr, Reconnecting: true, Err: err}, false)
		}
		s := &slot{client: cl, changed: make(chan struct{})}
		s.link.Store(l)
		cl.slots = append(cl.slots, s)
	}
	for _, s := range cl.slots {
		cl.wg.Add(1)
		go s.supervise()
	}
	return cl, nil
}

// Close fails every call still waiting with ErrClosed, closes the
// connections and waits for the client's goroutines to end. Calls made
// after Close return ErrClosed.
func (cl *Client) Close() error {
	if cl.closed.Swap(true) {
		return nil
	}
	close(cl.quit)
	for _, s := range cl.slots {
		s.link.Load().fail(ErrClosed)
	}
	cl.wg.Wait()
	// A reconnection may have installed a link just before quit was seen.
	for _, s := range cl.slots {
		s.link.Load().fail(ErrClosed)
	}
	return nil
}

// Get returns the value of key, or ErrNil if it does not exist. The
// returned slice belongs to the caller, who may keep and modify it: small
// values are carved from 16 KiB blocks shared with other values (no
// allocation per call, but a value kept alive keeps its block alive);
// values over 2 KiB are allocated on their own. Use GetInto to copy into a
// buffer of your own instead.
func (cl *Client) Get(ctx context.Context, key string) ([]byte, error) {
	c := getCall(wantBulk)
	c.buf = appendCommand2(c.buf, "GET", key)
	if err := cl.run(ctx, c); err != nil {
		return nil, err
	}
	v, err := c.val, c.err
	putCall(c)
	return v, err
}

// GetInto appends the value of key to dst and returns the extended slice,
// like append; it allocates only if dst must grow. A missing key returns
// dst unchanged and ErrNil. dst is written only if the call returns without
// error; after a cancelled call it is not touched, not even later.
func (cl *Client) GetInto(ctx context.Context, dst []byte, key string) ([]byte, error) {
	c := getCall(wantInto)
	c.dst = dst
	c.buf = appendCommand2(c.buf, "GET", key)
	if err := cl.run(ctx, c); err != nil {
		return dst, err
	}
	v, err := c.val, c.err
	putCall(c)
	if err != nil {
		return dst, err
	}
	return v, nil
}

// Set sets key to value. value is copied before Set returns; the caller may
// reuse it at once.
func (cl *Client) Set(ctx context.Context, key string, value []byte) error {
	c := getCall(wantStatus)
	b := resp.AppendArrayHeader(c.buf[:0], 3)
	b = resp.AppendBulkString(b, "SET")
	b = resp.AppendBulkString(b, key)
	c.buf = resp.AppendBulk(b, value)
	if err := cl.run(ctx, c); err != nil {
		return err
	}
	err := c.err
	putCall(c)
	return err
}

// Incr increments the integer at key by one and returns the new value.
func (cl *Client) Incr(ctx context.Context, key string) (int64, error) {
	c := getCall(wantInt)
	c.buf = appendCommand2(c.buf, "INCR", key)
	if err := cl.run(ctx, c); err != nil {
		return 0, err
	}
	n, err := c.n, c.err
	putCall(c)
	return n, err
}

// Do sends any command and returns its reply as Go values. Arguments may be
// strings, []byte, integers, floats or bools. Replies map to: simple and
// bulk strings (and RESP3 verbatim strings) → string, integers → int64,
// arrays and sets → []any, RESP3 maps → map[any]any, doubles → float64,
// booleans → bool, big numbers → *big.Int, nulls inside an aggregate → nil,
// error replies inside an aggregate → Error. A top-level null returns
// ErrNil and a top-level error reply returns an Error.
//
// Commands that would break a connection shared by all goroutines are
// refused with an error: SUBSCRIBE and the other pub/sub commands,
// MONITOR, MULTI/EXEC/WATCH, SELECT, HELLO, AUTH, RESET, QUIT, CLIENT
// REPLY (use Options for the database, protocol and credentials). Blocking
// commands such as BLPOP work but hold up every call queued behind them on
// the same connection.
func (cl *Client) Do(ctx context.Context, args ...any) (any, error) {
	c := getCall(wantAny)
	b, err := appendArgs(c.buf[:0], args)
	c.buf = b
	if err != nil {
		putCall(c)
		return nil, err
	}
	if err := cl.run(ctx, c); err != nil {
		return nil, err
	}
	v, err := c.v, c.err
	putCall(c)
	return v, err
}

func appendCommand2(b []byte, name, key string) []byte {
	b = resp.AppendArrayHeader(b[:0], 2)
	b = resp.AppendBulkString(b, name)
	return resp.AppendBulkString(b, key)
}

// run queues c on a connection and waits for its answer. A nil return
// means c is answered and the caller owns it again (its results, err
// included, are set); a non-nil return means c is no longer the caller's.
func (cl *Client) run(ctx context.Context, c *call) error {
	if err := ctx.Err(); err != nil {
		putCall(c)
		return err
	}
	if cl.closed.Load() {
		putCall(c)
		return ErrClosed
	}
	l := cl.route(ctx)
	// A context that cannot end lets the caller read its own reply on an
	// idle connection; one that can must not be stuck in a read.
	reader, err := l.enqueue(c, ctx.Done() == nil)
	if err != nil {
		putCall(c)
		return err
	}
	if reader {
		l.readUntil(c)
	}
	done := ctx.Done()
	if done == nil {
		// A plain receive: a select with a nil case still pays for
		// locking and queueing on every channel it names.
		<-c.done
		return nil
	}
	select {
	case <-c.done:
		return nil
	case <-done:
		if c.abandon() {
			return ctx.Err()
		}
		<-c.done // answered meanwhile: take the answer
		return nil
	}
}

// pick chooses a connection: a random one, or the next one up if it is
// down. A connection idle for staleAfter is first checked for a close by
// the server. If all are down it returns one anyway, whose failure the call
// will report, and the slot it came from.
func (cl *Client) pick() (*link, *slot) {
	n := len(cl.slots)
	i := 0
	if n > 1 {
		i = int(rand.Uint32N(uint32(n)))
	}
	var now int64
	for k := 0; k < n; k++ {
		s := cl.slots[(i+k)%n]
		l := s.link.Load()
		if at := l.idleAt.Load(); at != 0 && l.isUp() {
			if now == 0 {
				now = cl.now()
			}
			if now-at > int64(staleAfter) {
				// Nobody has read it for a while: a server that closed it
				// would otherwise fail this call.
				l.checkIdle()
			}
		}
		if l.isUp() {
			return l, s
		}
	}
	s := cl.slots[i]
	return s.link.Load(), s
}

// route picks the connection for a call. If every connection is down but
// no reconnection attempt has failed yet (the server closed them, or a
// check just found them closed), it waits for the chosen slot's first
// attempt (bounded by ctx and DialTimeout + MinBackoff, at most 1 s of the
// latter) rather than fail a
// call that was never sent.
func (cl *Client) route(ctx context.Context) *link {
	l, s := cl.pick()
	if l.isUp() {
		return l
	}
	if ce, ok := l.failure().(*ConnError); !ok || (ce.Reconnecting && !l.firstTry) {
		return l // closed, or a reconnection has failed already: fail fast
	}
	changed := s.changes()
	if l = s.link.Load(); l.isUp() {
		return l
	}
	t := time.NewTimer(cl.opts.DialTimeout + min(cl.opts.MinBackoff, time.Second))
	defer t.Stop()
	select {
	case <-changed:
	case <-ctx.Done():
	case <-t.C:
	case <-cl.quit:
	}
	return s.link.Load()
}
