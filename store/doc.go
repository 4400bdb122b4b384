// Package store is Shoal's in-memory keyspace: Redis string semantics (GET/SET with all
// options, INCRBY[FLOAT], APPEND, GET/SETRANGE, the EXPIRE family, RENAME, MGET/MSET,
// KEYS/SCAN/RANDOMKEY) over a sharded, GC-friendly layout, with lazy plus active expiry
// and maxmemory eviction (noeviction, allkeys-random, allkeys-lru, volatile-lru,
// volatile-ttl).
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
