package store

import (
	"strconv"
	"unsafe"
)

// Stream is a stream value (XADD, XRANGE, ...), laid out as Redis 7.0 lays
// one out: a sequence of nodes ordered by ID, each one listpack (see
// stream_lp.go) of entries whose IDs are deltas against the node's master
// ID, the ID of the first entry it received. The node starts with a master
// entry: the counts of live and deleted entries, and the field names of its
// first entry; an entry with the same field names keeps only its values
// (the SAMEFIELDS flag). A deleted entry stays in its node, flagged, until
// the node has no live entry left. The collector sees one pointer per node.
//
// Unlike other collections, a stream key stays when its last entry goes
// (XDEL, XTRIM), as in Redis: Len counts the stream itself as well, so it
// is never 0; Entries is the number of entries.
type Stream struct {
	nodes        []streamNode
	length       uint64 // live entries
	last         StreamID
	first        StreamID // the first live entry's ID, 0-0 when empty
	maxDeleted   StreamID
	entriesAdded uint64
	size         int64
	groups       []*StreamGroup // by name
	groupBytes   int64          // the groups' size (stream_group.go)
}

type streamNode struct {
	master StreamID
	lp     []byte
}

// StreamID is an entry ID, <ms>-<seq>.
type StreamID struct{ Ms, Seq uint64 }

// MaxStreamID is 18446744073709551615-18446744073709551615.
var MaxStreamID = StreamID{1<<64 - 1, 1<<64 - 1}

// Compare returns -1, 0 or 1 as a is less than, equal to or greater than b.
func (a StreamID) Compare(b StreamID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Less reports whether a < b.
func (a StreamID) Less(b StreamID) bool { return a.Compare(b) < 0 }

// IsZero reports whether a is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr returns the ID after a; ok is false for the maximum ID.
func (a StreamID) Incr() (StreamID, bool) {
	switch {
	case a.Seq < 1<<64-1:
		return StreamID{a.Ms, a.Seq + 1}, true
	case a.Ms < 1<<64-1:
		return StreamID{a.Ms + 1, 0}, true
	}
	return StreamID{}, false
}

// Decr returns the ID before a; ok is false for 0-0.
func (a StreamID) Decr() (StreamID, bool) {
	switch {
	case a.Seq > 0:
		return StreamID{a.Ms, a.Seq - 1}, true
	case a.Ms > 0:
		return StreamID{a.Ms - 1, 1<<64 - 1}, true
	}
	return MaxStreamID, false
}

// AppendTo appends the ID's text, <ms>-<seq>.
func (a StreamID) AppendTo(dst []byte) []byte {
	dst = strconv.AppendUint(dst, a.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, a.Seq, 10)
}

// String returns the ID's text.
func (a StreamID) String() string { return string(a.AppendTo(nil)) }

// Entry flags, as Redis's STREAM_ITEM_FLAG_*.
const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

const (
	streamHeader   = int64(unsafe.Sizeof(Stream{})) + 16
	streamNodeSize = int64(unsafe.Sizeof(streamNode{}))
	// streamLPMax is Redis's STREAM_LISTPACK_MAX_SIZE.
	streamLPMax = 1 << 30
)

var _ Object = (*Stream)(nil)

// NewStream returns an empty stream.
func NewStream() *Stream { return &Stream{size: streamHeader} }

// Kind implements Object.
func (s *Stream) Kind() Kind { return KindStream }

// Len implements Object: the entries plus one, so that an emptied stream is
// kept (see Stream).
func (s *Stream) Len() int { return int(min(s.length, 1<<62)) + 1 }

// Entries is the number of entries (XLEN).
func (s *Stream) Entries() uint64 { return s.length }

// Size implements Object.
func (s *Stream) Size() int64 { return s.size + s.groupBytes }

// Encoding implements Object.
func (s *Stream) Encoding() string { return "stream" }

// Clone implements Object.
func (s *Stream) Clone() Object {
	c := *s
	c.nodes = make([]streamNode, len(s.nodes))
	for i, nd := range s.nodes {
		c.nodes[i] = streamNode{master: nd.master, lp: append([]byte(nil), nd.lp...)}
	}
	c.groups = make([]*StreamGroup, len(s.groups))
	for i, g := range s.groups {
		c.groups[i] = g.clone()
	}
	c.resize()
	c.groupBytes = c.groupsSize()
	return &c
}

// resize recomputes size from the nodes.
func (s *Stream) resize() {
	s.size = streamHeader + int64(cap(s.nodes))*streamNodeSize
	for _, nd := range s.nodes {
		s.size += int64(cap(nd.lp))
	}
}

// LastID is the ID of the last entry ever added (or set by XSETID).
func (s *Stream) LastID() StreamID { return s.last }

// FirstID is the first live entry's ID, 0-0 when there is none.
func (s *Stream) FirstID() StreamID { return s.first }

// MaxDeletedID is the greatest ID XDEL deleted (or XSETID set).
func (s *Stream) MaxDeletedID() StreamID { return s.maxDeleted }

// EntriesAdded counts every entry ever added (or set by XSETID).
func (s *Stream) EntriesAdded() uint64 { return s.entriesAdded }

// SetLastID sets the last ID, and with entriesAdded >= 0 and maxDeleted
// non-nil those too (XSETID); the caller has checked them.
func (s *Stream) SetLastID(id StreamID, entriesAdded int64, maxDeleted *StreamID) {
	s.last = id
	if entriesAdded >= 0 {
		s.entriesAdded = uint64(entriesAdded)
	}
	if maxDeleted != nil {
		s.maxDeleted = *maxDeleted
	}
}

// nodeView is a node being read: its master entry decoded.
type nodeView struct {
	lp      []byte
	master  StreamID
	count   int64 // live entries
	deleted int64
	mfields []int // offsets of the master entry's field names
	first   int   // offset of the first entry's flags
}

func (s *Stream) view(i int, mf []int) nodeView {
	nd := &s.nodes[i]
	v := nodeView{lp: nd.lp, master: nd.master}
	e, p := lpNext(nd.lp, lpHdr)
	v.count = e.Int
	e, p = lpNext(nd.lp, p)
	v.deleted = e.Int
	e, p = lpNext(nd.lp, p)
	v.mfields = mf[:0]
	for j := int64(0); j < e.Int; j++ {
		v.mfields = append(v.mfields, p)
		_, p = lpNext(nd.lp, p)
	}
	_, p = lpNext(nd.lp, p) // the master terminator
	v.first = p
	return v
}

// entry is one entry of a node.
type streamEntry struct {
	id    StreamID
	flags int64
	p     int // offset of its flags
	vals  int // offset of its first field (or value with SAMEFIELDS)
	nf    int // field-value pairs
	next  int // offset after its lp-count
}

func (v *nodeView) entryAt(p int) streamEntry {
	e := streamEntry{p: p}
	el, q := lpNext(v.lp, p)
	e.flags = el.Int
	el, q = lpNext(v.lp, q)
	e.id.Ms = v.master.Ms + uint64(el.Int)
	el, q = lpNext(v.lp, q)
	e.id.Seq = v.master.Seq + uint64(el.Int)
	if e.flags&streamFlagSameFields != 0 {
		e.nf = len(v.mfields)
	} else {
		el, q = lpNext(v.lp, q)
		e.nf = int(el.Int)
	}
	e.vals = q
	per := 2
	if e.flags&streamFlagSameFields != 0 {
		per = 1
	}
	for j := 0; j < e.nf*per; j++ {
		_, q = lpNext(v.lp, q)
	}
	_, e.next = lpNext(v.lp, q) // lp-count
	return e
}

// entryBefore returns the offset of the entry that ends at p.
func (v *nodeView) entryBefore(p int) int {
	q := lpPrev(v.lp, p)
	el, _ := lpNext(v.lp, q)
	for j := int64(0); j < el.Int; j++ {
		q = lpPrev(v.lp, q)
	}
	return q
}

// end is the offset of the node's end byte.
func (v *nodeView) end() int { return len(v.lp) - 1 }

// appendFields appends e's fields and values, alternating, as text to buf
// and their ends to ends.
func (v *nodeView) appendFields(e *streamEntry, buf []byte, ends []int) ([]byte, []int) {
	q := e.vals
	var el lpElem
	for j := 0; j < e.nf; j++ {
		if e.flags&streamFlagSameFields != 0 {
			f, _ := lpNext(v.lp, v.mfields[j])
			buf = f.AppendText(buf)
		} else {
			el, q = lpNext(v.lp, q)
			buf = el.AppendText(buf)
		}
		ends = append(ends, len(buf))
		el, q = lpNext(v.lp, q)
		buf = el.AppendText(buf)
		ends = append(ends, len(buf))
	}
	return buf, ends
}

// nodeFor returns the index of the last node whose master ID is <= id (0
// when none).
func (s *Stream) nodeFor(id StreamID) int {
	lo, hi := 0, len(s.nodes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.nodes[m].master.Compare(id) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return max(lo-1, 0)
}

// Range calls fn with the live entries from start to end inclusive,
// ascending (or descending with rev), until fn returns false. fv holds the
// fields and values alternating; it and its slices are valid only during
// the call.
func (s *Stream) Range(start, end StreamID, rev bool, fn func(id StreamID, fv [][]byte) bool) {
	if end.Less(start) || len(s.nodes) == 0 {
		return
	}
	var mf [16]int
	var buf []byte
	var ends []int
	var fv [][]byte
	emit := func(v *nodeView, e *streamEntry) bool {
		buf, ends = v.appendFields(e, buf[:0], ends[:0])
		fv = fv[:0]
		from := 0
		for _, to := range ends {
			fv = append(fv, buf[from:to:to])
			from = to
		}
		return fn(e.id, fv)
	}
	if !rev {
		for i := s.nodeFor(start); i < len(s.nodes); i++ {
			v := s.view(i, mf[:0])
			for p := v.first; p < v.end(); {
				e := v.entryAt(p)
				p = e.next
				if e.id.Less(start) || e.flags&streamFlagDeleted != 0 {
					continue
				}
				if end.Less(e.id) || !emit(&v, &e) {
					return
				}
			}
		}
		return
	}
	for i := s.nodeFor(end); i >= 0; i-- {
		v := s.view(i, mf[:0])
		for p := v.end(); p > v.first; {
			e := v.entryAt(v.entryBefore(p))
			p = e.p
			if end.Less(e.id) || e.flags&streamFlagDeleted != 0 {
				continue
			}
			if e.id.Less(start) || !emit(&v, &e) {
				return
			}
		}
	}
}

// Has reports whether id is a live entry.
func (s *Stream) Has(id StreamID) bool {
	found := false
	s.Range(id, id, false, func(StreamID, [][]byte) bool { found = true; return false })
	return found
}
