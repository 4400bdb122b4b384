package store

import "slices"

// Writes to a stream's nodes, as Redis 7.0's streamAppendItem,
// streamIteratorRemoveEntry and streamTrim make them, so that node
// boundaries, and what an approximate trim removes, are Redis's.

// StreamMaxElementsLen is Redis's bound on the total length of an entry's
// fields and values (STREAM_LISTPACK_MAX_SIZE).
const StreamMaxElementsLen = streamLPMax

// nodeLimits returns the byte and entry bounds of a node in force.
func nodeLimits() (maxBytes, maxEntries int64) {
	l := limits.Load()
	maxBytes = l.StreamNodeMaxBytes
	if maxBytes == 0 || maxBytes > streamLPMax {
		maxBytes = streamLPMax
	}
	return maxBytes, l.StreamNodeMaxEntries
}

// setLP replaces node i's listpack, keeping the size count.
func (s *Stream) setLP(i int, lp []byte) {
	s.size += int64(cap(lp) - cap(s.nodes[i].lp))
	s.nodes[i].lp = lp
}

// setCounts rewrites node i's live and deleted counts.
func (s *Stream) setCounts(i int, count, deleted int64) {
	lp := s.nodes[i].lp
	_, p := lpNext(lp, lpHdr)
	_, q := lpNext(lp, p)
	var tmp [24]byte
	b := lpAppendInt(tmp[:0], count)
	b = lpAppendInt(b, deleted)
	if len(b) == q-lpHdr {
		copy(lp[lpHdr:], b)
		return
	}
	n := make([]byte, 0, len(lp)-(q-lpHdr)+len(b))
	n = append(n, lp[:lpHdr]...)
	n = append(n, b...)
	n = append(n, lp[q:]...)
	lpSetHeader(n, lpCount(lp))
	s.setLP(i, n)
}

// Add appends an entry with ID id, which the caller checked is greater than
// LastID, and fields and values fv (alternating; their total length at
// most StreamMaxElementsLen).
func (s *Stream) Add(id StreamID, fv [][]byte) {
	nf := len(fv) / 2
	total := 0
	for _, b := range fv {
		total += len(b)
	}
	maxBytes, maxEntries := nodeLimits()
	i := len(s.nodes) - 1
	fresh := i < 0
	var v nodeView
	var mf [16]int
	if !fresh {
		v = s.view(i, mf[:0])
		if int64(len(v.lp))+int64(total) >= maxBytes ||
			maxEntries > 0 && v.count+v.deleted >= maxEntries {
			fresh = true
			if lp := s.nodes[i].lp; cap(lp) > len(lp) {
				s.setLP(i, slices.Clip(append([]byte(nil), lp...)))
			}
		}
	}
	var flags int64
	var lp []byte
	elems := 0
	if fresh {
		need := lpHdr + 16 + 2*total + 16*len(fv)
		lp = make([]byte, lpHdr, min(max(need, int(min(maxBytes, 4096))), need*2))
		lp = lpAppendInt(lp, 1)
		lp = lpAppendInt(lp, 0)
		lp = lpAppendInt(lp, int64(nf))
		for j := 0; j < nf; j++ {
			lp = lpAppendStr(lp, fv[2*j])
		}
		lp = lpAppendInt(lp, 0)
		elems = 4 + nf
		flags = streamFlagSameFields
		s.nodes = append(s.nodes, streamNode{master: id})
		i = len(s.nodes) - 1
		s.size += streamNodeSize // capacity growth is approximated by one node
		v = nodeView{master: id}
	} else {
		s.setCounts(i, v.count+1, v.deleted)
		v = s.view(i, mf[:0])
		lp = s.nodes[i].lp
		elems = lpCount(lp)
		if nf == len(v.mfields) {
			same := true
			for j, p := range v.mfields {
				if f, _ := lpNext(lp, p); !f.Equal(fv[2*j]) {
					same = false
					break
				}
			}
			if same {
				flags = streamFlagSameFields
			}
		}
	}
	before := cap(lp)
	if !fresh {
		lp = lp[:len(lp)-1] // the end byte
	}
	lp = lpAppendInt(lp, flags)
	lp = lpAppendInt(lp, int64(id.Ms-v.master.Ms))
	lp = lpAppendInt(lp, int64(id.Seq-v.master.Seq))
	count := int64(nf) + 3
	added := 3
	if flags&streamFlagSameFields == 0 {
		lp = lpAppendInt(lp, int64(nf))
		count += int64(nf) + 1
		added++
	}
	for j := 0; j < nf; j++ {
		if flags&streamFlagSameFields == 0 {
			lp = lpAppendStr(lp, fv[2*j])
			added++
		}
		lp = lpAppendStr(lp, fv[2*j+1])
		added++
	}
	lp = lpAppendInt(lp, count)
	added++
	lp = append(lp, lpEndByte)
	if elems != lpUnknown {
		lpSetHeader(lp, elems+added)
	} else {
		lpSetHeader(lp, lpUnknown)
	}
	if fresh {
		before = 0
	}
	s.size += int64(cap(lp) - before)
	s.nodes[i].lp = lp
	s.length++
	s.entriesAdded++
	s.last = id
	if s.length == 1 {
		s.first = id
	}
}
