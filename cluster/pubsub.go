package cluster

import "encoding/binary"

// Pub/sub across the cluster, as Redis 7.0: a PUBLISH on any node goes to
// every node over the bus (PUBLISH messages), an SPUBLISH to the other
// nodes of the publisher's shard, its primary and replicas (PUBLISHSHARD);
// each node delivers it to its own subscribers (Data.Deliver). The
// deliveries of a bus message are made after State.mu is released.

// delivery is a message from the bus for this node's subscribers.
type delivery struct {
	channel, payload []byte
	shard            bool
}

// Publish sends a message published on this node to the other nodes:
// every node, or with shard the nodes of this node's shard.
func (s *State) Publish(channel, payload []byte, shard bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	typ := uint16(msgPublish)
	if shard {
		typ = msgPublishShard
	}
	b := appendHeader(make([]byte, 0, headerLen+8+len(channel)+len(payload)), s.header(typ))
	var lens [8]byte
	binary.BigEndian.PutUint32(lens[:], uint32(len(channel)))
	binary.BigEndian.PutUint32(lens[4:], uint32(len(payload)))
	b = append(append(append(b, lens[:]...), channel...), payload...)
	putTotlen(b, 0)
	if !shard {
		s.broadcast(typ, b)
		return
	}
	primary := s.myself
	if primary.isReplica() {
		primary = primary.primary
	}
	if primary == nil {
		return
	}
	for _, n := range append([]*node{primary}, primary.replicas...) {
		if n != s.myself && n.link != nil && n.flags&flagHandshake == 0 {
			s.sent[typ]++
			n.link.send(b)
		}
	}
}

// queueDelivery keeps a PUBLISH or PUBLISHSHARD of a known node for
// deliverPending, copying it out of the link's buffer.
func (s *State) queueDelivery(m *message) {
	if s.data == nil {
		return
	}
	d := delivery{shard: m.typ == msgPublishShard}
	d.channel = append([]byte(nil), m.channel...)
	d.payload = append([]byte(nil), m.payload...)
	s.deliveries = append(s.deliveries, d)
}

// takeDeliveries returns the deliveries queued; under mu. The caller runs
// deliver on them once it released mu.
func (s *State) takeDeliveries() []delivery {
	d := s.deliveries
	s.deliveries = nil
	return d
}

func (s *State) deliver(ds []delivery) {
	for _, d := range ds {
		s.data.Deliver(d.channel, d.payload, d.shard)
	}
}
