package cluster

// handle processes one whole message received on l, as Redis's
// clusterProcessPacket; under s.mu. It returns false when the link must
// be dropped. A message that fails its checks is dropped with a log line.
func (s *State) handle(l link, b []byte) bool {
	m, err := decode(b)
	if err != nil {
		s.logger.Warn("cluster bus: dropping a bad message", "from", l.remoteIP(), "err", err)
		return true
	}
	if m.typ < msgTypes {
		s.received[m.typ]++
	}
	now := nowMs()
	sender := s.senderOf(l, m)
	if sender != nil {
		sender.dataReceived = now
	}
	if sender != nil && sender.flags&flagHandshake == 0 {
		if m.currentEpoch > s.currentEpoch {
			s.currentEpoch = m.currentEpoch
			s.saveNeeded = true
		}
		if m.configEpoch > sender.configEpoch {
			sender.configEpoch = m.configEpoch
			s.saveNeeded, s.routesDirty = true, true
		}
		sender.replOffset = m.offset
		s.pausedOffset(sender, m)
	}
	switch m.typ {
	case msgPing, msgPong, msgMeet:
		return s.handlePing(l, m, sender, now)
	case msgFail:
		if sender == nil {
			s.logger.Info("ignoring FAIL message from unknown node", "sender", m.sender, "about", m.about)
			return true
		}
		if failing := s.nodes[m.about]; failing != nil && failing.flags&(flagFail|flagMyself) == 0 {
			s.logger.Info("FAIL message received", "from", m.sender, "about", m.about)
			failing.flags |= flagFail
			failing.failTime = now
			failing.flags &^= flagPFail
			s.saveNeeded = true
			s.updateState()
		}
	case msgUpdate:
		if sender == nil {
			return true
		}
		n := s.nodes[m.about]
		if n == nil || n.configEpoch >= m.updateEpoch {
			return true
		}
		if n.isReplica() {
			s.setNodeAsPrimary(n)
		}
		n.configEpoch = m.updateEpoch
		s.saveNeeded = true
		s.updateSlotsWith(n, m.updateEpoch, &m.updateSlots)
	case msgFailoverAuthRequest:
		if sender != nil {
			s.voteIfNeeded(sender, m)
		}
	case msgFailoverAuthAck:
		if sender != nil {
			s.countVote(sender, m)
		}
	case msgMFStart:
		if sender != nil {
			s.startManualFailover(sender)
		}
	case msgPublish, msgPublishShard:
		if sender != nil {
			s.queueDelivery(m)
		}
	case msgModule:
		// No modules: accepted and counted, as a node without the
		// module would.
	default:
		s.logger.Warn("cluster bus: received unknown packet type", "type", m.typ)
	}
	return true
}

// senderOf is the known node that sent m on l, nil if none, as Redis's
// getNodeFromLinkAndMsg: an inbound link learns its node here.
func (s *State) senderOf(l link, m *message) *node {
	if n := l.peer(); n != nil && n.flags&flagHandshake == 0 {
		return n
	}
	n := s.nodes[m.sender]
	if n != nil && l.peer() == nil {
		if in, ok := l.(*inLink); ok {
			in.node = n
			n.inbound = in
		}
	}
	return n
}

func (s *State) handlePing(l link, m *message, sender *node, now int64) bool {
	if m.typ == msgPing || m.typ == msgMeet {
		if (m.typ == msgMeet || s.myself.ip == "") && *s.announceIP.Load() == "" {
			if ip := l.localIP(); ip != "" && ip != s.myself.ip {
				s.myself.ip = ip
				s.logger.Warn("IP address for this node updated", "ip", ip)
				s.saveNeeded, s.routesDirty = true, true
			}
		}
		if sender == nil && m.typ == msgMeet {
			n := s.newNode(newName(), flagHandshake)
			n.ip = m.myIP
			if n.ip == "" {
				n.ip = l.remoteIP()
			}
			n.port, n.pport, n.cport = int(m.port), int(m.pport), int(m.cport)
			s.addNode(n)
			s.saveNeeded = true
			s.processGossip(l, m, nil)
		}
		s.sendPing(l, msgPong)
	}
	if !l.isInbound() {
		ln := l.peer()
		if ln.flags&flagHandshake != 0 {
			if sender != nil {
				// A node we know already under this address: keep that one.
				s.updateAddress(sender, l, m)
				s.delNode(ln)
				return false
			}
			s.renameNode(ln, m.sender)
			ln.flags &^= flagHandshake
			ln.flags |= m.flags & (flagMaster | flagSlave)
			s.logger.Info("handshake completed", "node", ln.name)
			s.saveNeeded = true
			sender = ln
		} else if ln.name != m.sender {
			s.logger.Info("PONG contains mismatching sender ID; the node has no address now", "node", ln.name, "sender", m.sender)
			ln.flags |= flagNoAddr
			ln.ip, ln.port, ln.pport, ln.cport = "", 0, 0, 0
			ln.link = nil
			s.saveNeeded, s.routesDirty = true, true
			return false
		}
	}
	if sender != nil {
		sender.flags = sender.flags&^flagNoFailover | m.flags&flagNoFailover
		if m.typ == msgPing && sender.flags&flagHandshake == 0 {
			s.updateAddress(sender, l, m)
		}
	}
	if !l.isInbound() && m.typ == msgPong {
		n := l.peer()
		n.pongReceived = now
		n.pingSent = 0
		if n.timedOut() {
			n.flags &^= flagPFail
			s.saveNeeded = true
			s.updateState()
		} else if n.failed() {
			s.clearFailureIfNeeded(n)
		}
	}
	if sender == nil {
		return true
	}
	if m.slaveOf == "" {
		s.setNodeAsPrimary(sender)
	} else {
		primary := s.nodes[m.slaveOf]
		if sender.isPrimary() {
			s.delNodeSlots(sender)
			sender.flags &^= flagMaster | flagMigrateTo
			sender.flags |= flagSlave
			s.saveNeeded = true
			s.updateState()
		}
		if primary != nil && sender.primary != primary {
			if sender.primary != nil {
				sender.primary.removeReplica(sender)
			}
			primary.addReplica(sender)
			sender.primary = primary
			s.saveNeeded, s.routesDirty = true, true
		}
	}
	senderPrimary := sender
	if !sender.isPrimary() {
		senderPrimary = sender.primary
	}
	dirty := senderPrimary != nil && senderPrimary.slots != m.slots
	if sender.isPrimary() && dirty {
		s.updateSlotsWith(sender, m.configEpoch, &m.slots)
	}
	if dirty {
		for j := range Slots {
			if !bitSet(&m.slots, j) {
				continue
			}
			owner := s.slots[j]
			if owner == nil || owner == sender {
				continue
			}
			if owner.configEpoch > m.configEpoch {
				s.logger.Debug("node has an old slots configuration; sending UPDATE", "node", sender.name, "about", owner.name)
				if sender.link != nil {
					s.sendUpdate(sender.link, owner)
				}
				break
			}
		}
	}
	if sender.isPrimary() && s.myself.isPrimary() && m.configEpoch == s.myself.configEpoch {
		s.handleEpochCollision(sender)
	}
	s.processGossip(l, m, sender)
	if m.hostname != sender.hostname {
		sender.hostname = m.hostname
		s.saveNeeded = true
	}
	return true
}

// updateAddress takes the address a node PINGs us from (or announces),
// as Redis's nodeUpdateAddressIfNeeded: a changed one drops the link to
// the old.
func (s *State) updateAddress(n *node, l link, m *message) {
	if out, ok := l.(*outLink); ok && out == n.link {
		return
	}
	ip := m.myIP
	if ip == "" {
		ip = l.remoteIP()
	}
	if ip == "" {
		return
	}
	port, pport, cport := int(m.port), int(m.pport), int(m.cport)
	if n.port == port && n.cport == cport && n.pport == pport && n.ip == ip {
		return
	}
	n.ip, n.port, n.pport, n.cport = ip, port, pport, cport
	if n.link != nil {
		n.link.close()
		n.link = nil
	}
	n.flags &^= flagNoAddr
	s.logger.Warn("address updated for node", "node", n.name, "ip", ip, "port", port)
	s.saveNeeded, s.routesDirty = true, true
}

// updateSlotsWith takes a primary's claim of slots with its config epoch:
// unassigned slots, or slots of an owner with a smaller epoch, become its
// (clusterUpdateSlotsConfigWith). Keys of slots this node lost are
// deleted, unless it turned into the new owner's replica.
func (s *State) updateSlotsWith(sender *node, epoch uint64, slots *[Slots / 8]byte) {
	if sender == s.myself {
		s.logger.Warn("discarding UPDATE message about myself")
		return
	}
	cur := s.myself
	if !cur.isPrimary() && cur.primary != nil {
		cur = cur.primary
	}
	var dirtySlots []int
	var newPrimary *node
	senderSlots, migratedOurs := 0, 0
	for j := range Slots {
		if !bitSet(slots, j) {
			continue
		}
		senderSlots++
		owner := s.slots[j]
		if owner == sender || s.importing[j] != nil {
			continue
		}
		if owner == nil || owner.configEpoch < epoch {
			if owner == s.myself && s.keysInSlot(j) > 0 {
				dirtySlots = append(dirtySlots, j)
			}
			if owner == cur {
				newPrimary = sender
				migratedOurs++
			}
			s.delSlot(j)
			s.addSlot(sender, j)
			s.saveNeeded = true
		}
	}
	s.updateState()
	switch me := s.myself; {
	case newPrimary != nil && cur.numSlots == 0 && (s.allowMigration.Load() || senderSlots == migratedOurs):
		s.logger.Warn("configuration change detected: reconfiguring myself as a replica", "of", sender.name)
		s.setMyPrimary(sender)
		s.updateState()
	case me.primary != nil && me.primary.primary != nil && me.primary.primary != me:
		s.logger.Warn("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster", "of", me.primary.primary.name)
		s.setMyPrimary(me.primary.primary)
		s.updateState()
	case s.data != nil:
		for _, j := range dirtySlots {
			s.data.DeleteKeysInSlot(j)
		}
	}
}

// processGossip reads the gossip section of a PING, PONG or MEET:
// failure reports from primaries, and nodes this node did not know,
// added to be connected by the cron (clusterProcessGossipSection).
func (s *State) processGossip(l link, m *message, sender *node) {
	now := nowMs()
	for i := range m.gossip {
		g := &m.gossip[i]
		n := s.nodes[g.name]
		if n == nil {
			if sender != nil && g.flags&flagNoAddr == 0 && !s.blacklisted(g.name) && validName(g.name) {
				n = s.newNode(g.name, g.flags&^(flagMyself|flagPFail|flagFail|flagHandshake|flagMeet))
				n.ip, n.port, n.pport, n.cport = g.ip, int(g.port), int(g.pport), int(g.cport)
				s.addNode(n)
				s.saveNeeded = true
			}
			continue
		}
		if sender != nil && sender.isPrimary() && n != s.myself {
			if g.flags&(flagFail|flagPFail) != 0 {
				n.failReports[sender] = now
				s.markFailingIfNeeded(n)
			} else {
				delete(n.failReports, sender)
			}
		}
		if g.flags&(flagFail|flagPFail) == 0 && n.pingSent == 0 && s.failureReports(n) == 0 {
			pong := int64(g.pongReceived) * 1000
			if pong <= now+500 && pong > n.pongReceived {
				n.pongReceived = pong
			}
		}
		if n.flags&(flagFail|flagPFail) != 0 && g.flags&(flagNoAddr|flagFail|flagPFail) == 0 &&
			(n.ip != g.ip || n.port != int(g.port) || n.cport != int(g.cport)) {
			if n.link != nil {
				n.link.close()
				n.link = nil
			}
			n.ip, n.port, n.pport, n.cport = g.ip, int(g.port), int(g.pport), int(g.cport)
			n.flags &^= flagNoAddr
			s.routesDirty = true
		}
	}
}

// failureReports counts n's failure reports still valid, dropping the
// others.
func (s *State) failureReports(n *node) int {
	maxAge := s.nodeTimeout.Load() * failReportMult
	now := nowMs()
	for from, t := range n.failReports {
		if now-t > maxAge {
			delete(n.failReports, from)
		}
	}
	return len(n.failReports)
}

// markFailingIfNeeded turns n from PFAIL to FAIL when a majority of the
// primaries serving slots reports it, and tells every node.
func (s *State) markFailingIfNeeded(n *node) {
	if !n.timedOut() || n.failed() {
		return
	}
	failures := s.failureReports(n)
	if s.myself.isPrimary() {
		failures++
	}
	if failures < s.size/2+1 {
		return
	}
	s.logger.Info("marking node as failing (quorum reached)", "node", n.name)
	n.flags &^= flagPFail
	n.flags |= flagFail
	n.failTime = nowMs()
	s.sendFail(n.name)
	s.saveNeeded = true
	s.updateState()
}

// clearFailureIfNeeded lifts FAIL from a node reachable again: at once for
// a replica or a primary without slots, after twice the node timeout for
// a primary whose slots nobody took.
func (s *State) clearFailureIfNeeded(n *node) {
	if n.isReplica() || n.numSlots == 0 {
		s.logger.Info("clear FAIL state for node: reachable again", "node", n.name)
		n.flags &^= flagFail
		s.saveNeeded = true
		s.updateState()
	}
	if n.isPrimary() && n.numSlots > 0 && nowMs()-n.failTime > s.nodeTimeout.Load()*failUndoMult {
		s.logger.Info("clear FAIL state for node: reachable again and nobody is serving its slots", "node", n.name)
		n.flags &^= flagFail
		s.saveNeeded = true
		s.updateState()
	}
}

func (s *State) blacklisted(name string) bool {
	now := nowMs()
	for k, exp := range s.blacklist {
		if exp < now {
			delete(s.blacklist, k)
		}
	}
	_, ok := s.blacklist[name]
	return ok
}
