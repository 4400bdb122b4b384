package eventloop

import "sync/atomic"

// LoopStat is what a Balancer sees of one loop when a connection arrives.
type LoopStat struct {
	// Conns counts connections assigned to the loop and not yet closed. A
	// connection counts from the moment it is assigned, before the loop has
	// registered it, so a burst of accepts sees its own earlier picks.
	Conns int
	// Load is a rolling average (EWMA) of the fraction of wall time the loop
	// spent handling events rather than waiting, from 0 (idle) to 1 (busy).
	Load float64
}

// Balancer picks the loop that owns a new connection for its lifetime. Pick
// is called by the single acceptor goroutine with one LoopStat per loop and
// returns an index into loops. It is not used with Options.ReusePort, where
// the kernel spreads connections over the per-loop listeners.
type Balancer interface {
	Pick(loops []LoopStat) int
}

// RoundRobin hands connections to the loops in turn, ignoring load.
// The zero value is ready to use.
type RoundRobin struct {
	next atomic.Uint64
}

// Pick returns the loop after the one picked last.
func (r *RoundRobin) Pick(loops []LoopStat) int {
	return int((r.next.Add(1) - 1) % uint64(len(loops)))
}

// LeastConnections hands each connection to the loop with the fewest open
// connections; ties go to the lowest index.
type LeastConnections struct{}

// Pick returns the loop with the fewest connections.
func (LeastConnections) Pick(loops []LoopStat) int {
	best := 0
	for i := 1; i < len(loops); i++ {
		if loops[i].Conns < loops[best].Conns {
			best = i
		}
	}
	return best
}

// DefaultLoadWeight is the LoadAware weight used when Weight is zero.
const DefaultLoadWeight = 4

// LoadAware hands each connection to the loop with the lowest score
//
//	score = (Conns + 1) × (1 + Weight × Load)
//
// so a loop that is fully busy counts as if it held 1+Weight times its
// connections. Connection count alone lets a few long-lived busy connections
// pile up on one loop while idle connections fill the others; work alone
// ignores connections that are quiet now but cost memory and may wake up.
// The product keeps both: among idle loops it is least-connections, and a
// busy loop is avoided until the others hold Weight-fold more connections.
// The +1 makes an empty but busy loop still compare by its load. Ties are
// broken round-robin so equal loops share a burst of accepts.
// The zero value is ready to use.
type LoadAware struct {
	// Weight scales how much a busy loop counts against connection counts;
	// 0 selects DefaultLoadWeight.
	Weight float64
	next   atomic.Uint64
}

// Pick returns the loop with the lowest score.
func (l *LoadAware) Pick(loops []LoopStat) int {
	w := l.Weight
	if w == 0 {
		w = DefaultLoadWeight
	}
	n := len(loops)
	start := int(l.next.Add(1) % uint64(n))
	best, bestScore := -1, 0.0
	for k := 0; k < n; k++ {
		i := (start + k) % n
		load := loops[i].Load
		if load < 0 {
			load = 0
		}
		score := float64(loops[i].Conns+1) * (1 + w*load)
		if best < 0 || score < bestScore {
			best, bestScore = i, score
		}
	}
	return best
}
