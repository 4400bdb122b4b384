package kv

import (
	"strconv"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// XRANGE, XREVRANGE, XLEN, the reply of stream entries, and the AOF
// rewrite of a stream.

// writeStreamEntry writes one entry: [id, [field, value, ...]].
func writeStreamEntry(cl *client, id store.StreamID, fv [][]byte) {
	cl.writeArray(2)
	var buf [48]byte
	cl.writeBulk(id.AppendTo(buf[:0]))
	cl.writeArray(len(fv))
	for _, b := range fv {
		cl.writeBulk(b)
	}
}

// writeStreamRange writes the entries of s from start to end (count 0: all)
// as an array and returns how many.
func writeStreamRange(cl *client, s *store.Stream, start, end store.StreamID, rev bool, count int64) int64 {
	hdr := len(cl.out)
	cl.out = append(cl.out, "*0000000000\r\n"...) // patched below
	var n int64
	s.Range(start, end, rev, func(id store.StreamID, fv [][]byte) bool {
		writeStreamEntry(cl, id, fv)
		n++
		return count == 0 || n < count
	})
	patchArrayHeader(cl, hdr, n)
	return n
}

// patchArrayHeader replaces the placeholder header written at hdr with
// the array header of n elements.
func patchArrayHeader(cl *client, hdr int, n int64) {
	var tmp [24]byte
	h := strconv.AppendInt(append(tmp[:0], '*'), n, 10)
	h = append(h, '\r', '\n')
	const placeholder = len("*0000000000\r\n")
	body := len(cl.out) - hdr - placeholder
	if len(h) == placeholder {
		copy(cl.out[hdr:], h)
		return
	}
	copy(cl.out[hdr+len(h):], cl.out[hdr+placeholder:])
	cl.out = cl.out[:hdr+len(h)+body]
	copy(cl.out[hdr:], h)
}

func cmdXRange(_ *Handler, cl *client, args [][]byte)    { xrange(cl, args, false) }
func cmdXRevRange(_ *Handler, cl *client, args [][]byte) { xrange(cl, args, true) }

// xrange is XRANGE key start end [COUNT n] and XREVRANGE key end start
// [COUNT n].
func xrange(cl *client, args [][]byte, rev bool) {
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, startEx, ok := parseIntervalID(startArg, 0)
	if !ok {
		cl.writeError(errInvalidStreamID)
		return
	}
	if startEx {
		if start, ok = start.Incr(); !ok {
			cl.writeError("ERR invalid start ID for the interval")
			return
		}
	}
	end, endEx, ok := parseIntervalID(endArg, 1<<64-1)
	if !ok {
		cl.writeError(errInvalidStreamID)
		return
	}
	if endEx {
		if end, ok = end.Decr(); !ok {
			cl.writeError("ERR invalid end ID for the interval")
			return
		}
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if ascii.EqualFold(args[j], "count") && j+1 < len(args) {
			n, ok := ascii.ParseInt(args[j+1])
			if !ok {
				cl.writeError(errNotInteger)
				return
			}
			count = max(n, 0)
			j++
			continue
		}
		cl.writeError(errSyntax)
		return
	}
	viewCollection(cl, args[1], store.KindStream, func(s *store.Stream) {
		switch {
		case s == nil:
			cl.writeArray(0)
		case count == 0:
			cl.out = append(cl.out, nullArrayReply(int(cl.proto))...)
		default:
			writeStreamRange(cl, s, start, end, rev, max(count, 0))
		}
	})
}

// parseIntervalID reads a range bound: an ID, or "(" and a strict ID for
// an exclusive bound.
func parseIntervalID(b []byte, missingSeq uint64) (id store.StreamID, exclusive, ok bool) {
	if len(b) > 1 && b[0] == '(' {
		id, _, ok = streamIDParse{missingSeq: missingSeq, strict: true}.parse(b[1:])
		return id, true, ok
	}
	id, _, ok = streamIDParse{missingSeq: missingSeq}.parse(b)
	return id, false, ok
}

func cmdXLen(_ *Handler, cl *client, args [][]byte) {
	var n uint64
	if viewCollection(cl, args[1], store.KindStream, func(s *store.Stream) {
		if s != nil {
			n = s.Entries()
		}
	}) {
		cl.writeInt(int64(n))
	}
}

// appendRewriteStream appends the commands that rebuild stream o, as
// Redis's rewriteStreamObject: an XADD per entry (an empty stream: XADD
// MAXLEN 0 of a dummy entry), then XSETID with the last ID, the entries
// added and the greatest deleted ID, then the groups.
func appendRewriteStream(dst, key []byte, o store.Object) []byte {
	s := o.(*store.Stream)
	var idb [48]byte
	if s.Entries() > 0 {
		s.Range(store.StreamID{}, store.MaxStreamID, false, func(id store.StreamID, fv [][]byte) bool {
			dst = aof.AppendHeader(dst, 3+len(fv))
			dst = aof.AppendArg(dst, []byte("XADD"))
			dst = aof.AppendArg(dst, key)
			dst = aof.AppendArg(dst, id.AppendTo(idb[:0]))
			for _, b := range fv {
				dst = aof.AppendArg(dst, b)
			}
			return true
		})
	} else {
		dst = aof.AppendCommand(dst, []byte("XADD"), key, []byte("MAXLEN"), []byte("0"), []byte("0-1"), []byte("x"), []byte("y"))
	}
	dst = aof.AppendCommand(dst, []byte("XSETID"), key, s.LastID().AppendTo(nil),
		[]byte("ENTRIESADDED"), strconv.AppendUint(nil, s.EntriesAdded(), 10),
		[]byte("MAXDELETEDID"), s.MaxDeletedID().AppendTo(nil))
	return appendRewriteGroups(dst, key, s)
}

// appendRewriteGroups appends the commands that rebuild s's consumer
// groups, as Redis's rewriteStreamObject: XGROUP CREATE with the last ID
// and entries read, then per consumer (by name) an XCLAIM ... JUSTID FORCE
// per pending entry, or XGROUP CREATECONSUMER if it has none.
func appendRewriteGroups(dst, key []byte, s *store.Stream) []byte {
	var idb, nb, cb [48]byte
	for _, g := range s.Groups() {
		dst = aof.AppendCommand(dst, []byte("XGROUP"), []byte("CREATE"), key, g.Name(), g.LastID.AppendTo(idb[:0]),
			[]byte("ENTRIESREAD"), strconv.AppendInt(nb[:0], g.EntriesRead, 10))
		pel := g.Pending()
		for _, c := range g.Consumers() {
			if c.Pending == 0 {
				dst = aof.AppendCommand(dst, []byte("XGROUP"), []byte("CREATECONSUMER"), key, g.Name(), c.Name)
				continue
			}
			for i := range pel {
				p := &pel[i]
				if p.Consumer != int32(c.Index) {
					continue
				}
				dst = aof.AppendCommand(dst, []byte("XCLAIM"), key, g.Name(), c.Name, []byte("0"), p.ID.AppendTo(idb[:0]),
					[]byte("TIME"), strconv.AppendInt(nb[:0], p.DeliveryTime, 10),
					[]byte("RETRYCOUNT"), strconv.AppendUint(cb[:0], p.DeliveryCount, 10), []byte("JUSTID"), []byte("FORCE"))
			}
		}
	}
	return dst
}
