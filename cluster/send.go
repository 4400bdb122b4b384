package cluster

import "math/rand/v2"

// header builds the header of a message of type typ from this node, as
// Redis's clusterBuildMessageHdr: a replica sends its primary's slots and
// config epoch.
func (s *State) header(typ uint16) *header {
	me := s.myself
	primary := me
	if me.isReplica() && me.primary != nil {
		primary = me.primary
	}
	port, pport, cport := s.announcedPorts()
	h := &header{
		typ:          typ,
		port:         uint16(port),
		pport:        uint16(pport),
		cport:        uint16(cport),
		sender:       me.name,
		slots:        primary.slots,
		myIP:         *s.announceIP.Load(),
		flags:        me.flags,
		state:        byte(s.state),
		currentEpoch: s.currentEpoch,
		configEpoch:  primary.configEpoch,
	}
	if s.data != nil {
		h.offset = s.data.ReplOffset()
	}
	if me.primary != nil {
		h.slaveOf = me.primary.name
	}
	if me.isPrimary() && s.manual.end != 0 && s.writesHeld.Load() {
		h.mflags[0] |= mflag0Paused
	}
	return h
}

// announcedPorts are the client, plaintext and bus ports this node
// gives, cluster-announce-port and -bus-port overriding its own.
func (s *State) announcedPorts() (port, pport, cport int) {
	port, cport = s.opts.Port, s.opts.BusPort
	if p := s.announcePort.Load(); p != 0 {
		port = int(p)
	}
	if p := s.announceBusPort.Load(); p != 0 {
		cport = int(p)
	}
	return port, 0, cport
}

// sendPing sends a PING, PONG or MEET with gossip about some other nodes
// and every node in PFAIL (clusterSendPing).
func (s *State) sendPing(l link, typ uint16) {
	s.pingsSent++
	freshNodes := len(s.nodes) - 2
	wanted := max(len(s.nodes)/10, 3)
	wanted = min(wanted, freshNodes)
	if !l.isInbound() && typ == msgPing {
		l.peer().pingSent = nowMs()
	}
	h := s.header(typ)
	var entries []gossip
	if wanted > 0 {
		all := make([]*node, 0, len(s.nodes))
		for _, n := range s.nodes {
			all = append(all, n)
		}
		for tries := wanted * 3; freshNodes > 0 && len(entries) < wanted && tries > 0; tries-- {
			n := all[rand.IntN(len(all))]
			if n == s.myself || n.flags&flagPFail != 0 {
				continue
			}
			if n.flags&(flagHandshake|flagNoAddr) != 0 || (n.link == nil && n.numSlots == 0) {
				freshNodes--
				continue
			}
			if n.lastInGossip == s.pingsSent {
				continue
			}
			n.lastInGossip = s.pingsSent
			entries = append(entries, s.gossipOf(n))
			freshNodes--
		}
	}
	for _, n := range s.nodes {
		if n.flags&(flagHandshake|flagNoAddr) == 0 && n.flags&flagPFail != 0 {
			entries = append(entries, s.gossipOf(n))
		}
	}
	hostname := *s.announceHostname.Load()
	h.count = uint16(len(entries))
	if hostname != "" {
		h.mflags[0] |= mflag0ExtData
		h.extensions = 1
	}
	b := appendHeader(make([]byte, 0, headerLen+len(entries)*gossipLen+extHdrLen+len(hostname)+8), h)
	for i := range entries {
		b = appendGossip(b, &entries[i])
	}
	if hostname != "" {
		b = appendHostnameExt(b, hostname)
	}
	putTotlen(b, 0)
	s.sent[typ]++
	l.send(b)
}

func (s *State) gossipOf(n *node) gossip {
	return gossip{
		name:         n.name,
		pingSent:     uint32(n.pingSent / 1000),
		pongReceived: uint32(n.pongReceived / 1000),
		ip:           n.ip,
		port:         uint16(n.port),
		cport:        uint16(n.cport),
		flags:        n.flags,
		pport:        uint16(n.pport),
	}
}

// broadcast sends b to every node with a link, but myself and nodes in
// handshake.
func (s *State) broadcast(typ uint16, b []byte) {
	for _, n := range s.nodes {
		if n.flags&(flagMyself|flagHandshake) != 0 || n.link == nil {
			continue
		}
		s.sent[typ]++
		n.link.send(b)
	}
}

// sendFail tells every node that name failed.
func (s *State) sendFail(name string) {
	b := appendHeader(nil, s.header(msgFail))
	b = append(b, make([]byte, failLen)...)
	copy(b[headerLen:], name)
	putTotlen(b, 0)
	s.broadcast(msgFail, b)
}

// sendUpdate tells the node of l about n's slots and config epoch.
func (s *State) sendUpdate(l link, n *node) {
	b := appendHeader(nil, s.header(msgUpdate))
	body := make([]byte, updateLen)
	putUint64(body, n.configEpoch)
	copy(body[8:], n.name)
	copy(body[8+nameLen:], n.slots[:])
	b = append(b, body...)
	putTotlen(b, 0)
	s.sent[msgUpdate]++
	l.send(b)
}

// broadcastPong sends a PONG to every connected node, so that a change of
// this node's slots or role spreads at once.
func (s *State) broadcastPong() {
	for _, n := range s.nodes {
		if n.link == nil || n == s.myself || n.flags&flagHandshake != 0 {
			continue
		}
		s.sendPing(n.link, msgPong)
	}
}

func putUint64(b []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}
