// Package eventloop is an epoll/kqueue event-loop server framework.
//
// A Server runs N loops (default GOMAXPROCS). Each loop is one goroutine
// with its own poller (level-triggered epoll on Linux, kqueue on darwin and
// FreeBSD) and owns the connections handed to it for their whole life. One
// acceptor goroutine accepts connections and hands each to the loop a
// Balancer picks (RoundRobin, LeastConnections, or the default LoadAware);
// with Options.ReusePort each loop accepts on its own SO_REUSEPORT listener
// instead. On Linux an idle loop parks on the runtime's netpoller (its
// epoll descriptor is registered there) rather than blocking in epoll_wait,
// and reads and writes its non-blocking sockets with raw system calls, so
// serving a request costs no scheduler hand-off.
//
// One Server may serve several addresses, each with its own Handler
// (Options.Listeners), as nginx serves several listen directives: their
// connections share the loops, the Balancer and every limit, so one
// process can speak several protocols over one keyspace without a second
// set of loops.
//
// # Reading and writing
//
// A loop reads into one read buffer it shares among its connections and
// calls Handler.OnTraffic with a slice of it: no copy. Bytes OnTraffic does
// not consume (a partial request) are copied into a pooled per-connection
// buffer and presented again, with the next bytes appended. Replies written
// with Conn.Write, or appended through Conn.OutputBuffer, are gathered and
// written with one write once the input has drained (a read returned less
// than the buffer, or EAGAIN), or earlier past Options.FlushThreshold. What
// the socket does not take waits for writability, in order. An idle
// connection holds no buffers.
//
// A Handler that is a ReadAheadHandler is shown, when one poll finds
// several plaintext connections ready, the first read of each before any
// OnTraffic runs (a second per-loop buffer holds them), so that it can
// start what they need together: Shoal prefetches the keys of the first
// command of each, so that the cache misses of different clients overlap.
//
// # Limits
//
// Above Options.OutputHighWater of pending output a loop stops reading the
// connection until its output drains below Options.OutputLowWater.
// Conn.OutputFull tells a handler the same, so it can stop consuming a deep
// pipeline mid-way and return; what it leaves is presented again once the
// output drains, without waiting for the peer to send more. A write that
// finds more than Options.OutputHardLimit still unsent (a peer that does
// not read) closes the connection; one reply may be larger than the limit.
// Conn.SetOutputLimit replaces that limit for a connection with an
// OutputLimit shared by a class of connections, as Redis's
// client-output-buffer-limit: a hard limit, and a soft limit the output
// may stay above only for a while. OnClose is told why (ErrOutputLimit);
// without an OnClose the loop logs it. Output a slow reader leaves unsent
// moves, past 64 KiB, into a backlog of chunks mapped outside the Go heap
// and unmapped as they are written, so what such a peer costs is its
// pending bytes, no more, and the memory goes back to the kernel when the
// peer reads or goes (Conn.OutputBacklog, LoopCounters.OutputBacklog).
// Unconsumed input past Options.MaxInboundBuffer closes the connection
// too. Options.MaxConns turns extra connections away with
// Options.RejectMessage, and accept backs off when descriptors run out.
// Options.IdleTimeout closes silent connections, tracked by one timing
// wheel per loop.
//
// # Closing
//
// A graceful close (Conn.Close, the peer's half-close, Server.Shutdown)
// sends all pending output first. A Handler that is a DrainHandler is told
// as Shutdown begins (OnDrain, per open connection), to say goodbye in its
// protocol (HTTP/2's GOAWAY). Server.Shutdown also answers everything
// already in each socket: it keeps reading, under the usual backpressure,
// until the output is all written and a read then finds the socket empty.
// If the peer has not yet received
// every reply, the descriptor is then half-closed and the loop discards
// whatever else the peer sends until the peer has them all or closes (at
// most two seconds), because closing a socket that has unread input, or
// that input reaches later, sends a reset, and the reset drops the replies
// still on their way.
//
// # TLS
//
// Options.TLSConfig (and Listener.TLSConfig for another address) makes a
// port speak TLS for any Handler: OnTraffic sees the plaintext, as a slice
// of a per-loop buffer, and what the Handler writes is sealed at the flush
// with one crypto/tls Write for the whole batch, so the replies of a read
// leave in as few full records as fit (dynamic record sizing is off in the
// copy of the config the listener keeps). Output the socket does not take
// waits, sealed, in the connection's backlog; the output limits and
// OutboundBuffered count it with the plaintext not yet sealed. Session
// tickets, ALPN, SNI through GetConfigForClient, client certificates and
// certificates swapped in by GetCertificate work as crypto/tls does them;
// Conn.TLSConnectionState reports them. OnOpen runs once the handshake is
// over, and a connection whose handshake fails is closed without the
// Handler hearing of it (LoopCounters.TLSHandshakeFailures counts it).
//
// Records run on the loop: crypto/tls's Conn reads and writes through a
// transport that is the loop's buffers, not a socket, and reports
// "no more input" as a temporary error, after which crypto/tls keeps its
// partial record. There is no goroutine and no net.Conn per established
// connection. The handshake is the exception: crypto/tls cannot resume a
// handshake that stopped for input, so each handshake in progress runs on
// a goroutine of its own, at most Options.MaxTLSHandshakes at once (the
// rest wait their turn), which the loop feeds with what it reads and whose
// writes the loop sends. A connection gets that goroutine only once its
// whole ClientHello has arrived and looks like TLS; plaintext, garbage and
// oversize records are turned away on the loop, and
// Options.TLSHandshakeTimeout closes a handshake that does not finish. The
// handshake's cryptography thus runs beside the loops, not on them.
//
// An idle TLS connection keeps crypto/tls's Conn (about 900 bytes) and
// its two record ciphers (about 900 bytes each with AES-GCM), and no input
// buffer: the loop lends crypto/tls its own buffer for each read, keeps
// only a record cut across reads, and drops the handshake's buffers once
// it is over (tls_buffers.go). About 4 KB of resident memory more than an
// idle plaintext connection, as BenchmarkIdleTLSConnMemory measures it.
// The gnet engine has no TLS.
//
// # Engines
//
// Options.Engine chooses what serves the connections: nil, the default, is
// the native engine described here; gnetengine.Engine{} (package
// eventloop/gnetengine) serves the same Handler and the same *Conn on gnet
// v2, and its documentation lists the promises above it cannot keep. The
// conformance suite (conformance_test.go) runs every promise of this
// documentation on both engines.
//
// # Goroutines
//
// Handler callbacks run on the connection's loop goroutine and must not
// block. Conn methods are for that goroutine, except AsyncWrite and Execute,
// which any goroutine may call to hand a reply or a function to the loop;
// they are how work done elsewhere gets back to a connection, in any order.
// What they accept is not lost to a graceful close (Conn.Close, the peer's
// half-close, Server.Shutdown): the close waits for it. Once a connection
// is closed they return ErrConnClosed.
package eventloop
