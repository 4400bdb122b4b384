package cluster

// Manual failover, CLUSTER FAILOVER [FORCE|TAKEOVER], as Redis 7.0:
//
//  1. The replica sends MFSTART to its primary and gives the failover
//     5 s (manualTimeout).
//  2. The primary holds its clients' writes (Data.HoldWrites) for twice
//     that, then PINGs the replica every cron tick with the PAUSED flag
//     and its final replication offset.
//  3. Once the replica's offset reaches it, the replica runs an election
//     at once (no rank delay) whose request carries FORCEACK, so that the
//     primaries vote though its primary is up; the winner takes the
//     slots, and the old primary, left without any, becomes its replica
//     and releases the writes, which then meet a replica (MOVED).
//
// FORCE skips the primary (the election starts at once); TAKEOVER skips
// the election too: the replica takes a new config epoch without
// consensus and claims the slots.

const (
	manualTimeout   = 5000 // ms: CLUSTER_MF_TIMEOUT
	manualPauseMult = 2    // CLUSTER_MF_PAUSE_MULT
)

// manualFailover is the state of a manual failover, on the replica that
// runs it and on the primary that holds its writes; under State.mu.
type manualFailover struct {
	end           int64 // ms: when it times out; 0 when none runs
	canStart      bool  // replica: the offset is reached, elect
	replica       *node // primary: the replica that asked
	primaryOffset int64 // replica: the primary's paused offset, -1 until known
}

// resetManualFailover ends a manual failover, releasing the writes a
// primary holds for it.
func (s *State) resetManualFailover() {
	m := &s.manual
	if m.replica != nil && s.data != nil {
		s.writesHeld.Store(false)
		s.work.later(func() { s.data.HoldWrites(false) })
	}
	m.end, m.canStart, m.replica, m.primaryOffset = 0, false, nil, -1
}

func (s *State) manualFailoverCheckTimeout() {
	if s.manual.end != 0 && s.manual.end < nowMs() {
		s.logger.Warn("manual failover timed out")
		s.resetManualFailover()
	}
}

// handleManualFailover lets the election start once this replica
// processed its primary's stream up to the paused offset.
func (s *State) handleManualFailover() {
	m := &s.manual
	if m.end == 0 || m.canStart || m.primaryOffset == -1 {
		return
	}
	if uint64(m.primaryOffset) == s.myOffset() {
		m.canStart = true
		s.logger.Warn("all master replication stream processed, manual failover can start")
		s.kick()
	}
}

// startManualFailover serves MFSTART from a replica of this primary: the
// writes are held (on the worker), and only then does the PAUSED flag
// and the offset go out, so that the offset is final.
func (s *State) startManualFailover(sender *node) {
	if sender.primary != s.myself {
		return
	}
	s.resetManualFailover()
	m := &s.manual
	m.end = nowMs() + manualTimeout
	m.replica = sender
	s.logger.Warn("manual failover requested by replica", "replica", sender.name)
	if s.data == nil {
		return
	}
	end := m.end
	s.work.later(func() {
		s.data.HoldWrites(true)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.manual.replica != sender || s.manual.end != end {
			return // timed out or replaced meanwhile: the reset releases them
		}
		s.writesHeld.Store(true)
		if sender.link != nil {
			s.sendPing(sender.link, msgPing)
		}
		s.afterChange()
	})
}

// pausedOffset takes the offset of a PING of this replica's primary sent
// while it holds its writes.
func (s *State) pausedOffset(sender *node, m *message) {
	mf := &s.manual
	if mf.end != 0 && s.myself.isReplica() && s.myself.primary == sender &&
		m.mflags[0]&mflag0Paused != 0 && mf.primaryOffset == -1 {
		mf.primaryOffset = int64(sender.replOffset)
		s.logger.Warn("received replication offset for paused master manual failover", "offset", mf.primaryOffset)
		s.kick()
	}
}

// WritesHeld reports whether this primary holds its writes for a manual
// failover (the replication then sends its replicas no PING, which would
// move the offset the replica waits for).
func (s *State) WritesHeld() bool { return s.writesHeld.Load() }

// FailoverMode is the option of CLUSTER FAILOVER.
type FailoverMode int

// The options of CLUSTER FAILOVER.
const (
	FailoverDefault FailoverMode = iota
	FailoverForce
	FailoverTakeover
)

// Failover is CLUSTER FAILOVER on this replica. With TAKEOVER it returns
// takeover true: the caller promotes the replication (Data.Promote, on
// its own goroutine) and then calls TakeOver.
func (s *State) Failover(mode FailoverMode) (takeover bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	me := s.myself
	switch {
	case me.isPrimary():
		return false, ReplyError("You should send CLUSTER FAILOVER to a replica")
	case me.primary == nil:
		return false, ReplyError("I'm a replica but my master is unknown to me")
	case mode == FailoverDefault && (me.primary.failed() || me.primary.link == nil):
		return false, ReplyError("Master is down or failed, please use CLUSTER FAILOVER FORCE")
	}
	s.resetManualFailover()
	s.manual.end = nowMs() + manualTimeout
	switch mode {
	case FailoverTakeover:
		s.logger.Warn("taking over the master (user request)")
		s.promoting = true
		return true, nil
	case FailoverForce:
		s.logger.Warn("forced failover user request accepted")
		s.manual.canStart = true
		s.kick()
	default:
		s.logger.Warn("manual failover user request accepted")
		s.sendHeaderOnly(me.primary, msgMFStart)
	}
	s.afterChange()
	return false, nil
}

// TakeOver ends CLUSTER FAILOVER TAKEOVER once the caller promoted the
// replication: a config epoch without consensus, the primary's slots,
// a PONG to every node.
func (s *State) TakeOver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.promoting = false
	if s.myself.isReplica() {
		s.bumpEpochWithoutConsensus()
		s.replaceMyPrimary()
	}
	s.afterChange()
}
