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
	eng connEngine // immutable: the engine serving c; its *loop on the native engine
	ln  *listener  // immutable: where c was accepted, whose Handler serves it
	fd  int        // immutable

	// Loop goroutine only. On another engine only ctx of these is used:
	// the engine keeps the rest of its connection's state itself.
	ctx        any
	in         *bytebufferpool.ByteBuffer // unconsumed input; nil when none
	out        *bytebufferpool.ByteBuffer // output, written from outPos on; nil when none
	outPos     int
	backlog    atomic.Pointer[backlog] // output spilled for a slow reader, older than out; nil until it first spills
	limit      *OutputLimit            // nil: Options.OutputHardLimit
	lastActive time.Duration           // loop clock at the last read
	flags      uint16
	stage      uint16 // 1 + the index of the cycle's read-ahead of c (readahead.go); 0: none
	closeErr   error  // reason passed to OnClose for a deferred close
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

// connEngine is the seam between a Conn's methods and the engine serving
// the Conn, set once when the Conn is made: on the native engine the
// Conn's *loop (loopconn.go), on Options.Engine an engineConn (engine.go)
// that hands each call to the engine's own connection. Each exported
// method of Conn is one call through it, so no method asks which engine
// it is on. The native engine pays for it with an indirect call in place
// of a direct one, within the noise of BenchmarkConnReply, and a handler
// makes a few per batch of requests; the interface in place of a *loop
// costs Conn 8 bytes, which the linger deadline's move to loop.lingering
// gave back (TestConnFitsItsSizeClass).
//
// Each method is the Conn method of the same name, less the "conn", for c.
type connEngine interface {
	connWrite(c *Conn, p []byte) (int, error)
	connWriteString(c *Conn, s string) (int, error)
	connOutputBuffer(c *Conn) []byte
	connSetOutputBuffer(c *Conn, b []byte)
	connOutputFull(c *Conn) bool
	connResume(c *Conn)
	connOutboundBuffered(c *Conn) int
	connInboundBuffered(c *Conn) int
	connFlush(c *Conn) error
	connClose(c *Conn) error
	connAbort(c *Conn, err error)
	connLocalAddr(c *Conn) net.Addr
	connRemoteAddr(c *Conn) net.Addr
	connAsyncWrite(c *Conn, p []byte) error
	connExecute(c *Conn, fn func(c *Conn)) error
	connReserve(c *Conn) error
	connExecuteReserved(c *Conn, fn func(c *Conn)) error
	connAtCycleEnd(c *Conn, fn func(c *Conn)) error
	connSetOutputLimit(c *Conn, l *OutputLimit)
	connOutputBacklog(c *Conn) int
	connLoopIndex() int
}

func (c *Conn) isClosed() bool { return c.closed.Load() }

// Write appends p to c's output. The output is sent when the loop finishes
// the current batch of input or the callback, or earlier past
// Options.FlushThreshold. It
// returns ErrConnClosed after Close, and an error wrapping ErrOutputLimit
// (and closes c) if more than Options.OutputHardLimit (or the limits set
// with SetOutputLimit) was already waiting to be written: the peer is not
// reading. One write may be larger than the limit.
func (c *Conn) Write(p []byte) (int, error) { return c.eng.connWrite(c, p) }

// WriteString is Write for a string, without converting it first.
func (c *Conn) WriteString(s string) (int, error) { return c.eng.connWriteString(c, s) }

// OutputBuffer returns c's pending output for an encoder to append to; hand
// the result back with SetOutputBuffer. The slice is valid until the
// callback returns or the next call that writes to c.
func (c *Conn) OutputBuffer() []byte { return c.eng.connOutputBuffer(c) }

// SetOutputBuffer replaces c's pending output with b, normally the slice
// from OutputBuffer with replies appended. If the output pending before
// (what OutputBuffer returned) was already above c's limits
// (Options.OutputHardLimit or SetOutputLimit), c is closed and b dropped.
func (c *Conn) SetOutputBuffer(b []byte) { c.eng.connSetOutputBuffer(c, b) }

// OutputFull reports whether c's pending output is above
// Options.OutputHighWater. The loop then stops reading c; a handler should
// stop consuming input and return. The input it leaves is presented again,
// without waiting for new bytes, once the output drains below
// Options.OutputLowWater.
func (c *Conn) OutputFull() bool { return c.eng.connOutputFull(c) }

// Resume presents c's unconsumed input to OnTraffic again without waiting
// for new bytes: for a handler that stopped consuming while it waited for
// something else (a client blocked on a command) and can now go on. Call
// it on c's loop goroutine, typically in a function passed to Execute;
// the input is presented once that returns and, as after OutputFull, once
// the output is below Options.OutputLowWater. Without unconsumed input, or
// after Close, it does nothing.
func (c *Conn) Resume() { c.eng.connResume(c) }

// OutboundBuffered reports how many bytes of output wait to be written.
func (c *Conn) OutboundBuffered() int { return c.eng.connOutboundBuffered(c) }

// InboundBuffered reports how many unconsumed input bytes c holds between
// reads (a partial request).
func (c *Conn) InboundBuffered() int { return c.eng.connInboundBuffered(c) }

// Flush writes pending output now, with one write, instead of waiting for
// the end of the batch. What the socket does not take is sent when it
// becomes writable.
func (c *Conn) Flush() error { return c.eng.connFlush(c) }

// Close stops reading c, sends its pending output and what AsyncWrite
// accepted before the close, and then closes it; OnClose follows with a nil
// error. Writes after Close return ErrConnClosed. Inside OnTraffic the close
// takes effect when the callback returns, so `in` stays valid until then.
func (c *Conn) Close() error { return c.eng.connClose(c) }

// Abort closes c at once, dropping its unsent output, and hands err to
// OnClose: for a handler that finds its peer past a limit of its own (a
// subscriber whose messages pile up, say). Inside OnTraffic the close
// takes effect when the callback returns. It does nothing once c is
// closing.
func (c *Conn) Abort(err error) { c.eng.connAbort(c, err) }

// Context returns the value set by SetContext.
func (c *Conn) Context() any { return c.ctx }

// SetContext attaches a value to c, typically per-connection protocol state.
func (c *Conn) SetContext(v any) { c.ctx = v }

// Handler returns the Handler serving c: the Server's, or that of the
// Listener that accepted c. Any goroutine may call it.
func (c *Conn) Handler() Handler { return c.ln.handler }

// Fd returns the socket descriptor. It is valid until OnClose returns.
func (c *Conn) Fd() int { return c.fd }

// LocalAddr returns the local address of c, or nil if the socket is
// already gone and the address was not asked for earlier. Each call returns
// a new net.Addr.
func (c *Conn) LocalAddr() net.Addr { return c.eng.connLocalAddr(c) }

// RemoteAddr returns the peer address of c, or nil if the peer is already
// gone and the address was not asked for earlier. Each call returns a new
// net.Addr.
func (c *Conn) RemoteAddr() net.Addr { return c.eng.connRemoteAddr(c) }

// AsyncWrite queues a copy of p to be written to c by its loop. Any
// goroutine may call it; writes from one goroutine arrive in order. It
// returns ErrConnClosed once c is closed and ErrServerClosed once the loop
// has stopped. Data it accepts is written before any graceful close (Close,
// the peer's half-close, Shutdown), even one already under way; it is lost
// only if c fails first, and then OnClose gets a non-nil error.
func (c *Conn) AsyncWrite(p []byte) error { return c.eng.connAsyncWrite(c, p) }

// Execute queues fn to run on c's loop goroutine, where it may use every
// method of c; output it writes is flushed after it returns. Any goroutine
// may call it. Like AsyncWrite, it returns ErrConnClosed once c is closed,
// and a graceful close waits for fn; fn does not run if c fails first.
func (c *Conn) Execute(fn func(c *Conn)) error { return c.eng.connExecute(c, fn) }

// LoopIndex returns the index of the loop that owns c, from 0 to the
// number of loops less one: a handler can keep per-loop state (counters,
// say) that only that loop's goroutine writes. Any goroutine may call it.
func (c *Conn) LoopIndex() int { return c.eng.connLoopIndex() }
