package store

// Deleting and trimming stream entries.

// markDeleted flags the entry whose flags are at p in node i as deleted
// and updates the node's counts; a node left without live entries goes.
// It reports whether the node was removed.
func (s *Stream) markDeleted(i int, v *nodeView, e *streamEntry) bool {
	s.length--
	if v.count == 1 {
		s.removeNodes(i, i+1)
		return true
	}
	v.lp[e.p] = byte(e.flags | streamFlagDeleted) // flags are 0..3: one byte
	s.setCounts(i, v.count-1, v.deleted+1)
	return false
}

// removeNodes removes nodes [i, j).
func (s *Stream) removeNodes(i, j int) {
	for k := i; k < j; k++ {
		s.size -= int64(cap(s.nodes[k].lp)) + streamNodeSize
	}
	n := copy(s.nodes[i:], s.nodes[j:])
	clear(s.nodes[i+n:])
	s.nodes = s.nodes[:i+n]
}

// Delete deletes the entries of ids that exist, as XDEL does: the greatest
// deleted ID becomes MaxDeletedID, and FirstID follows. It returns how many
// it deleted.
func (s *Stream) Delete(ids []StreamID) int {
	deleted := 0
	firstGone := false
	var mf [16]int
	for _, id := range ids {
		if len(s.nodes) == 0 {
			break
		}
		i := s.nodeFor(id)
		v := s.view(i, mf[:0])
		for p := v.first; p < v.end(); {
			e := v.entryAt(p)
			p = e.next
			if c := e.id.Compare(id); c < 0 {
				continue
			} else if c > 0 {
				break
			}
			if e.flags&streamFlagDeleted == 0 {
				s.markDeleted(i, &v, &e)
				deleted++
				if id == s.first {
					firstGone = true
				}
				if s.maxDeleted.Less(id) {
					s.maxDeleted = id
				}
			}
			break
		}
	}
	if deleted > 0 {
		if s.length == 0 {
			s.first = StreamID{}
		} else if firstGone {
			s.first = s.Edge(true, true)
		}
	}
	return deleted
}

// Edge returns the first (or last) entry's ID, live only or tombstones
// too; with none, MaxStreamID for the first and 0-0 for the last, as
// Redis's streamGetEdgeID.
func (s *Stream) Edge(first, skipTombstones bool) StreamID {
	var mf [16]int
	if first {
		for i := range s.nodes {
			v := s.view(i, mf[:0])
			for p := v.first; p < v.end(); {
				e := v.entryAt(p)
				p = e.next
				if !skipTombstones || e.flags&streamFlagDeleted == 0 {
					return e.id
				}
			}
		}
		return MaxStreamID
	}
	for i := len(s.nodes) - 1; i >= 0; i-- {
		v := s.view(i, mf[:0])
		for p := v.end(); p > v.first; {
			e := v.entryAt(v.entryBefore(p))
			p = e.p
			if !skipTombstones || e.flags&streamFlagDeleted == 0 {
				return e.id
			}
		}
	}
	return StreamID{}
}

// Trim is a trimming request: by MaxLen (ByID false) or by MinID, Approx
// removing whole nodes only, Limit bounding the entries removed (0: none).
type Trim struct {
	ByID   bool
	MaxLen uint64
	MinID  StreamID
	Approx bool
	Limit  int64
}

// Trim removes entries from the head as Redis 7.0's streamTrim does and
// returns how many.
func (s *Stream) Trim(t Trim) int64 {
	var deleted int64
	var mf [16]int
	gone := 0 // head nodes removed whole
	for i := 0; i < len(s.nodes); i++ {
		if !t.ByID && s.length <= t.MaxLen {
			break
		}
		v := s.view(i, mf[:0])
		if t.Limit > 0 && deleted+v.count > t.Limit {
			break
		}
		var whole bool
		if !t.ByID {
			whole = s.length-uint64(v.count) >= t.MaxLen
		} else {
			last := v.entryAt(v.entryBefore(v.end()))
			whole = last.id.Less(t.MinID)
		}
		if whole {
			s.length -= uint64(v.count)
			deleted += v.count
			gone = i + 1
			continue
		}
		if t.Approx {
			break
		}
		var marked int64
		for p := v.first; p < v.end(); {
			e := v.entryAt(p)
			p = e.next
			if !t.ByID && s.length <= t.MaxLen || t.ByID && !e.id.Less(t.MinID) {
				break
			}
			if e.flags&streamFlagDeleted == 0 {
				v.lp[e.p] = byte(e.flags | streamFlagDeleted)
				marked++
				s.length--
			}
		}
		if marked > 0 {
			s.setCounts(i, v.count-marked, v.deleted+marked)
		}
		deleted += marked
		break
	}
	if gone > 0 {
		s.removeNodes(0, gone)
	}
	if s.length == 0 {
		s.first = StreamID{}
	} else {
		s.first = s.Edge(true, true)
	}
	return deleted
}
