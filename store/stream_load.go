package store

import (
	"errors"
	"fmt"
	"slices"
)

// Streams to and from their serialized form (RDB files, DUMP payloads):
// the nodes are Redis's listpacks, copied as they are after every entry of
// every node has been checked, so that a corrupt payload is refused here
// and never reaches the code that trusts the layout.

// StreamNodeData is one node as serialized: its master ID and listpack.
type StreamNodeData struct {
	Master StreamID
	LP     []byte
}

// StreamMeta is a stream's state besides its nodes.
type StreamMeta struct {
	Length       uint64
	LastID       StreamID
	FirstID      StreamID
	MaxDeletedID StreamID
	EntriesAdded uint64
	// V1: a STREAM_LISTPACKS value (Redis 5 and 6), which lacks FirstID,
	// MaxDeletedID and EntriesAdded: derived as Redis derives them.
	V1 bool
}

// Nodes calls fn with each node, oldest first; lp is the stream's memory,
// valid while the caller holds the key's lock.
func (s *Stream) Nodes(fn func(master StreamID, lp []byte)) {
	for _, nd := range s.nodes {
		fn(nd.master, nd.lp)
	}
}

// Meta returns the stream's state besides its nodes.
func (s *Stream) Meta() StreamMeta {
	return StreamMeta{Length: s.length, LastID: s.last, FirstID: s.first, MaxDeletedID: s.maxDeleted, EntriesAdded: s.entriesAdded}
}

// LoadStream builds a stream from serialized nodes, copying them, and
// refuses any that is not a well-formed stream node, entries out of
// order, or counts that disagree with the entries.
func LoadStream(nodes []StreamNodeData, m StreamMeta) (*Stream, error) {
	s := NewStream()
	var prev StreamID
	var live uint64
	seen := false
	for i, nd := range nodes {
		if i > 0 && !nodes[i-1].Master.Less(nd.Master) {
			return nil, fmt.Errorf("stream node %d: master ID %v not after the previous node's", i, nd.Master)
		}
		n, last, err := checkStreamNode(nd.Master, nd.LP, prev, seen)
		if err != nil {
			return nil, fmt.Errorf("stream node %d: %w", i, err)
		}
		live += n
		prev, seen = last, true
		s.nodes = append(s.nodes, streamNode{master: nd.Master, lp: append([]byte(nil), nd.LP...)})
	}
	if live != m.Length {
		return nil, fmt.Errorf("stream length %d, but its nodes hold %d live entries", m.Length, live)
	}
	if seen && m.LastID.Less(prev) {
		return nil, fmt.Errorf("stream last ID %v is before its last entry %v", m.LastID, prev)
	}
	s.length, s.last = m.Length, m.LastID
	if m.V1 {
		s.entriesAdded = m.Length
		if s.length > 0 {
			s.first = s.Edge(true, true)
		}
	} else {
		s.first, s.maxDeleted, s.entriesAdded = m.FirstID, m.MaxDeletedID, m.EntriesAdded
	}
	s.resize()
	return s, nil
}

var errStreamNode = errors.New("malformed stream node")

// checkStreamNode checks every element of one node and returns its live
// entries and its last entry's ID; entries must come after prev (when
// seen) and after the node's master ID.
func checkStreamNode(master StreamID, lp []byte, prev StreamID, seen bool) (live uint64, last StreamID, err error) {
	if _, err := lpCheck(lp); err != nil {
		return 0, last, err
	}
	end := len(lp) - 1
	p := lpHdr
	next := func() (lpElem, bool) {
		if p >= end {
			return lpElem{}, false
		}
		var e lpElem
		e, p = lpNext(lp, p) // lpCheck checked it
		return e, true
	}
	nextInt := func() (int64, bool) {
		e, ok := next()
		return e.Int, ok && e.IsInt
	}
	count, ok1 := nextInt()
	deleted, ok2 := nextInt()
	nmaster, ok3 := nextInt()
	if !ok1 || !ok2 || !ok3 || count < 0 || deleted < 0 || nmaster < 0 || nmaster > int64(len(lp)) {
		return 0, last, errStreamNode
	}
	for j := int64(0); j < nmaster; j++ {
		if _, ok := next(); !ok {
			return 0, last, errStreamNode
		}
	}
	if z, ok := nextInt(); !ok || z != 0 {
		return 0, last, errStreamNode
	}
	var nLive, nDeleted int64
	for p < end {
		flags, ok := nextInt()
		if !ok || flags < 0 || flags > 3 {
			return 0, last, errStreamNode
		}
		ms, ok1 := nextInt()
		seq, ok2 := nextInt()
		if !ok1 || !ok2 {
			return 0, last, errStreamNode
		}
		id := StreamID{master.Ms + uint64(ms), master.Seq + uint64(seq)}
		if id.Less(master) || seen && !prev.Less(id) {
			return 0, last, fmt.Errorf("entry %v out of order", id)
		}
		prev, seen, last = id, true, id
		elems := nmaster
		want := nmaster + 3
		if flags&streamFlagSameFields == 0 {
			nf, ok := nextInt()
			if !ok || nf < 0 || nf > int64(len(lp)) {
				return 0, last, errStreamNode
			}
			elems = 2 * nf
			want = 2*nf + 4
		}
		for j := int64(0); j < elems; j++ {
			if _, ok := next(); !ok {
				return 0, last, errStreamNode
			}
		}
		if c, ok := nextInt(); !ok || c != want {
			return 0, last, errStreamNode
		}
		if flags&streamFlagDeleted != 0 {
			nDeleted++
		} else {
			nLive++
		}
	}
	if nLive+nDeleted == 0 || nLive != count || nDeleted != deleted {
		return 0, last, errStreamNode
	}
	return uint64(nLive), last, nil
}

// StreamConsumerData is a consumer as serialized: its name, seen time and
// the IDs of its pending entries.
type StreamConsumerData struct {
	Name     []byte
	SeenTime int64
	PEL      []StreamID
}

// LoadGroup adds a group as serialized (RDB, DUMP) and refuses a payload
// Redis would refuse or could not serve: a duplicate group, pending entry
// or consumer, a consumer's pending ID missing from the group's PEL, and
// (as Redis's deep check) a pending entry that no consumer owns or that
// two do. Consumer's PEL entries take DeliveryTime and DeliveryCount from
// pel; their Consumer fields are ignored.
func (s *Stream) LoadGroup(name []byte, last StreamID, entriesRead int64, pel []PendingEntry, consumers []StreamConsumerData) error {
	if entriesRead < SCGInvalidEntriesRead {
		return fmt.Errorf("consumer group %q: entries read %d", name, entriesRead)
	}
	sorted := slices.Clone(pel)
	slices.SortFunc(sorted, func(a, b PendingEntry) int { return a.ID.Compare(b.ID) })
	for i := range sorted {
		if i > 0 && sorted[i].ID == sorted[i-1].ID {
			return fmt.Errorf("consumer group %q: pending entry %v twice", name, sorted[i].ID)
		}
		sorted[i].Consumer = -1
	}
	g, ok := s.CreateGroup(name, last, entriesRead)
	if !ok {
		return fmt.Errorf("consumer group %q twice", name)
	}
	fail := func(err error) error {
		s.DestroyGroup(name)
		return err
	}
	s.change(g, func() { g.pel = sorted })
	for _, c := range consumers {
		idx, created := s.CreateConsumer(g, c.Name, c.SeenTime)
		if !created {
			return fail(fmt.Errorf("consumer group %q: consumer %q twice", name, c.Name))
		}
		for _, id := range c.PEL {
			i, found := g.FindPending(id)
			if !found {
				return fail(fmt.Errorf("consumer group %q: consumer %q's pending %v is not in the group's", name, c.Name, id))
			}
			if g.pel[i].Consumer >= 0 {
				return fail(fmt.Errorf("consumer group %q: pending entry %v owned twice", name, id))
			}
			g.Claim(i, idx)
		}
	}
	for _, p := range g.pel {
		if p.Consumer < 0 {
			return fail(fmt.Errorf("consumer group %q: pending entry %v has no consumer", name, p.ID))
		}
	}
	return nil
}
