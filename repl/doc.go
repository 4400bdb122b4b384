// Package repl holds the replica side of Redis's replication protocol as
// pure functions over bytes and readers: the replies of the handshake
// (+FULLRESYNC, +CONTINUE), the header of the snapshot a primary sends
// ($<length> from disk, $EOF:<mark> diskless) and the copy of that payload.
// It does no dialing and knows no keyspace: package kv runs the link and
// applies what arrives, so that everything here can be fuzzed alone.
package repl
