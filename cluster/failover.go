package cluster

import "math/rand/v2"

// Replica failover by election, as Redis 7.0's cluster.c: a replica whose
// primary is FAIL waits 500-1000 ms plus a second per better-placed
// sibling (its rank: siblings with a greater replication offset), then
// bumps the current epoch and asks every node for its vote
// (FAILOVER_AUTH_REQUEST). Each primary serving slots grants one vote per
// epoch (FAILOVER_AUTH_ACK), and none for a replica of the same primary
// within twice the node timeout. With the votes of a majority of the
// primaries serving slots the replica takes the epoch of the election as
// its config epoch, becomes a primary (Data.Promote), claims its
// primary's slots and tells every node with a PONG; the others see the
// greater config epoch win the slots, and a primary left without slots
// (the old one, when it comes back) becomes a replica of the winner.

// Reasons a replica cannot fail over, logged as Redis's
// clusterLogCantFailover.
const (
	cantFailoverNone = iota
	cantFailoverDataAge
	cantFailoverWaitingDelay
	cantFailoverExpired
	cantFailoverWaitingVotes
)

const cantFailoverRelog = 5 * 60 * 1000 // ms

// election is a replica's failover attempt; under State.mu.
type election struct {
	authTime   int64 // ms: when the election starts (or started)
	authCount  int   // votes received
	authSent   bool  // the request was sent
	authRank   int
	authEpoch  uint64 // the epoch of the request
	cantReason int
	cantLogged int64 // ms
}

// handleReplicaFailover is Redis's clusterHandleSlaveFailover, run by the
// cron and at once when a vote arrives or a manual failover may start.
func (s *State) handleReplicaFailover() {
	now := nowMs()
	e := &s.election
	me := s.myself
	timeout := s.nodeTimeout.Load()
	authAge := now - e.authTime
	neededQuorum := s.size/2 + 1
	manual := s.manual.end != 0 && s.manual.canStart
	authTimeout := max(timeout*2, 2000)
	authRetry := authTimeout * 2

	if me.isPrimary() || me.primary == nil || (!me.primary.failed() && !manual) ||
		(s.replicaNoFailover.Load() && !manual) || me.primary.numSlots == 0 || s.promoting {
		e.cantReason = cantFailoverNone
		return
	}
	link := s.replicaLink()
	dataAge := link.DataAge
	if dataAge > timeout {
		dataAge -= timeout
	}
	if f := s.validityFactor.Load(); f != 0 && dataAge > link.PingPeriod+timeout*f && !manual {
		s.logCantFailover(cantFailoverDataAge)
		return
	}
	if authAge > authRetry {
		e.authTime = now + 500 + rand.Int64N(500)
		e.authCount, e.authSent = 0, false
		e.authRank = s.replicaRank()
		e.authTime += int64(e.authRank) * 1000
		if s.manual.end != 0 {
			e.authTime, e.authRank = now, 0
			s.kick()
		}
		s.logger.Warn("start of election delayed", "ms", e.authTime-now, "rank", e.authRank, "offset", s.myOffset())
		s.broadcastPongToSiblings()
		return
	}
	if !e.authSent && s.manual.end == 0 {
		if rank := s.replicaRank(); rank > e.authRank {
			added := int64(rank-e.authRank) * 1000
			e.authTime += added
			e.authRank = rank
			s.logger.Warn("replica rank updated", "rank", rank, "added delay ms", added)
		}
	}
	if now < e.authTime {
		s.logCantFailover(cantFailoverWaitingDelay)
		return
	}
	if authAge > authTimeout {
		s.logCantFailover(cantFailoverExpired)
		return
	}
	if !e.authSent {
		s.currentEpoch++
		e.authEpoch = s.currentEpoch
		s.logger.Warn("starting a failover election", "epoch", s.currentEpoch)
		s.requestFailoverAuth()
		e.authSent = true
		s.saveNeeded = true
		s.updateState()
		return
	}
	if e.authCount < neededQuorum {
		s.logCantFailover(cantFailoverWaitingVotes)
		return
	}
	s.logger.Warn("failover election won: I'm the new master", "epoch", e.authEpoch)
	if me.configEpoch < e.authEpoch {
		me.configEpoch = e.authEpoch
		s.logger.Warn("configEpoch set after successful failover", "epoch", me.configEpoch)
	}
	s.promote()
}

// promote makes this replica a primary: the replication first (on the
// worker, without the lock), then the slots of its primary
// (replaceMyPrimary), so that clients sent here by the new slot map
// find a node that takes writes.
func (s *State) promote() {
	if s.promoting || s.data == nil {
		return
	}
	s.promoting = true
	primary := s.myself.primary
	s.work.later(func() {
		s.data.Promote()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.promoting = false
		if s.myself.isReplica() && s.myself.primary == primary {
			s.replaceMyPrimary()
		}
		s.afterChange()
	})
}

// replaceMyPrimary is Redis's clusterFailoverReplaceYourMaster, once the
// replication made this node a primary: it takes its primary's slots and
// tells every node.
func (s *State) replaceMyPrimary() {
	old := s.myself.primary
	if s.myself.isPrimary() || old == nil {
		return
	}
	s.setNodeAsPrimary(s.myself)
	for j := range Slots {
		if old.hasSlot(j) {
			s.delSlot(j)
			s.addSlot(s.myself, j)
		}
	}
	s.updateState()
	s.saveNeeded = true
	s.broadcastPong()
	s.resetManualFailover()
}

// replicaLink asks the keyspace about the link to the primary.
func (s *State) replicaLink() ReplicaLink {
	if s.data == nil {
		return ReplicaLink{}
	}
	return s.data.ReplicaLink()
}

func (s *State) myOffset() uint64 {
	if s.data == nil {
		return 0
	}
	return s.data.ReplOffset()
}

// replicaRank counts the siblings that may fail over and have a greater
// replication offset than this node (clusterGetSlaveRank).
func (s *State) replicaRank() int {
	primary := s.myself.primary
	if primary == nil {
		return 0
	}
	mine, rank := s.myOffset(), 0
	for _, r := range primary.replicas {
		if r != s.myself && r.flags&flagNoFailover == 0 && r.replOffset > mine {
			rank++
		}
	}
	return rank
}

// logCantFailover logs why the replica does not fail over yet, once per
// reason (again after five minutes), and not in the first node timeout +
// 5 s after the primary failed.
func (s *State) logCantFailover(reason int) {
	e := &s.election
	now := nowMs()
	if reason == e.cantReason && now-e.cantLogged < cantFailoverRelog {
		return
	}
	e.cantReason = reason
	if p := s.myself.primary; p != nil && p.failed() && now-p.failTime < s.nodeTimeout.Load()+5000 {
		return
	}
	msg := map[int]string{
		cantFailoverDataAge:      "Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' configuration option.",
		cantFailoverWaitingDelay: "Waiting the delay before I can start a new failover.",
		cantFailoverExpired:      "Failover attempt expired.",
		cantFailoverWaitingVotes: "Waiting for votes, but majority still not reached.",
	}[reason]
	e.cantLogged = now
	s.logger.Warn("currently unable to failover: " + msg)
}

// requestFailoverAuth asks every node for its vote; a manual failover's
// request carries FORCEACK (clusterRequestFailoverAuth).
func (s *State) requestFailoverAuth() {
	h := s.header(msgFailoverAuthRequest)
	if s.manual.end != 0 {
		h.mflags[0] |= mflag0ForceAck
	}
	b := appendHeader(nil, h)
	putTotlen(b, 0)
	s.broadcast(msgFailoverAuthRequest, b)
}

// sendHeaderOnly sends a message that is a header alone (an auth ACK,
// MFSTART) on n's link, if it has one.
func (s *State) sendHeaderOnly(n *node, typ uint16) {
	if n.link == nil {
		return
	}
	b := appendHeader(nil, s.header(typ))
	putTotlen(b, 0)
	s.sent[typ]++
	n.link.send(b)
}

// voteIfNeeded answers a replica's FAILOVER_AUTH_REQUEST as Redis's
// clusterSendFailoverAuthIfNeeded: a primary serving slots votes once per
// epoch, for a replica of a failed primary (or any, with FORCEACK), not
// twice for the same primary within twice the node timeout, and not for
// a replica claiming slots that a greater config epoch owns now.
func (s *State) voteIfNeeded(n *node, m *message) {
	me := s.myself
	if me.isReplica() || me.numSlots == 0 {
		return
	}
	if m.currentEpoch < s.currentEpoch {
		s.logger.Warn("failover auth denied: request epoch < current epoch", "to", n.name, "reqEpoch", m.currentEpoch, "curEpoch", s.currentEpoch)
		return
	}
	if s.lastVoteEpoch == s.currentEpoch {
		s.logger.Warn("failover auth denied: already voted for this epoch", "to", n.name, "epoch", s.currentEpoch)
		return
	}
	primary := n.primary
	force := m.mflags[0]&mflag0ForceAck != 0
	switch {
	case n.isPrimary():
		s.logger.Warn("failover auth denied: it is a master node", "to", n.name)
		return
	case primary == nil:
		s.logger.Warn("failover auth denied: I don't know its master", "to", n.name)
		return
	case !primary.failed() && !force:
		s.logger.Warn("failover auth denied: its master is up", "to", n.name)
		return
	}
	now := nowMs()
	if wait := s.nodeTimeout.Load()*2 - (now - primary.votedTime); wait > 0 {
		s.logger.Warn("failover auth denied: can't vote about this master yet", "to", n.name, "ms", wait)
		return
	}
	for j := range Slots {
		if !bitSet(&m.slots, j) {
			continue
		}
		if owner := s.slots[j]; owner != nil && owner.configEpoch > m.configEpoch {
			s.logger.Warn("failover auth denied: a slot has a greater epoch", "to", n.name, "slot", j, "epoch", owner.configEpoch, "reqEpoch", m.configEpoch)
			return
		}
	}
	s.lastVoteEpoch = s.currentEpoch
	primary.votedTime = now
	s.saveNeeded = true
	s.sendHeaderOnly(n, msgFailoverAuthAck)
	s.logger.Warn("failover auth granted", "to", n.name, "epoch", s.currentEpoch)
}

// countVote takes a FAILOVER_AUTH_ACK: a vote of a primary serving slots
// for the election in progress.
func (s *State) countVote(sender *node, m *message) {
	if sender.isPrimary() && sender.numSlots > 0 && m.currentEpoch >= s.election.authEpoch {
		s.election.authCount++
		s.kick()
	}
}

// broadcastPongToSiblings sends a PONG to the other replicas of this
// node's primary, so that they learn its offset before ranking
// themselves (CLUSTER_BROADCAST_LOCAL_SLAVES).
func (s *State) broadcastPongToSiblings() {
	for _, n := range s.nodes {
		if n.link == nil || n == s.myself || n.flags&flagHandshake != 0 {
			continue
		}
		if n.isReplica() && n.primary != nil && n.primary == s.myself.primary {
			s.sendPing(n.link, msgPong)
		}
	}
}

// setMyPrimary makes this node a replica of n (clusterSetMaster): a
// primary gives up its open slots; the replication follows n.
func (s *State) setMyPrimary(n *node) {
	me := s.myself
	if n == me {
		return
	}
	if me.isPrimary() {
		me.flags &^= flagMaster | flagMigrateTo
		me.flags |= flagSlave
		for j := range Slots {
			s.importing[j], s.migrating[j] = nil, nil
		}
	} else if me.primary != nil {
		me.primary.removeReplica(me)
	}
	me.primary = n
	n.addReplica(me)
	s.saveNeeded, s.routesDirty = true, true
	if s.data != nil {
		ip, port := n.ip, n.port
		s.work.later(func() { s.data.Follow(ip, port) })
	}
	s.resetManualFailover()
}

// followIfNeeded starts the replication of this replica's primary when it
// does not run (after a restart from nodes.conf), as Redis's cron does.
func (s *State) followIfNeeded() {
	me := s.myself
	if !me.isReplica() || me.primary == nil || me.primary.flags&flagNoAddr != 0 || me.primary.ip == "" ||
		s.data == nil || s.promoting || s.work.busy() {
		return
	}
	if s.data.ReplicaLink().Following {
		return
	}
	ip, port := me.primary.ip, me.primary.port
	s.logger.Info("replicating my primary", "primary", me.primary.name, "addr", ip, "port", port)
	s.work.later(func() { s.data.Follow(ip, port) })
}

// kick makes the cron look at elections and manual failovers now rather
// than at its next tick (Redis's CLUSTER_TODO_HANDLE_FAILOVER).
func (s *State) kick() {
	select {
	case s.kicks <- struct{}{}:
	default:
	}
}

// beforeSleep is what Redis does before its event loop sleeps when a
// vote or an offset arrived: the manual failover's and the election's
// next steps.
func (s *State) beforeSleep() {
	if s.myself.isReplica() {
		s.handleManualFailover()
		s.handleReplicaFailover()
	}
}
