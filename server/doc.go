// Package server is Shoal's serving edge: it puts the command layer (a
// kv.Handler) on eventloop connections. Handler is the RESP front, an
// eventloop.Handler: it applies protected mode when a connection opens,
// keeps one session per connection (the kv.Client and its Conn, one
// allocation), hands each read's bytes to kv.Handler.Serve, and logs closes
// at buffer limits. HTTPHandler and FrameHandler serve the same keyspace
// over HTTP/1.1 (a small REST API, /healthz and Prometheus /metrics) and
// proto/frame, as eventloop.Listeners on the same Server, under the same
// requirepass and protected mode. MetricsCollector exposes the loops'
// counters to a program's own Prometheus registry, beside
// kv.Handler.MetricsCollector.
//
// kv knows no sockets: what it needs of a connection is the small kv.Conn
// interface, which a session implements over an eventloop.Conn, and what
// it needs of the listener (the port, maxclients, connections refused) is
// kv.Edge, which Handler implements over the eventloop.Server it learns in
// OnBoot.
//
// Ownership: a Handler is shared by every loop; a session is touched only
// by its connection's loop, except through kv.Conn's Run, RunReserved and
// Reserve, which hand work to that loop.
package server
