package store

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// Server-pattern benchmarks: what cmd/shoal does under redis-benchmark -r 100000 or
// shoal-load -keyspace 100000. The keys are key:000000012345 (twelve digits), visited in a
// random order, and read from one contiguous buffer the way kv reads them from the loop's
// read buffer, so the benchmark itself adds no cache misses: what is measured is the
// store's own memory traffic. BenchmarkGetHit and friends walk keys in insertion order,
// which the store lays out contiguously, so they hide the misses a server sees.
//
// cpu-ns/op is process CPU time per operation (getrusage), which is what the side-by-side
// harness compares with redis-server and what survives a busy machine better than ns/op.
// Run: go test -run '^$' -bench ServerPattern -benchmem -count 6 ./store/

const serverKeys = 100_000

// serverKeyLen is len("key:000000012345").
const serverKeyLen = 4 + 12

// serverStream returns serverKeys keys of serverKeyLen bytes in one buffer, in a random
// order (a permutation, so every key is visited once per pass).
func serverStream() []byte {
	buf := make([]byte, 0, serverKeys*serverKeyLen)
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(serverKeys) {
		buf = fmt.Appendf(buf, "key:%012d", i)
	}
	return buf
}

// kvBackend is the store or the naive baseline, behind the two calls a GET/SET server makes.
type kvBackend interface {
	get(dst, key []byte) ([]byte, bool)
	set(key, val []byte)
}

type storeBackend struct{ s *Store }

func (b storeBackend) get(dst, key []byte) ([]byte, bool) {
	v, ok, _ := b.s.Get(dst, key)
	return v, ok
}
func (b storeBackend) set(key, val []byte) { b.s.Set(key, val, SetOptions{}, nil) }

// naiveBackend is the same 256-way sharding and locking over map[string]*naiveEntry.
type naiveBackend struct{ ns *naiveShards }

func newNaiveBackend() naiveBackend {
	ns := new(naiveShards)
	for i := range ns.shards {
		ns.shards[i].m = map[string]*naiveEntry{}
	}
	return naiveBackend{ns}
}

func (b naiveBackend) get(dst, key []byte) ([]byte, bool) {
	sh := &b.ns.shards[uint8(xxhash.Sum64(key)>>56)]
	sh.mu.RLock()
	e := sh.m[string(key)]
	if e != nil {
		dst = append(dst, e.val...)
	}
	sh.mu.RUnlock()
	return dst, e != nil
}

func (b naiveBackend) set(key, val []byte) {
	sh := &b.ns.shards[uint8(xxhash.Sum64(key)>>56)]
	sh.mu.Lock()
	if e := sh.m[string(key)]; e != nil {
		e.val = append(e.val[:0], val...)
	} else {
		sh.m[string(key)] = &naiveEntry{val: append([]byte(nil), val...)}
	}
	sh.mu.Unlock()
}

var serverBackends struct {
	sync.Mutex
	m map[string]kvBackend
}

// loadedBackend returns impl ("shoal" or "naive") loaded with every server key at value
// size vsize, built once per process.
func loadedBackend(impl string, vsize int, stream []byte) kvBackend {
	serverBackends.Lock()
	defer serverBackends.Unlock()
	name := impl + "/" + strconv.Itoa(vsize)
	if b, ok := serverBackends.m[name]; ok {
		return b
	}
	var b kvBackend
	if impl == "shoal" {
		b = storeBackend{New(Options{ActiveExpireInterval: -1})}
	} else {
		b = newNaiveBackend()
	}
	val := make([]byte, vsize)
	for i := range val {
		val[i] = 'x'
	}
	for i := 0; i < len(stream); i += serverKeyLen {
		b.set(stream[i:i+serverKeyLen], val)
	}
	if serverBackends.m == nil {
		serverBackends.m = map[string]kvBackend{}
	}
	serverBackends.m[name] = b
	return b
}

var serverStreamOnce = sync.OnceValue(serverStream)

func BenchmarkServerPattern(b *testing.B) {
	stream := serverStreamOnce()
	for _, op := range []string{"get", "set", "mixed"} {
		for _, vsize := range []int{3, 64} {
			for _, impl := range []string{"shoal", "naive"} {
				b.Run(fmt.Sprintf("op=%s/val=%d/impl=%s", op, vsize, impl), func(b *testing.B) {
					be := loadedBackend(impl, vsize, stream)
					val := make([]byte, vsize)
					for i := range val {
						val[i] = 'y'
					}
					buf := make([]byte, 0, 128)
					off := rand.IntN(serverKeys) * serverKeyLen
					b.ReportAllocs()
					b.ResetTimer()
					cpu0 := processCPU()
					for n := 0; n < b.N; n++ {
						key := stream[off : off+serverKeyLen]
						if off += serverKeyLen; off == len(stream) {
							off = 0
						}
						if op == "set" || (op == "mixed" && n%10 == 0) {
							be.set(key, val)
							continue
						}
						var ok bool
						if buf, ok = be.get(buf[:0], key); !ok {
							b.Fatalf("GET %s: miss", key)
						}
					}
					b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}
