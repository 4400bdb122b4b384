package eventloop

import (
	"errors"
	"math"
	"sync/atomic"
)

// LoopCounters are one loop's counters since Start, for monitoring. Each
// loop writes its own (an uncontended atomic add per read or write system
// call); Server.Counters reads them from any goroutine. Conns and Load are
// what the Balancer sees of the loop (LoopStat).
type LoopCounters struct {
	Conns              int64   // open connections assigned to the loop
	Load               float64 // recent busy fraction, 0 to 1 (LoopStat.Load)
	Accepted           uint64  // connections the loop adopted
	Reads              uint64  // read system calls that returned data
	BytesRead          uint64
	Writes             uint64 // write system calls
	BytesWritten       uint64
	Pauses             uint64 // times a connection's reading stopped above OutputHighWater
	OutputLimitCloses  uint64 // connections closed past OutputHardLimit
	InboundLimitCloses uint64 // connections closed past MaxInboundBuffer
	IdleCloses         uint64 // connections closed after IdleTimeout
	// OutputBacklog is the memory the loop holds, off the Go heap, for
	// output its slow readers have not taken yet (in use or kept for
	// reuse); the sum of Conn.OutputBacklog is the part in use.
	OutputBacklog int64
	// OutputBacklogFreed counts the backlog memory given back to the
	// kernel since Start: a rise means slow readers' output went away.
	OutputBacklogFreed int64
	// TLS: handshakes completed (TLSResumed of them by resuming a
	// session) and failed (TLSHandshakeTimeouts of them by timing out;
	// a connection closed before its handshake ended counts as failed,
	// so every connection a TLS listener accepted counts once), and
	// connections closed for a bad record after the handshake.
	TLSHandshakes        uint64
	TLSResumed           uint64
	TLSHandshakeFailures uint64
	TLSHandshakeTimeouts uint64
	TLSRecordErrors      uint64
}

// loopCounters is the loop's live LoopCounters; the loop goroutine writes.
type loopCounters struct {
	accepted, reads, bytesRead, writes, bytesWritten atomic.Uint64
	pauses, outputLimit, inboundLimit, idle          atomic.Uint64
	tlsHandshakes, tlsResumed, tlsHandshakeFailures  atomic.Uint64
	tlsHandshakeTimeouts, tlsRecordErrors            atomic.Uint64
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
// before Start. On an Options.Engine other than the native one only Conns,
// Load and the OutputBacklog counts are known (see the engine's
// documentation).
func (s *Server) Counters() []LoopCounters {
	if s.engineUp.Load() {
		return s.engineCounters()
	}
	s.mu.Lock()
	loops := s.loops
	s.mu.Unlock()
	out := make([]LoopCounters, len(loops))
	for i, l := range loops {
		k := &l.counters
		out[i] = LoopCounters{
			Conns:              l.assigned.Load(),
			Load:               math.Float64frombits(l.load.Load()),
			Accepted:           k.accepted.Load(),
			Reads:              k.reads.Load(),
			BytesRead:          k.bytesRead.Load(),
			Writes:             k.writes.Load(),
			BytesWritten:       k.bytesWritten.Load(),
			Pauses:             k.pauses.Load(),
			OutputLimitCloses:  k.outputLimit.Load(),
			InboundLimitCloses: k.inboundLimit.Load(),
			IdleCloses:         k.idle.Load(),
			OutputBacklog:      l.chunks.Mapped.Load(),
			OutputBacklogFreed: l.chunks.Unmapped.Load(),

			TLSHandshakes:        k.tlsHandshakes.Load(),
			TLSResumed:           k.tlsResumed.Load(),
			TLSHandshakeFailures: k.tlsHandshakeFailures.Load(),
			TLSHandshakeTimeouts: k.tlsHandshakeTimeouts.Load(),
			TLSRecordErrors:      k.tlsRecordErrors.Load(),
		}
	}
	return out
}
