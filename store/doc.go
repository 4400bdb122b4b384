// Package store is Shoal's in-memory keyspace: every Redis value type over a sharded,
// GC-friendly layout, with lazy plus active expiry and maxmemory eviction (noeviction,
// allkeys-random, allkeys-lru, volatile-lru, volatile-ttl). Strings have their
// operations here (GET/SET with all options, INCRBY[FLOAT], APPEND, GET/SETRANGE);
// so do the keyspace's (the EXPIRE family, RENAME, COPY, MGET/MSET, KEYS/SCAN/RANDOMKEY,
// TYPE, OBJECT).
//
// Collections. A hash (hash.go: listpack, or the paged dict of bdict.go), list (list.go:
// a chain of packed 8 KiB nodes), set (set.go: intset or dict) or sorted set (zset.go:
// listpack, or the counted B+tree of zset_tree.go with a member index) is a store.Object
// (object.go) in its shard's object table; the key's entry is an ordinary entry whose
// four value bytes index that table, so lookup, expiry, LRU, eviction, TYPE and SCAN are
// the same code for every kind. A command reads one through View (read lock), changes one
// through Update (write lock; changed in place or replaced, its Size re-accounted against
// maxmemory, and an emptied collection deletes its key) or several keys at once through
// Tx (their shards locked in index order). A collection is one Go pointer however many
// elements it holds; its chunks are pointer-free.
//
// Layout. A key's xxhash is computed once per operation; its top bits choose one of a
// power-of-two number of shards, each behind its own RWMutex, and its low 32 bits drive
// the shard's open-addressing index. The index holds uint32 slots pointing into a dense
// slice of 28-byte pointer-free entries (hash, arena ref, lengths, expiry, type and LRU
// clock); keys and values live together in per-shard 16 KiB byte pages carved into size
// classes with free lists. The garbage collector therefore sees a handful of pointers per
// shard instead of two or three per key, and its cost stays flat as the keyspace grows.
// An index doubles or halves step by step, a few entries per write (shard.go), so no
// write waits for a whole shard to be rehashed.
//
// Memory. Arena pages, the entries and the index are mapped with mmap outside the Go
// heap (offheap.go; on platforms without mmap they stay on the heap), so the collector
// neither scans them nor lets the heap double over them, and a freed page, an emptied
// shard or a Flush gives its memory back to the kernel (on Linux at once).
//
// Atomicity. Each operation is atomic for its key; multi-key operations (MGET, MSET,
// MSETNX, DEL, EXISTS, RENAME) lock every shard they touch, in shard index order.
//
// Slices. Methods that return values append them to a caller-supplied dst, so the hot
// paths allocate nothing; MGet's visit callback sees arena memory valid only during the
// call (the page may be unmapped or reused once the shard is unlocked). No other method
// returns store memory.
package store
