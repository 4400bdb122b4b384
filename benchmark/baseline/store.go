package baseline

import (
	"errors"
	"hash/maphash"
	"math"
	"sync"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
)

// Errors with Redis's reply texts.
var (
	ErrNotInteger = errors.New("ERR value is not an integer or out of range")
	ErrOverflow   = errors.New("ERR increment or decrement would overflow")
)

const storeShards = 256

// Store is a sharded map of string keys to byte values, safe for concurrent use. It is
// deliberately plain: a mutex and a Go map per shard, values updated in place.
type Store struct {
	seed   maphash.Seed
	shards [storeShards]storeShard
}

type storeShard struct {
	mu sync.RWMutex
	m  map[string]*entry
	_  [32]byte // keep neighbouring locks off one cache line
}

// entry is boxed so an overwrite mutates it in place instead of assigning the map, which
// would allocate the key string again.
type entry struct{ val []byte }

// NewStore returns an empty Store.
func NewStore() *Store {
	s := &Store{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].m = make(map[string]*entry)
	}
	return s
}

func (s *Store) shard(key []byte) *storeShard {
	return &s.shards[maphash.Bytes(s.seed, key)%storeShards]
}

// Get appends key's value to dst.
func (s *Store) Get(dst, key []byte) ([]byte, bool) {
	sh := s.shard(key)
	sh.mu.RLock()
	e, ok := sh.m[string(key)]
	if ok {
		dst = append(dst, e.val...)
	}
	sh.mu.RUnlock()
	return dst, ok
}

// GetBulk appends key's value to dst as a RESP bulk string, copying it once under the
// shard's read lock.
func (s *Store) GetBulk(dst, key []byte) ([]byte, bool) {
	sh := s.shard(key)
	sh.mu.RLock()
	e, ok := sh.m[string(key)]
	if ok {
		dst = resp.AppendBulk(dst, e.val)
	}
	sh.mu.RUnlock()
	return dst, ok
}

// Set stores a copy of val under key.
func (s *Store) Set(key, val []byte) {
	sh := s.shard(key)
	sh.mu.Lock()
	if e, ok := sh.m[string(key)]; ok {
		e.val = append(e.val[:0], val...)
	} else {
		sh.m[string(key)] = &entry{val: append([]byte(nil), val...)}
	}
	sh.mu.Unlock()
}

// Incr adds one to the integer stored at key (0 if missing) and returns the result.
func (s *Store) Incr(key []byte) (int64, error) {
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e, ok := sh.m[string(key)]
	var n int64
	if ok {
		var valid bool
		if n, valid = ascii.ParseInt(e.val); !valid {
			return 0, ErrNotInteger
		}
		if n == math.MaxInt64 {
			return 0, ErrOverflow
		}
	} else {
		e = &entry{}
		sh.m[string(key)] = e
	}
	n++
	e.val = appendInt(e.val[:0], n)
	return n, nil
}

// Len returns the number of keys.
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

func appendInt(b []byte, n int64) []byte {
	var tmp [20]byte
	i := len(tmp)
	u := uint64(n)
	if n < 0 {
		u = uint64(-n)
	}
	for {
		i--
		tmp[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if n < 0 {
		i--
		tmp[i] = '-'
	}
	return append(b, tmp[i:]...)
}
