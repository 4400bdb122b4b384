// Package repl holds the pieces of Redis's replication protocol that need no
// keyspace, as pure functions over bytes and readers, so that they can be
// fuzzed and tested alone. Replica side: the replies of the handshake
// (+FULLRESYNC, +CONTINUE), the header of the snapshot a primary sends
// ($<length> from disk, $EOF:<mark> diskless) and the copy of that payload;
// Conn holds the link's socket, so package kv, which runs the link and
// applies what arrives, imports no net. Primary side: Backlog, the ring of
// the last repl-backlog-size bytes of the stream that a partial resync
// (+CONTINUE) is served from, with Redis's offsets.
package repl
