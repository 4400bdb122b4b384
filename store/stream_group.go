package store

import (
	"slices"
	"unsafe"
)

// Consumer groups. A group's pending entries list (PEL) is one sorted,
// pointer-free slice of pendingEntry, each naming its consumer by index;
// a consumer's own pending entries are the group's that name it.

// StreamGroup is a consumer group of a stream.
type StreamGroup struct {
	Name string
	// LastID is the last ID delivered to the group.
	LastID StreamID
	// EntriesRead is the group's logical read counter, -1 when unknown
	// (Redis's SCG_INVALID_ENTRIES_READ).
	EntriesRead int64
	pel         []pendingEntry // by ID
	consumers   []StreamConsumer
}

// StreamConsumer is a consumer of a group.
type StreamConsumer struct {
	Name     string
	SeenTime int64 // unix ms of its last interaction
}

// pendingEntry is one delivered, unacknowledged entry.
type pendingEntry struct {
	ID            StreamID
	DeliveryTime  int64 // unix ms of the last delivery
	DeliveryCount uint64
}

const (
	groupSize    = int64(unsafe.Sizeof(StreamGroup{})) + 16
	consumerSize = int64(unsafe.Sizeof(StreamConsumer{}))
	pendingSize  = int64(unsafe.Sizeof(pendingEntry{}))
)

func (g *StreamGroup) clone() *StreamGroup {
	c := *g
	c.pel = slices.Clone(g.pel)
	c.consumers = slices.Clone(g.consumers)
	return &c
}

func (g *StreamGroup) size() int64 {
	n := groupSize + int64(len(g.Name)) + int64(cap(g.pel))*pendingSize + int64(cap(g.consumers))*consumerSize
	for _, c := range g.consumers {
		n += int64(len(c.Name))
	}
	return n
}

func (s *Stream) groupsSize() int64 {
	var n int64
	for _, g := range s.groups {
		n += g.size()
	}
	return n
}
