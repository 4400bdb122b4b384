// Package kv is Shoal's Redis-compatible command layer: a Handler for the
// eventloop that parses RESP with proto/resp, executes commands against a
// store.Store and writes replies in RESP2 or RESP3 as negotiated by HELLO.
//
// Command names, arities, reply types and error texts follow redis-server 7.0
// so that redis-cli, redis-benchmark, go-redis and redis_exporter work
// unchanged; the package tests check this byte for byte against a real
// redis-server.
//
// INFO reports what Shoal knows and keeps the fields monitoring tools
// require even where it does not: the persistence fields describe a server
// with persistence off. Commandstats and Latencystats come from per-loop
// command counters; one command in 16 is timed, so usec and the percentiles
// are estimates from that sample. Settings have one owner each and are read from it: the
// port, bind address, maxclients, timeout and rejected_connections from the
// eventloop Server (which the Handler learns through OnBoot), maxmemory and
// its policy from the store.
//
// Beside RESP, HTTPHandler and FrameHandler serve the same keyspace over
// HTTP/1.1 (a small REST API, plus /healthz and Prometheus /metrics) and
// proto/frame, as eventloop.Listeners on the same Server, under the same
// requirepass and protected mode. MetricsCollector exposes the counters to
// a program's own Prometheus registry.
//
// Transactions (multi.go) run an EXEC with every other loop held between
// batches by its exec gate, so no other command interleaves; WATCH marks
// watchers after writes through a table skipped while nobody watches.
// Pub/sub (pubsub.go) delivers a message to a subscriber on any loop through
// a per-subscriber mailbox flushed by Conn.Execute, under the eventloop's
// output limits.
//
// Ownership: a Handler is shared by every loop. Per-connection state (the
// parser, protocol version, authentication, name) lives in a client stored in
// the Conn's context and is touched only by that connection's loop, except for
// the fields CLIENT LIST reads, which are guarded (see client).
package kv
