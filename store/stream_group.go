package store

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unsafe"
)

// Consumer groups. A group's pending entries list (PEL) is one sorted,
// pointer-free slice of PendingEntry, each naming its consumer by index;
// a consumer's own pending entries are the group's that name it. The
// consumers are pointer-free records whose names live in one byte arena
// per group, so a group costs the collector three pointers (PEL,
// consumers, names) however many consumers and pending entries it has.
//
// Every change that can move a group's size goes through a Stream method,
// which keeps the stream's running total (groupBytes) exact.

// StreamGroup is a consumer group of a stream.
type StreamGroup struct {
	name []byte
	// LastID is the last ID delivered to the group.
	LastID StreamID
	// EntriesRead is the group's logical read counter, -1 when unknown
	// (Redis's SCG_INVALID_ENTRIES_READ).
	EntriesRead int64
	pel         []PendingEntry // by ID
	consumers   []consumerRec  // slots; order of creation, holes moved into on delete
	names       []byte         // the consumers' names
}

// consumerRec is one consumer: its name in the group's arena.
type consumerRec struct {
	nameOff  uint32
	nameLen  uint32
	seenTime int64 // unix ms of its last interaction
	pending  int64 // its entries in the group's PEL
}

// PendingEntry is one delivered, unacknowledged entry. Its fields other
// than Consumer may be changed in place (see StreamGroup.Pending).
type PendingEntry struct {
	ID            StreamID
	DeliveryTime  int64 // unix ms of the last delivery
	DeliveryCount uint64
	Consumer      int32 // index of its consumer (see StreamGroup.ConsumerName)
}

// StreamConsumer describes a consumer.
type StreamConsumer struct {
	Index    int
	Name     []byte // the group's memory: valid until the group changes
	SeenTime int64
	Pending  int64
}

const (
	groupSize    = int64(unsafe.Sizeof(StreamGroup{})) + 16
	consumerSize = int64(unsafe.Sizeof(consumerRec{}))
	pendingSize  = int64(unsafe.Sizeof(PendingEntry{}))
	// SCGInvalidEntriesRead is an unknown EntriesRead.
	SCGInvalidEntriesRead = -1
)

// Name is the group's name (the group's memory).
func (g *StreamGroup) Name() []byte { return g.name }

// Pending is the group's PEL, by ID. Callers may change an entry's
// DeliveryTime and DeliveryCount in place, nothing else.
func (g *StreamGroup) Pending() []PendingEntry { return g.pel }

// FindPending returns the index of id in the PEL, or where it would go.
func (g *StreamGroup) FindPending(id StreamID) (int, bool) {
	return slices.BinarySearchFunc(g.pel, id, func(p PendingEntry, id StreamID) int { return p.ID.Compare(id) })
}

// ConsumerName is consumer i's name (the group's memory).
func (g *StreamGroup) ConsumerName(i int32) []byte {
	c := &g.consumers[i]
	return g.names[c.nameOff : c.nameOff+c.nameLen : c.nameOff+c.nameLen]
}

// NumConsumers is how many consumers the group has.
func (g *StreamGroup) NumConsumers() int { return len(g.consumers) }

// FindConsumer returns the index of the consumer named name, or -1.
func (g *StreamGroup) FindConsumer(name []byte) int32 {
	for i := range g.consumers {
		if bytes.Equal(g.ConsumerName(int32(i)), name) {
			return int32(i)
		}
	}
	return -1
}

// Consumer describes consumer i.
func (g *StreamGroup) Consumer(i int32) StreamConsumer {
	c := &g.consumers[i]
	return StreamConsumer{Index: int(i), Name: g.ConsumerName(i), SeenTime: c.seenTime, Pending: c.pending}
}

// Consumers returns the consumers ordered by name, as Redis lists them.
func (g *StreamGroup) Consumers() []StreamConsumer {
	out := make([]StreamConsumer, len(g.consumers))
	for i := range g.consumers {
		out[i] = g.Consumer(int32(i))
	}
	slices.SortFunc(out, func(a, b StreamConsumer) int { return bytes.Compare(a.Name, b.Name) })
	return out
}

// Touch sets consumer i's seen time (a lookup that refreshes it).
func (g *StreamGroup) Touch(i int32, now int64) { g.consumers[i].seenTime = now }

func (g *StreamGroup) clone() *StreamGroup {
	c := *g
	c.name = slices.Clone(g.name)
	c.pel = slices.Clone(g.pel)
	c.consumers = slices.Clone(g.consumers)
	c.names = slices.Clone(g.names)
	return &c
}

func (g *StreamGroup) size() int64 {
	return groupSize + int64(cap(g.name)) + int64(cap(g.pel))*pendingSize +
		int64(cap(g.consumers))*consumerSize + int64(cap(g.names))
}

// change runs fn on g and keeps the stream's group size exact.
func (s *Stream) change(g *StreamGroup, fn func()) {
	before := g.size()
	fn()
	s.groupBytes += g.size() - before
}

// Group returns the group named name, or nil.
func (s *Stream) Group(name []byte) *StreamGroup {
	i, ok := s.findGroup(name)
	if !ok {
		return nil
	}
	return s.groups[i]
}

func (s *Stream) findGroup(name []byte) (int, bool) {
	return slices.BinarySearchFunc(s.groups, name, func(g *StreamGroup, n []byte) int { return bytes.Compare(g.name, n) })
}

// Groups returns the groups ordered by name; the slice is the stream's.
func (s *Stream) Groups() []*StreamGroup { return s.groups }

// CreateGroup adds a group; false if one of that name exists.
func (s *Stream) CreateGroup(name []byte, last StreamID, entriesRead int64) (*StreamGroup, bool) {
	i, ok := s.findGroup(name)
	if ok {
		return nil, false
	}
	g := &StreamGroup{name: slices.Clip(slices.Clone(name)), LastID: last, EntriesRead: entriesRead}
	s.groups = slices.Insert(s.groups, i, g)
	s.groupBytes += g.size() + 8
	return g, true
}

// DestroyGroup removes the group named name and reports whether it was.
func (s *Stream) DestroyGroup(name []byte) bool {
	i, ok := s.findGroup(name)
	if !ok {
		return false
	}
	s.groupBytes -= s.groups[i].size() + 8
	s.groups = slices.Delete(s.groups, i, i+1)
	return true
}

// CreateConsumer adds a consumer to g, seen at now, and returns its index;
// created is false (and the index the existing one's) if it exists.
func (s *Stream) CreateConsumer(g *StreamGroup, name []byte, now int64) (idx int32, created bool) {
	if i := g.FindConsumer(name); i >= 0 {
		return i, false
	}
	s.change(g, func() {
		g.consumers = append(g.consumers, consumerRec{nameOff: uint32(len(g.names)), nameLen: uint32(len(name)), seenTime: now})
		g.names = append(g.names, name...)
	})
	return int32(len(g.consumers) - 1), true
}

// DeleteConsumer removes consumer i and its pending entries, and returns
// how many it had. The last consumer takes i's index.
func (s *Stream) DeleteConsumer(g *StreamGroup, i int32) int64 {
	pending := g.consumers[i].pending
	s.change(g, func() {
		last := int32(len(g.consumers) - 1)
		g.pel = slices.DeleteFunc(g.pel, func(p PendingEntry) bool { return p.Consumer == i })
		if i != last {
			g.consumers[i] = g.consumers[last]
			for j := range g.pel {
				if g.pel[j].Consumer == last {
					g.pel[j].Consumer = i
				}
			}
		}
		g.consumers = g.consumers[:last]
		// The names again, without the deleted one's.
		names := make([]byte, 0, len(g.names))
		for j := range g.consumers {
			c := &g.consumers[j]
			off := len(names)
			names = append(names, g.names[c.nameOff:c.nameOff+c.nameLen]...)
			c.nameOff = uint32(off)
		}
		g.names = names
		if cap(g.pel) > 64 && len(g.pel) < cap(g.pel)/4 {
			g.pel = slices.Clip(slices.Clone(g.pel))
		}
	})
	return pending
}

// Deliver records that id was delivered to consumer c at now, as
// XREADGROUP does: a new pending entry, or one that another consumer
// held (after XGROUP SETID) moved to c with its count reset to 1. It
// returns the entry.
func (s *Stream) Deliver(g *StreamGroup, c int32, id StreamID, now int64) PendingEntry {
	i, ok := g.FindPending(id)
	if ok {
		p := &g.pel[i]
		g.consumers[p.Consumer].pending--
		g.consumers[c].pending++
		p.Consumer, p.DeliveryTime, p.DeliveryCount = c, now, 1
		return *p
	}
	e := PendingEntry{ID: id, DeliveryTime: now, DeliveryCount: 1, Consumer: c}
	s.change(g, func() { g.pel = slices.Insert(g.pel, i, e) })
	g.consumers[c].pending++
	return e
}

// Claim gives pending entry i to consumer c.
func (g *StreamGroup) Claim(i int, c int32) {
	p := &g.pel[i]
	if p.Consumer == c {
		return
	}
	if p.Consumer >= 0 {
		g.consumers[p.Consumer].pending--
	}
	g.consumers[c].pending++
	p.Consumer = c
}

// AddPending inserts a pending entry owned by nobody yet (XCLAIM FORCE),
// at index i as FindPending returned it, delivered once at now, as
// Redis's streamCreateNACK makes it; Claim must follow.
func (s *Stream) AddPending(g *StreamGroup, i int, id StreamID, now int64) {
	e := PendingEntry{ID: id, DeliveryTime: now, DeliveryCount: 1, Consumer: -1}
	s.change(g, func() { g.pel = slices.Insert(g.pel, i, e) })
}

// RemovePending removes pending entry i (XACK, or a claim of an entry
// that no longer exists).
func (s *Stream) RemovePending(g *StreamGroup, i int) {
	if c := g.pel[i].Consumer; c >= 0 {
		g.consumers[c].pending--
	}
	s.change(g, func() {
		g.pel = slices.Delete(g.pel, i, i+1)
		if cap(g.pel) > 64 && len(g.pel) < cap(g.pel)/4 {
			g.pel = slices.Clip(slices.Clone(g.pel))
		}
	})
}

// groupsSize recomputes the groups' size, for a loaded or cloned stream.
func (s *Stream) groupsSize() int64 {
	n := int64(len(s.groups)) * 8
	for _, g := range s.groups {
		n += g.size()
	}
	return n
}

// RangeHasTombstones reports whether entries from start on may include a
// deleted one, as Redis's streamRangeHasTombstones (start before LastID).
func (s *Stream) RangeHasTombstones(start StreamID) bool {
	if s.length == 0 || s.maxDeleted.IsZero() || s.maxDeleted.Less(s.first) {
		return false
	}
	return !s.maxDeleted.Less(start)
}

// EstimateDistance is Redis's streamEstimateDistanceFromFirstEverEntry:
// id's logical read counter when it can be known, else
// SCGInvalidEntriesRead.
func (s *Stream) EstimateDistance(id StreamID) int64 {
	if s.entriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Compare(s.last) < 1 {
		return int64(s.entriesAdded)
	}
	switch c := id.Compare(s.last); {
	case c == 0:
		return int64(s.entriesAdded)
	case c > 0:
		return SCGInvalidEntriesRead
	}
	if s.maxDeleted.IsZero() || s.maxDeleted.Less(s.first) {
		switch id.Compare(s.first) {
		case -1:
			return int64(s.entriesAdded - s.length)
		case 0:
			return int64(s.entriesAdded-s.length) + 1
		}
	}
	return SCGInvalidEntriesRead
}

// Lag is a group's lag as XINFO reports it (streamReplyWithCGLag); ok is
// false when it cannot be known.
func (s *Stream) Lag(g *StreamGroup) (lag int64, ok bool) {
	switch {
	case s.entriesAdded == 0:
		return 0, true
	case g.EntriesRead != SCGInvalidEntriesRead && !s.RangeHasTombstones(g.LastID):
		return int64(s.entriesAdded) - g.EntriesRead, true
	}
	if n := s.EstimateDistance(g.LastID); n != SCGInvalidEntriesRead {
		return int64(s.entriesAdded) - n, true
	}
	return 0, false
}

// Advance moves g's last ID to id, an entry delivered after it, and its
// read counter as Redis's streamReplyWithRange does.
func (s *Stream) Advance(g *StreamGroup, id StreamID) {
	if g.EntriesRead != SCGInvalidEntriesRead && !s.RangeHasTombstones(id) {
		g.EntriesRead++
	} else if s.entriesAdded != 0 {
		g.EntriesRead = s.EstimateDistance(id)
	}
	g.LastID = id
}

// RadixTreeNodes is the number of nodes of the radix tree Redis keeps the
// stream's nodes in (XINFO STREAM's radix-tree-nodes): its keys are the
// master IDs as 16 big-endian bytes, a run of bytes with one child is
// one compressed node, a byte position where keys part one branching node,
// each key ends in a leaf, and an empty tree is its root.
func (s *Stream) RadixTreeNodes() int64 {
	keys := make([][16]byte, len(s.nodes))
	for i, nd := range s.nodes {
		binary.BigEndian.PutUint64(keys[i][:8], nd.master.Ms)
		binary.BigEndian.PutUint64(keys[i][8:], nd.master.Seq)
	}
	if len(keys) == 0 {
		return 1
	}
	return raxNodes(keys, 0)
}

// raxNodes counts the nodes below depth d of keys, sorted and sharing
// their first d bytes.
func raxNodes(keys [][16]byte, d int) int64 {
	if d == 16 {
		return 1
	}
	first, last := &keys[0], &keys[len(keys)-1]
	if first[d] == last[d] { // one child: a compressed node to the next branching
		p := d
		for p < 16 && first[p] == last[p] {
			p++
		}
		return 1 + raxNodes(keys, p)
	}
	n := int64(1)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j][d] == keys[i][d] {
			j++
		}
		n += raxNodes(keys[i:j], d+1)
		i = j
	}
	return n
}
