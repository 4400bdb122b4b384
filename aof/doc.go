// Package aof is Shoal's append-only file: its format, the loader that
// replays it, the writer that appends to it, and the rewrite that compacts
// it.
//
// # Format
//
// One RESP multibulk command per write, exactly as Redis writes its AOF, so
// redis-server 7 loads the file (it migrates a single old-style file into
// its multi-part appendonlydir on first start) and redis-check-aof checks
// it. The kv layer logs what a command did rather than what it was asked:
// relative expirations become absolute (SET ... PXAT, PEXPIREAT), so a replay
// does not extend a TTL. Records are encoded with proto/resp's writers and
// read back with its command parser, held to what a file may contain: no
// inline commands, no empty ones, and every byte of the framing exactly as
// written.
//
// # Loading
//
// Load replays a file through a callback, in order. A last command cut short
// by the end of the file (a crash during a write) is cut off the file, as
// Redis's aof-load-truncated yes does; anything malformed before that is a
// *CorruptError naming the byte offset where the bad command starts, and the
// file is left untouched.
//
// # Writing: group commit
//
// Records from every event loop are appended to one in-memory buffer under
// a mutex held for a copy, never for I/O. One writer goroutine owns the file:
// each round it takes the whole buffer, writes it with one write(2), and
// under appendfsync always follows with one fdatasync, then calls back every
// caller whose records that sync covered. A loop therefore never waits for
// the disk or for another loop: it appends, and holds the replies of that
// batch until the callback hands them back to it (kv does this through its
// Conn's RunReserved, which the serving edge maps to eventloop's
// Conn.ExecuteReserved, so a graceful close waits for them). The more loops and connections write at once,
// the more records each fdatasync covers.
//
// A caller may also lead a round itself (SyncTo, TrySyncTo): kv's loops do
// so at the end of each cycle, as Redis syncs in beforeSleep, so that the
// common case needs no other goroutine; rounds take turns under one lock,
// whoever runs them, and each carries everything appended until it starts.
// A loop that finds a round running does not wait (TrySyncTo reports busy)
// and takes the callback path above. Per-loop files with a manifest
// would avoid even the shared mutex, but a replay would then have to merge
// files whose order across loops is lost; one buffer keeps the file's
// order the order the writes were applied in (kv guarantees that per key).
//
// Under everysec the writer writes on every round and syncs at most once a
// second; under no it never syncs. A write error (a full disk) keeps the
// unwritten records queued, cuts a partial record back off the file, and is
// reported by WriteError until a retry (every second) succeeds: callers
// waiting under always are told their records failed, and kv refuses writes
// with -MISCONF meanwhile, as Redis does.
//
// # Rewriting
//
// A Rewrite builds a new file beside the old one: the caller's snapshot of
// the keyspace at one instant (Start), then the records appended since
// then, then an atomic rename; the old file keeps receiving every record
// until the switch, so a crash at any point leaves one complete file.
package aof
