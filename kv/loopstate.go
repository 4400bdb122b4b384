package kv

import (
	"sync"
	"sync/atomic"
)

// loopState is what one loop keeps for the commands it runs: a
// commandCounters per command (commandstats.go), the argument slice it
// lends the connection it serves, the keys made ready for blocked clients,
// and its exec gate. Only the loop's goroutine writes it, except the
// counters' atomics, which INFO and /metrics read, and the gate, which an
// EXEC on another loop locks.
type loopState struct {
	cmds []commandCounters // by command.statsID
	tick uint32            // the fronts' timing stride; the loop goroutine only
	// args is the RESP argument slice the loop lends to the connection it
	// is serving (resp.Parser.SwapArgs), so idle connections keep none.
	// The loop goroutine only.
	args [][]byte
	// ready are the keys the running command made ready for blocked
	// clients (blocking.go). The loop goroutine only.
	ready []dbKey
	// gate is the loop's exec gate (multi.go), read-locked by the loop for
	// each batch. Padding fills the 128-byte size class, so two loops'
	// blocks never share a cache line.
	gate execGate
	_    [16]byte
}

// commandStats holds the blocks, one per loop plus one (index 0) for
// clients without a loop. Growth is rare (the first connection of each
// loop) and copies the slice of pointers; lookups are one atomic load.
type commandStats struct {
	loops atomic.Pointer[[]*loopState]
	mu    sync.Mutex
}
