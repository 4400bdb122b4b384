// Package kv is Shoal's Redis-compatible command layer: commands over a
// store. A Handler parses RESP with proto/resp, executes commands against a
// store.Store and writes replies in RESP2 or RESP3 as negotiated by HELLO.
// It knows no sockets, HTTP or frames: the serving edge (package server)
// owns the connections and calls OpenClient, Serve and CloseClient; what
// commands need of a connection (its output buffer, running work on its
// loop for blocking pops, pub/sub and CLIENT KILL, holding replies for an
// fsync) is the small Conn interface, and what INFO and CONFIG need of the
// listener is Edge.
//
// Command names, arities, reply types and error texts follow redis-server 7.0
// so that redis-cli, redis-benchmark, go-redis and redis_exporter work
// unchanged; the package tests check this byte for byte against a real
// redis-server.
//
// INFO reports what Shoal knows and keeps the fields monitoring tools
// require even where it does not. Its persistence section describes the
// append-only file when one is attached (AttachAOF): aof_enabled, rewrites,
// sizes, the last write's status; the RDB fields are those of a Redis with
// saving off. Commandstats and Latencystats come from per-loop command counters;
// one command in 16 is timed, so usec and the percentiles are estimates
// from that sample. CONFIG GET/SET and INFO's settings read the settings
// table (package config, Options.Params), whose rows have one owner each
// and are read from it: the port, bind address, maxclients and timeout
// from the edge (Boot), maxmemory and its policy from the store, the
// password, log level and persistence settings from kv.
//
// Transactions (multi.go) run an EXEC with every other loop held between
// batches by its exec gate, so no other command interleaves; WATCH marks
// watchers after writes through a table skipped while nobody watches.
// Pub/sub (pubsub.go) delivers a message to a subscriber on any loop through
// a per-subscriber mailbox flushed on the subscriber's loop (Conn.Run),
// under the edge's output limits.
//
// Ownership: a Handler is shared by every loop. Per-connection state (the
// parser, protocol version, authentication, name) lives in a Client the edge
// keeps per connection and is touched only by that connection's loop, except
// for the fields CLIENT LIST reads, which are guarded (see client).
package kv
