// Package resp implements the Redis serialization protocol (RESP2 and RESP3) as
// pure functions over byte slices: a zero-copy command parser for the server
// side, append-style reply writers, and a zero-copy reply reader for clients.
//
// The parser follows redis-server 7's processMultibulkBuffer and
// processInlineBuffer (src/networking.c) closely enough that a byte stream
// Redis accepts is accepted here with the same arguments, and a stream Redis
// rejects is rejected with the same error text, so a server built on this
// package can reply "-" + err.Error() and close the connection as Redis does.
//
// Nothing here does I/O or keeps a reference to the caller's buffers beyond
// the documented lifetimes, so every function can be fuzzed and benchmarked
// in isolation. In the steady state neither parsing nor writing allocates.
package resp
