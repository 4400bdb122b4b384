package eventloop

import (
	"errors"
	"sync/atomic"
)

// LoopCounters are one loop's counters since Start, for monitoring. Each
// loop writes its own (an uncontended atomic add per read or write system
// call); Server.Counters reads them from any goroutine.
type LoopCounters struct {
	Conns              int64  // open connections assigned to the loop
	Accepted           uint64 // connections the loop adopted
	Reads              uint64 // read system calls that returned data
	BytesRead          uint64
	Writes             uint64 // write system calls
	BytesWritten       uint64
	Pauses             uint64 // times a connection's reading stopped above OutputHighWater
	OutputLimitCloses  uint64 // connections closed past OutputHardLimit
	InboundLimitCloses uint64 // connections closed past MaxInboundBuffer
	IdleCloses         uint64 // connections closed after IdleTimeout
}

// loopCounters is the loop's live LoopCounters; the loop goroutine writes.
type loopCounters struct {
	accepted, reads, bytesRead, writes, bytesWritten atomic.Uint64
	pauses, outputLimit, inboundLimit, idle          atomic.Uint64
}

// noteAbort counts a close at one of the limits.
func (k *loopCounters) noteAbort(err error) {
	switch {
	case errors.Is(err, ErrOutputLimit):
		k.outputLimit.Add(1)
	case errors.Is(err, ErrInboundLimit):
		k.inboundLimit.Add(1)
	}
}

// Counters returns each loop's counters, in loop order (LoopIndex), or nil
// before Start.
func (s *Server) Counters() []LoopCounters {
	s.mu.Lock()
	loops := s.loops
	s.mu.Unlock()
	out := make([]LoopCounters, len(loops))
	for i, l := range loops {
		k := &l.counters
		out[i] = LoopCounters{
			Conns:              l.assigned.Load(),
			Accepted:           k.accepted.Load(),
			Reads:              k.reads.Load(),
			BytesRead:          k.bytesRead.Load(),
			Writes:             k.writes.Load(),
			BytesWritten:       k.bytesWritten.Load(),
			Pauses:             k.pauses.Load(),
			OutputLimitCloses:  k.outputLimit.Load(),
			InboundLimitCloses: k.inboundLimit.Load(),
			IdleCloses:         k.idle.Load(),
		}
	}
	return out
}

// LoopIndex returns the index of the loop that owns c, from 0 to the
// number of loops less one: a handler can keep per-loop state (counters,
// say) that only that loop's goroutine writes. Any goroutine may call it.
func (c *Conn) LoopIndex() int {
	if c.loop == nil {
		return c.ext().LoopIndex()
	}
	return c.loop.idx
}
