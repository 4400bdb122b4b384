// Package gnetengine serves an eventloop.Handler on gnet v2
// (github.com/panjf2000/gnet/v2) instead of the package's own epoll/kqueue
// loops:
//
//	srv, err := eventloop.NewServer(h, eventloop.Options{Addr: addr, Engine: gnetengine.Engine{}})
//
// The handler, the *eventloop.Conn it is handed and the Options mean what
// package eventloop documents; the conformance suite
// (eventloop/conformance_test.go) runs every promise there against both
// engines. It lives in a package of its own so that a program importing
// eventloop without choosing this engine does not link gnet.
//
// # How the promises are kept
//
// OnTraffic gets gnet's read buffer (gnet's Peek) with no copy, or, when an
// earlier rest is kept, gnet's copy of that rest with the new bytes
// appended; what it leaves stays in gnet's inbound buffer. Replies are
// gathered per connection and handed to gnet with one Write when the
// callback returns: gnet writes them at once and keeps what the socket
// does not take. Pending output is what is gathered plus gnet's outbound
// buffer, and OutputFull, OutputHardLimit and the low-water resume count
// both. AsyncWrite and Execute queue per connection and run in order in
// one gnet task, and a graceful close waits for what they accepted.
// Graceful closes half-close and linger as the native engine's do.
//
// gnet reports neither "output drained" nor timers per loop, so one
// goroutine per server polls the connections that wait for their output
// to drain, for a drain to end or a linger to end (every 2 ms, only while
// there are such connections), and scans for idle connections every
// IdleTimeout/16; the checks run on each connection's loop.
//
// # What differs from the native engine
//
//   - Conn.Reserve does not hold a graceful close: ExecuteReserved is
//     Execute. A reply held for a disk sync (appendfsync always) can be
//     lost to a peer's half-close or a Shutdown that gets there first.
//   - Backpressure holds output, not input. gnet cannot stop reading a
//     socket, so above OutputHighWater the engine stops presenting input to
//     the handler, but gnet keeps reading it into its inbound buffer. A
//     peer that sends without reading is therefore not held back by TCP
//     flow control; it is cut off when its unconsumed input passes
//     MaxInboundBuffer (ErrInboundLimit).
//   - A peer's half-close closes the connection at once: gnet closes a
//     socket as soon as a read finds EOF. Replies already written to the
//     socket arrive; gnet tries once to write what it still holds; input
//     held back by backpressure is not answered, and AsyncWrite or
//     Execute work still queued is dropped (OnClose then gets an error
//     saying so rather than nil).
//   - Balancers: RoundRobin maps to gnet's round-robin; LeastConnections
//     and LoadAware to gnet's least-connections (gnet publishes no load).
//     gnet counts a connection when its loop registers it, not when it is
//     assigned, so a burst of accepts may land on one loop. Other Balancer
//     implementations are refused by Start. Server.Counters reports only
//     Conns, Load (always 0) and OutputBacklog.
//   - A slow reader's output: gnet keeps what the socket does not take in
//     its own outbound buffer, on the Go heap. Once that holds 64 KiB for a
//     connection, further output waits in an off-heap backlog as on the
//     native engine, and is fed to gnet 256 KiB at a time as it drains,
//     checked every 2 ms by the housekeeper (gnet reports no "written"
//     event): a slow reader that catches up waits up to that long for more.
//   - Shutdown cannot close gnet's listener while the loops drain, so
//     connections that arrive during a drain are accepted and closed at
//     once instead of refused.
//   - When accept fails for want of descriptors (EMFILE), gnet stops the
//     whole engine instead of backing off; Server.Serve then returns an
//     error saying the engine stopped on its own.
//   - Smart flush is one write per read: gnet presents each read on its
//     own, where the native engine gathers up to eight reads of one
//     connection before writing. FlushThreshold has no further effect;
//     Conn.Flush writes at once as documented.
//   - Each connection holds gnet's own buffers while open.
//   - ReusePort needs an explicit port: gnet binds each loop's listener to
//     the address as given, so with ":0" every loop would get a port of its
//     own; Start refuses it.
//   - No TLS yet: NewServer refuses Options.TLSConfig with this engine.
package gnetengine
