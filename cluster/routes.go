package cluster

import "strconv"

// Routes is an immutable snapshot of the slot map for the data path:
// package kv reads it on every keyed command without a lock. A new
// snapshot replaces it whenever slots, open slots, addresses or the
// cluster's state change.
type Routes struct {
	// Owner is each slot's primary, nil when unassigned.
	Owner [Slots]*Peer
	// Migrating and Importing are this node's open slots (SETSLOT), nil
	// when there are none.
	Migrating, Importing map[int]*Peer
	// Myself is this node; MyPrimary its primary when it is a replica.
	Myself, MyPrimary *Peer
	// OK is the cluster's state (CLUSTERDOWN when false).
	OK bool
	// AllowReadsWhenDown is cluster-allow-reads-when-down.
	AllowReadsWhenDown bool
}

// Peer is a node as a redirection names it.
type Peer struct {
	ID   string
	Addr string // "ip:port" as MOVED and ASK write it
}

// Routes returns the current slot map. It never returns nil.
func (s *State) Routes() *Routes { return s.routes.Load() }

// publish builds and stores a new Routes; under mu.
func (s *State) publish() {
	s.routesDirty = false
	r := &Routes{OK: s.state == stateOK, AllowReadsWhenDown: s.allowReadsWhenDown.Load()}
	peers := make(map[*node]*Peer, len(s.nodes))
	peer := func(n *node) *Peer {
		if n == nil {
			return nil
		}
		p := peers[n]
		if p == nil {
			p = &Peer{ID: n.name, Addr: n.ip + ":" + strconv.Itoa(n.port)}
			peers[n] = p
		}
		return p
	}
	r.Myself = peer(s.myself)
	r.MyPrimary = peer(s.myself.primary)
	for j := range Slots {
		r.Owner[j] = peer(s.slots[j])
		if n := s.migrating[j]; n != nil {
			if r.Migrating == nil {
				r.Migrating = make(map[int]*Peer)
			}
			r.Migrating[j] = peer(n)
		}
		if n := s.importing[j]; n != nil {
			if r.Importing == nil {
				r.Importing = make(map[int]*Peer)
			}
			r.Importing[j] = peer(n)
		}
	}
	s.routes.Store(r)
}
