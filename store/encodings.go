package store

import (
	"fmt"
	"sync/atomic"
)

// EncodingLimits are Redis's thresholds between a collection's small and
// large encodings (hash-max-listpack-entries and the others of the same
// names), and the size of a list's nodes (list-max-listpack-size). They
// belong to the process, as to one redis-server: every Store in it shares
// them. A change applies from each collection's next write, as in Redis;
// nothing is converted at once.
type EncodingLimits struct {
	HashMaxListpackEntries int64
	HashMaxListpackValue   int64 // at most MaxListpackValue
	SetMaxIntsetEntries    int64
	ZSetMaxListpackEntries int64
	ZSetMaxListpackValue   int64 // at most MaxListpackValue
	// ListMaxListpackSize is -1..-5 (nodes of at most 4, 8, 16, 32 or
	// 64 KiB) or a positive count of elements per node (each node still
	// at most 8 KiB, as Redis's safety limit).
	ListMaxListpackSize int64
	// StreamNodeMaxBytes and StreamNodeMaxEntries bound a stream node
	// (stream-node-max-bytes, stream-node-max-entries; 0: no bound but
	// the listpack's 1 GiB).
	StreamNodeMaxBytes   int64
	StreamNodeMaxEntries int64
}

// MaxListpackValue is the longest field, value or member a small hash or
// sorted set holds here: its listpack keeps each length in one byte.
const MaxListpackValue = 255

// redis-server 7.0's built-in values (the sample redis.conf lowers
// hash-max-listpack-entries to 128).
const (
	HashMaxListpackEntries = 512
	HashMaxListpackValue   = 64
	SetMaxIntsetEntries    = 512
	ZSetMaxListpackEntries = 128
	ZSetMaxListpackValue   = 64
)

// DefaultEncodingLimits are redis-server 7.0's built-in values.
var DefaultEncodingLimits = EncodingLimits{
	HashMaxListpackEntries: HashMaxListpackEntries, HashMaxListpackValue: HashMaxListpackValue,
	SetMaxIntsetEntries: SetMaxIntsetEntries, ZSetMaxListpackEntries: ZSetMaxListpackEntries,
	ZSetMaxListpackValue: ZSetMaxListpackValue, ListMaxListpackSize: -2,
	StreamNodeMaxBytes: 4096, StreamNodeMaxEntries: 100,
}

var limits atomic.Pointer[EncodingLimits]

func init() { limits.Store(&DefaultEncodingLimits) }

// Encodings returns the limits in force.
func Encodings() EncodingLimits { return *limits.Load() }

// SetEncodings changes the limits in force. It refuses values out of range
// and leaves the limits as they were.
func SetEncodings(l EncodingLimits) error {
	switch {
	case l.HashMaxListpackEntries < 0, l.SetMaxIntsetEntries < 0, l.ZSetMaxListpackEntries < 0:
		return fmt.Errorf("a count of entries cannot be negative")
	case l.HashMaxListpackValue < 0 || l.HashMaxListpackValue > MaxListpackValue:
		return fmt.Errorf("hash-max-listpack-value %d: Shoal's small hashes hold values of 0 to %d bytes", l.HashMaxListpackValue, MaxListpackValue)
	case l.ZSetMaxListpackValue < 0 || l.ZSetMaxListpackValue > MaxListpackValue:
		return fmt.Errorf("zset-max-listpack-value %d: Shoal's small sorted sets hold members of 0 to %d bytes", l.ZSetMaxListpackValue, MaxListpackValue)
	case l.StreamNodeMaxBytes < 0 || l.StreamNodeMaxEntries < 0:
		return fmt.Errorf("stream node limits cannot be negative")
	case l.ListMaxListpackSize < -5 || l.ListMaxListpackSize == 0:
		return fmt.Errorf("list-max-listpack-size %d: want -1 to -5 (4 to 64 KiB per node) or a positive count", l.ListMaxListpackSize)
	}
	limits.Store(&l)
	return nil
}

// listNodeBytes is the byte size a list node may reach, and listNodeCount
// its count of elements (0: no count limit).
func listNodeLimits() (bytes, count int) {
	fill := limits.Load().ListMaxListpackSize
	if fill < 0 {
		return 4096 << (-fill - 1), 0
	}
	return listSafetyBytes, int(min(fill, 1<<31-1))
}

// listSafetyBytes bounds a node whose size is set as a count.
const listSafetyBytes = 8192
