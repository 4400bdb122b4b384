package cluster

import (
	"math/rand/v2"
	"time"
)

func (s *State) cronLoop() {
	defer close(s.done)
	t := time.NewTicker(cronInterval)
	defer t.Stop()
	var iteration uint64
	for {
		select {
		case <-s.stop:
			return
		case <-s.kicks:
			s.mu.Lock()
			s.beforeSleep()
			s.afterChange()
			s.mu.Unlock()
			continue
		case <-t.C:
		}
		iteration++
		s.mu.Lock()
		s.cron(iteration)
		s.afterChange()
		s.mu.Unlock()
	}
}

// cron is Redis's clusterCron, ten times a second: links to nodes
// without one, a PING to a random node every second and to every node
// not heard from in half the node timeout, PFAIL past the timeout.
func (s *State) cron(iteration uint64) {
	now := nowMs()
	timeout := s.nodeTimeout.Load()
	handshakeTimeout := max(timeout, 1000)
	s.pfailNodes = 0
	for _, n := range s.nodes {
		if n.flags&(flagMyself|flagNoAddr) != 0 {
			continue
		}
		if n.flags&flagPFail != 0 {
			s.pfailNodes++
		}
		if n.flags&flagHandshake != 0 && now-n.ctime > handshakeTimeout {
			s.delNode(n)
			continue
		}
		if n.link == nil {
			s.connect(n)
		}
	}
	if iteration%10 == 0 {
		var oldest *node
		all := make([]*node, 0, len(s.nodes))
		for _, n := range s.nodes {
			all = append(all, n)
		}
		for range 5 {
			n := all[rand.IntN(len(all))]
			if n.link == nil || n.pingSent != 0 || n.flags&(flagMyself|flagHandshake) != 0 {
				continue
			}
			if oldest == nil || oldest.pongReceived > n.pongReceived {
				oldest = n
			}
		}
		if oldest != nil {
			s.sendPing(oldest.link, msgPing)
		}
	}
	for _, n := range s.nodes {
		now = nowMs()
		if n.flags&(flagMyself|flagNoAddr|flagHandshake) != 0 {
			continue
		}
		pingDelay, dataDelay := now-n.pingSent, now-n.dataReceived
		if n.link != nil && now-n.link.ctime > timeout && n.pingSent != 0 &&
			pingDelay > timeout/2 && dataDelay > timeout/2 {
			n.link.close()
			n.link = nil
		}
		if n.link != nil && n.pingSent == 0 && now-n.pongReceived > timeout/2 {
			s.sendPing(n.link, msgPing)
			continue
		}
		if s.manual.end != 0 && s.myself.isPrimary() && s.manual.replica == n && n.link != nil {
			s.sendPing(n.link, msgPing) // the paused offset, at once
			continue
		}
		if n.pingSent == 0 {
			continue
		}
		if min(pingDelay, dataDelay) > timeout && n.flags&(flagPFail|flagFail) == 0 {
			s.logger.Debug("node possibly failing", "node", n.name)
			n.flags |= flagPFail
			s.routesDirty = true
		}
	}
	s.followIfNeeded()
	s.manualFailoverCheckTimeout()
	if s.myself.isReplica() {
		s.handleManualFailover()
		s.handleReplicaFailover()
	}
	s.updateState()
}
