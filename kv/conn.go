package kv

import (
	"time"

	"github.com/shoalkv/shoal/config"
)

// Conn is what the command layer needs of a client's connection; the
// serving edge (package server) implements it over an eventloop.Conn. kv
// knows no sockets: it reads requests from the bytes the edge hands to
// Serve and appends replies to the Conn's output buffer.
//
// OutputBuffer, SetOutputBuffer, Write, Flush, OutputFull, Close and Resume
// are called only on the connection's own loop goroutine, from inside
// Serve or from a function run by Run or RunReserved. Run, RunReserved and
// Reserve are safe from any goroutine.
type Conn interface {
	// OutputBuffer returns the pending output to append replies to.
	OutputBuffer() []byte
	// SetOutputBuffer hands back the buffer OutputBuffer returned, grown.
	SetOutputBuffer(b []byte)
	// Write queues p as output (a reply that was held, a message).
	Write(p []byte) (int, error)
	// Flush writes what is pending now; an error means the connection
	// was closed (for example its output passed the hard limit).
	Flush() error
	// OutputFull reports whether the peer is not keeping up: the pending
	// output is above the high-water mark and the pipeline should wait.
	OutputFull() bool
	// Close closes the connection once what is queued is written.
	Close() error
	// Resume presents the connection's buffered input to Serve again,
	// after a blocking command was answered.
	Resume()
	// Run runs fn on the connection's loop, for work that starts on
	// another goroutine (a pub/sub message, a served blocking pop, CLIENT
	// KILL). It fails once the connection is closed.
	Run(fn func()) error
	// Reserve keeps a graceful close waiting for one RunReserved call:
	// replies held for an fsync must still be sent.
	Reserve() error
	// RunReserved runs fn on the loop, consuming a Reserve (or not, if
	// none was taken: then it is Run).
	RunReserved(fn func()) error
	// SetOutputClass bounds the connection's unsent output by class's
	// limits (client-output-buffer-limit, which kv hands the edge with
	// Edge.SetOutputLimit). A new connection is ClassNormal.
	SetOutputClass(class int)
	// OutputBacklog is the output waiting because the peer reads slowly:
	// CLIENT LIST's omem. Any goroutine may call it.
	OutputBacklog() int
	// Abort closes the connection now, dropping its unsent output: a
	// subscriber past its class's limit. The edge logs reason.
	Abort(reason error)
}

// ConnInfo describes a new connection to OpenClient: what CLIENT LIST and
// CLIENT KILL show of it, and which loop serves it.
type ConnInfo struct {
	RemoteAddr string // "ip:port" as CLIENT LIST's addr ("/socket/path:0" on a Unix socket); "" if unknown
	LocalAddr  string // CLIENT LIST's laddr
	Fd         int    // CLIENT LIST's fd
	Loop       int    // the index of the loop serving it, from 0
	UnixSocket bool   // on a Unix socket: flagged U, named "unix:/socket/path" to MONITOR, local (as Redis)
}

// Edge is what INFO and CONFIG GET ask of the serving edge that runs the
// Handler; set with Boot. The edge owns these facts; kv does not copy them.
type Edge interface {
	// Listener reports the RESP port (the one bound, also for ":0"), the
	// bind address, maxclients and the idle timeout.
	Listener() (port int, bind string, maxClients int, idle time.Duration)
	// RejectedConnections is how many connections were refused over
	// maxclients; they never reached the Handler.
	RejectedConnections() int64
	// SetMaxClients changes maxclients for the connections accepted from
	// now on (CONFIG SET maxclients); open ones stay.
	SetMaxClients(n int)
	// SetOutputLimit sets the limits of one class of client
	// (config.ClassNormal, ...) for every connection of that class, now
	// and to come. kv calls it at Boot and on CONFIG SET.
	SetOutputLimit(class int, l config.OutputLimit)
	// OutputMemory is the memory the edge holds for output its slow
	// readers have not taken (used_memory, maxmemory-clients), and how
	// much of such memory it has given back since it started.
	OutputMemory() (held, freed int64)
}

// BootInfo is what the serving edge tells the Handler once it starts.
type BootInfo struct {
	// Loops is the number of event loops; ConnInfo.Loop is below it.
	Loops int
	// FlushThreshold is the reply size after which Serve hands replies
	// to the Conn mid-batch; 0 keeps DefaultFlushThreshold.
	FlushThreshold int
	// Edge answers INFO's and CONFIG's questions about the listener.
	Edge Edge
}

// DefaultFlushThreshold is the reply size after which Serve hands replies
// to the Conn mid-batch until Boot says otherwise; the eventloop's default.
const DefaultFlushThreshold = 64 << 10

// Client is one connection's command state (parser, protocol, transaction,
// subscriptions). The serving edge keeps one per connection, typically
// embedded in its own per-connection struct so that both are one
// allocation, and passes it to OpenClient, Serve and CloseClient. A Client
// must not be copied after OpenClient.
type Client struct {
	c client
}

// ID is the client's CLIENT ID.
func (c *Client) ID() int64 { return c.c.id }

// Addr is the peer address CLIENT LIST shows.
func (c *Client) Addr() string { return c.c.addr }

// Class is the client's class for the output limits: config.ClassPubsub
// while it has a subscription, else config.ClassNormal.
func (c *Client) Class() int { return classOf(&c.c) }

// Name is the client's CLIENT SETNAME name, "" if none.
func (c *Client) Name() string { return c.c.getName() }

// Opened reports whether OpenClient set c up (it is nil-safe for an edge
// that refused the connection before).
func (c *Client) Opened() bool { return c != nil && c.c.h != nil }
