package eventloop

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/valyala/bytebufferpool"
	"golang.org/x/sys/unix"
)

// Pools for the per-connection buffers. Separate pools because inbound
// leftovers (a partial request) and outbound batches have different sizes,
// and bytebufferpool calibrates each pool to what it sees.
var inboundPool, outboundPool bytebufferpool.Pool

// Connection state flags, loop goroutine only.
const (
	flagPaused      uint16 = 1 << iota // read interest dropped: output above high water
	flagWriting                        // write interest registered: a write was partial
	flagReading                        // read interest registered
	flagClosing                        // close once output is flushed and queued tasks ran; read no more
	flagAbort                          // close at the next settle point, drop output
	flagDirty                          // queued in loop.dirty for a flush
	flagCloseCalled                    // Close was called: the handler may write no more
	flagDrainInput                     // shutting down: read until the socket is empty, then close
	flagStalled                        // OnTraffic left input unconsumed because the output was full
	flagPeerClosed                     // a read saw the peer's FIN: no more input can come
	flagLingering                      // closed for the handler; discarding input until the peer closes
	flagDrainCheck                     // in loop.drainChecks: read once more while draining
	flagDiscarded                      // lingering, and input arrived: wait for the peer's close
)

// Conn is one client connection, owned for its lifetime by one loop.
//
// Unless a method says otherwise it must be called on that loop's goroutine:
// inside a Handler callback or a function passed to Execute. Other goroutines
// use AsyncWrite and Execute, which hand work to the loop.
//
// An idle connection holds no buffers: inbound bytes live in the loop's
// shared read buffer unless a request is partial, and output returns to a
// pool once it is written out.
type Conn struct {
	loop *loop     // immutable; nil when Options.Engine serves c: then ctx holds an *extConn
	ln   *listener // immutable: where c was accepted, whose Handler serves it
	fd   int       // immutable

	// Loop goroutine only.
	ctx         any
	in          *bytebufferpool.ByteBuffer // unconsumed input; nil when none
	out         *bytebufferpool.ByteBuffer // output, written from outPos on; nil when none
	outPos      int
	backlog     atomic.Pointer[backlog] // output spilled for a slow reader, older than out; nil until it first spills
	limit       *OutputLimit            // nil: Options.OutputHardLimit
	lastActive  time.Duration           // loop clock at the last read
	flags       uint16
	closeErr    error         // reason passed to OnClose for a deferred close
	lingerUntil time.Duration // loop clock at which a lingering close gives up
	// The addresses as the kernel gave them, once asked for: 32 bytes each
	// for IPv4 where a cached *net.TCPAddr holds 64, which matters at 100k
	// connections. LocalAddr and RemoteAddr convert on every call.
	local  unix.Sockaddr
	remote unix.Sockaddr

	// closed is set by the loop under loop.mu, and queued changes under
	// loop.mu when a task is queued, so a graceful close that sees no
	// queued task leaves none behind: every AsyncWrite that returned nil is
	// written first.
	closed atomic.Bool
	queued atomic.Int32 // AsyncWrite/Execute tasks in the loop's queue
}

func (c *Conn) isClosed() bool { return c.closed.Load() }

// pending reports the bytes of output not yet written to the socket.
func (c *Conn) pending() int {
	n := c.backlogLen()
	if c.out != nil {
		n += len(c.out.B) - c.outPos
	}
	return n
}

// Write appends p to c's output. The output is sent when the loop finishes
// the current batch of input or the callback, or earlier past
// Options.FlushThreshold. It
// returns ErrConnClosed after Close, and an error wrapping ErrOutputLimit
// (and closes c) if more than Options.OutputHardLimit (or the limits set
// with SetOutputLimit) was already waiting to be written: the peer is not
// reading. One write may be larger than the limit.
func (c *Conn) Write(p []byte) (int, error) {
	if c.loop == nil {
		return c.ext().Write(p)
	}
	if err := c.reserve(); err != nil {
		return 0, err
	}
	c.appendOutput(p)
	return len(p), nil
}

// WriteString is Write for a string, without converting it first.
func (c *Conn) WriteString(s string) (int, error) {
	if c.loop == nil {
		return c.ext().WriteString(s)
	}
	if err := c.reserve(); err != nil {
		return 0, err
	}
	if c.behind() {
		c.appendOutput([]byte(s)) // a slow reader's: the copy is the least of its costs
		return len(s), nil
	}
	c.appendOutString(s)
	return len(s), nil
}

// reserve checks that the handler may write to c: it is not closing and
// its pending output is within its limits (which closes it otherwise).
func (c *Conn) reserve() error {
	if c.isClosed() || c.flags&(flagCloseCalled|flagAbort) != 0 {
		return ErrConnClosed
	}
	return c.checkLimits()
}

// appendOutput queues p after c's pending output: straight into the
// backlog when c's newest output is there (a slow reader), else in c.out.
func (c *Conn) appendOutput(p []byte) {
	if c.out != nil && len(c.out.B)-c.outPos+len(p) > c.loop.srv.opts.FlushThreshold && !c.behind() {
		// Past FlushThreshold: write c.out now, or if the socket is
		// known to be full move it to the backlog, rather than grow it.
		if c.flags&flagWriting != 0 {
			c.loop.spill(c)
		} else {
			c.loop.loopFlush(c)
		}
	}
	if c.behind() {
		p = p[c.loop.appendBacklog(c, p):] // all of it, unless no chunk could be mapped
		if len(p) == 0 {
			return
		}
	}
	if c.out == nil {
		c.out = c.loop.outBufs.get()
	}
	c.out.B = append(c.out.B, p...)
}

func (c *Conn) appendOutString(s string) {
	if c.out == nil {
		c.out = c.loop.outBufs.get()
	}
	c.out.B = append(c.out.B, s...)
}

// OutputBuffer returns c's pending output for an encoder to append to; hand
// the result back with SetOutputBuffer. The slice is valid until the
// callback returns or the next call that writes to c.
func (c *Conn) OutputBuffer() []byte {
	if c.loop == nil {
		return c.ext().OutputBuffer()
	}
	if c.isClosed() || c.flags&(flagCloseCalled|flagAbort) != 0 {
		return nil
	}
	if c.out == nil {
		c.out = c.loop.outBufs.get()
	}
	return c.out.B[c.outPos:]
}

// SetOutputBuffer replaces c's pending output with b, normally the slice
// from OutputBuffer with replies appended. If the output pending before
// (what OutputBuffer returned) was already above c's limits
// (Options.OutputHardLimit or SetOutputLimit), c is closed and b dropped.
func (c *Conn) SetOutputBuffer(b []byte) {
	if c.loop == nil {
		c.ext().SetOutputBuffer(b)
		return
	}
	if c.isClosed() || c.flags&(flagCloseCalled|flagAbort) != 0 {
		return
	}
	if c.checkLimits() != nil {
		return
	}
	if c.out == nil {
		c.out = c.loop.outBufs.get()
	}
	c.out.B = b
	c.outPos = 0
}

// OutputFull reports whether c's pending output is above
// Options.OutputHighWater. The loop then stops reading c; a handler should
// stop consuming input and return. The input it leaves is presented again,
// without waiting for new bytes, once the output drains below
// Options.OutputLowWater.
func (c *Conn) OutputFull() bool {
	if c.loop == nil {
		return c.ext().OutputFull()
	}
	return c.pending() > c.loop.srv.opts.OutputHighWater
}

// Resume presents c's unconsumed input to OnTraffic again without waiting
// for new bytes: for a handler that stopped consuming while it waited for
// something else (a client blocked on a command) and can now go on. Call
// it on c's loop goroutine, typically in a function passed to Execute;
// the input is presented once that returns and, as after OutputFull, once
// the output is below Options.OutputLowWater. Without unconsumed input, or
// after Close, it does nothing.
func (c *Conn) Resume() {
	if c.loop == nil {
		c.ext().Resume()
		return
	}
	if c.isClosed() || c.flags&(flagCloseCalled|flagAbort) != 0 || c.in == nil {
		return
	}
	c.flags |= flagStalled // settle's resumeStalled presents it
	c.loop.markDirty(c)
}

// OutboundBuffered reports how many bytes of output wait to be written.
func (c *Conn) OutboundBuffered() int {
	if c.loop == nil {
		return c.ext().OutboundBuffered()
	}
	return c.pending()
}

// InboundBuffered reports how many unconsumed input bytes c holds between
// reads (a partial request).
func (c *Conn) InboundBuffered() int {
	if c.loop == nil {
		return c.ext().InboundBuffered()
	}
	if c.in == nil {
		return 0
	}
	return len(c.in.B)
}

// Flush writes pending output now, with one write, instead of waiting for
// the end of the batch. What the socket does not take is sent when it
// becomes writable.
func (c *Conn) Flush() error {
	if c.loop == nil {
		return c.ext().Flush()
	}
	if c.isClosed() {
		return ErrConnClosed
	}
	c.loop.loopFlush(c)
	if c.flags&flagAbort != 0 {
		return c.closeErr
	}
	return nil
}

// Close stops reading c, sends its pending output and what AsyncWrite
// accepted before the close, and then closes it; OnClose follows with a nil
// error. Writes after Close return ErrConnClosed. Inside OnTraffic the close
// takes effect when the callback returns, so `in` stays valid until then.
func (c *Conn) Close() error {
	if c.loop == nil {
		return c.ext().Close()
	}
	if c.isClosed() || c.flags&(flagCloseCalled|flagAbort) != 0 {
		return ErrConnClosed
	}
	c.flags |= flagClosing | flagCloseCalled
	c.loop.markDirty(c)
	return nil
}

// Abort closes c at once, dropping its unsent output, and hands err to
// OnClose: for a handler that finds its peer past a limit of its own (a
// subscriber whose messages pile up, say). Inside OnTraffic the close
// takes effect when the callback returns. It does nothing once c is
// closing.
func (c *Conn) Abort(err error) {
	if c.loop == nil {
		c.ext().Abort(err)
		return
	}
	if c.isClosed() {
		return
	}
	c.loop.abort(c, err)
	c.loop.markDirty(c)
}

// Context returns the value set by SetContext.
func (c *Conn) Context() any {
	if c.loop == nil {
		return c.ext().ctx
	}
	return c.ctx
}

// SetContext attaches a value to c, typically per-connection protocol state.
func (c *Conn) SetContext(v any) {
	if c.loop == nil {
		c.ext().ctx = v
		return
	}
	c.ctx = v
}

// Handler returns the Handler serving c: the Server's, or that of the
// Listener that accepted c. Any goroutine may call it.
func (c *Conn) Handler() Handler { return c.ln.handler }

// Fd returns the socket descriptor. It is valid until OnClose returns.
func (c *Conn) Fd() int { return c.fd }

// LocalAddr returns the local address of c, or nil if the socket is
// already gone and the address was not asked for earlier. Each call returns
// a new net.Addr.
func (c *Conn) LocalAddr() net.Addr {
	if c.loop == nil {
		return c.ext().LocalAddr()
	}
	if c.local == nil && !c.isClosed() {
		if sa, err := unix.Getsockname(c.fd); err == nil {
			c.local = sa
		}
	}
	return sockaddrToAddr(c.local)
}

// RemoteAddr returns the peer address of c, or nil if the peer is already
// gone and the address was not asked for earlier. Each call returns a new
// net.Addr.
func (c *Conn) RemoteAddr() net.Addr {
	if c.loop == nil {
		return c.ext().RemoteAddr()
	}
	if c.remote == nil && !c.isClosed() {
		if sa, err := unix.Getpeername(c.fd); err == nil {
			c.remote = sa
		}
	}
	return sockaddrToAddr(c.remote)
}

// AsyncWrite queues a copy of p to be written to c by its loop. Any
// goroutine may call it; writes from one goroutine arrive in order. It
// returns ErrConnClosed once c is closed and ErrServerClosed once the loop
// has stopped. Data it accepts is written before any graceful close (Close,
// the peer's half-close, Shutdown), even one already under way; it is lost
// only if c fails first, and then OnClose gets a non-nil error.
func (c *Conn) AsyncWrite(p []byte) error {
	if c.loop == nil {
		return c.ext().AsyncWrite(p)
	}
	if c.isClosed() {
		return ErrConnClosed
	}
	b := outboundPool.Get()
	b.B = append(b.B[:0], p...)
	if err := c.loop.enqueue(task{kind: taskWrite, c: c, data: b}); err != nil {
		outboundPool.Put(b)
		return err
	}
	return nil
}

// Execute queues fn to run on c's loop goroutine, where it may use every
// method of c; output it writes is flushed after it returns. Any goroutine
// may call it. Like AsyncWrite, it returns ErrConnClosed once c is closed,
// and a graceful close waits for fn; fn does not run if c fails first.
func (c *Conn) Execute(fn func(c *Conn)) error {
	if c.loop == nil {
		return c.ext().Execute(func() { fn(c) })
	}
	if c.isClosed() {
		return ErrConnClosed
	}
	return c.loop.enqueue(task{kind: taskExecute, c: c, fn: fn})
}

// LoopIndex returns the index of the loop that owns c, from 0 to the
// number of loops less one: a handler can keep per-loop state (counters,
// say) that only that loop's goroutine writes. Any goroutine may call it.
func (c *Conn) LoopIndex() int {
	if c.loop == nil {
		return c.ext().LoopIndex()
	}
	return c.loop.idx
}
