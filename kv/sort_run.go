package kv

import (
	"bytes"
	"errors"
	"slices"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/store"
)

// sortItem is one element being sorted, with its weight.
type sortItem struct {
	elem   []byte
	score  float64 // numeric weight; 0 when BY names a missing key
	cmp    []byte  // ALPHA BY's weight, the value of the key BY names
	hasCmp bool    // false: BY named a missing key (sorts first)
}

// sortRun is the state of one SORT: its elements, copied out of the store
// so that BY and GET may look keys up (a View must not call the store).
type sortRun struct {
	h       *Handler
	cl      *client
	db      *store.Store
	q       sortQuery
	kind    store.Kind // the source's; a missing source is an empty list
	items   []sortItem
	scratch []byte // a pattern's key
	bad     bool   // a weight is not a number
}

func (h *Handler) sort(cl *client, cmd *command, args [][]byte, readOnly bool) {
	q, errText := parseSort(cl, cmd, args, readOnly)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	r := &sortRun{h: h, cl: cl, db: cl.db(), q: q}
	if err := r.load(args[1]); err != nil {
		cl.writeError(err.Error())
		return
	}
	start, end := r.window()
	if !r.q.dontSort {
		r.weigh()
		if r.bad {
			cl.writeError(errSortScores)
			return
		}
		r.order(start, end)
	}
	if q.store == nil {
		r.reply(start, end)
		return
	}
	r.storeResult(args, start, end)
}

// load copies the source's elements: all of them, or for a list or sorted
// set left in its own order (BY nosort), only the LIMIT window, in
// Redis's direction. A missing source is an empty list.
func (r *sortRun) load(key []byte) error {
	for range 8 { // the kind may change between Type and View
		kind := store.KindList
		switch r.db.Type(key) {
		case "set":
			kind = store.KindSet
		case "zset":
			kind = store.KindZSet
		case "list", "none":
		default:
			return store.ErrWrongType
		}
		if kind == store.KindSet && r.q.dontSort && (r.q.store != nil || r.cl.addr == scriptAddr) {
			// A set has no order of its own: stored or in a script, Redis
			// sorts it by its elements, so that replicas agree.
			r.q.dontSort, r.q.alpha, r.q.by = false, true, nil
		}
		err := r.db.View(key, kind, func(o store.Object) { r.copyOut(kind, o) })
		if errors.Is(err, store.ErrWrongType) {
			continue
		}
		r.kind = kind
		return err
	}
	return store.ErrWrongType
}

// copyOut copies o's elements into r.items, one backing array for all.
func (r *sortRun) copyOut(kind store.Kind, o store.Object) {
	if o == nil {
		return
	}
	n := int64(o.Len())
	start, end := sortLimits(r.q.limitStart, r.q.limitCount, n)
	var offs []int
	var buf []byte
	add := func(e []byte) {
		buf = append(buf, e...)
		offs = append(offs, len(buf))
	}
	switch c := o.(type) {
	case *store.List:
		switch {
		case !r.q.dontSort:
			c.Range(0, c.Len()-1, func(v []byte) bool { add(v); return true })
		case end < start:
		case r.q.desc:
			c.RangeBack(int(n-start-1), func(i int, v []byte) bool {
				add(v)
				return int64(len(offs)) < end-start+1
			})
		default:
			c.Range(int(start), int(end), func(v []byte) bool { add(v); return true })
		}
	case *store.Set:
		c.Range(func(m []byte) bool { add(m); return true })
	case *store.ZSet:
		switch {
		case !r.q.dontSort:
			c.Range(0, c.Len(), false, func(m []byte, _ float64) bool { add(m); return true })
		case end < start:
		case r.q.desc:
			c.Range(int(n-1-end), int(n-start), true, func(m []byte, _ float64) bool { add(m); return true })
		default:
			c.Range(int(start), int(end+1), false, func(m []byte, _ float64) bool { add(m); return true })
		}
	}
	r.items = make([]sortItem, len(offs))
	prev := 0
	for i, off := range offs {
		r.items[i].elem = buf[prev:off:off]
		prev = off
	}
}

// sortLimits is Redis's LIMIT arithmetic over n elements: the inclusive
// window [start, end], empty when end < start.
func sortLimits(limitStart, limitCount, n int64) (start, end int64) {
	start = min(max(limitStart, 0), n)
	count := min(max(limitCount, -1), n)
	end = n - 1
	if count >= 0 {
		end = start + count - 1
	}
	if start >= n {
		start, end = n-1, n-2
	}
	if end >= n {
		end = n - 1
	}
	return start, end
}

// window returns the inclusive range of r.items to output. A list or
// sorted set left in its own order was loaded as that range already.
func (r *sortRun) window() (start, end int64) {
	if r.q.dontSort && r.kind != store.KindSet {
		return 0, int64(len(r.items)) - 1
	}
	return sortLimits(r.q.limitStart, r.q.limitCount, int64(len(r.items)))
}

// weigh sets each item's weight: the element itself, or the value BY
// names for it (a missing or non-string key weighs 0, or sorts first under
// ALPHA). Under ALPHA the values are copied, once per distinct element.
func (r *sortRun) weigh() {
	by := r.q.by
	if by == nil {
		if r.q.alpha {
			return
		}
		for i := range r.items {
			it := &r.items[i]
			var ok bool
			if it.score, ok = sortScore(it.elem); !ok {
				r.bad = true
			}
		}
		return
	}
	var seen map[string][]byte // a list's repeated elements share one copy
	if r.q.alpha && r.kind == store.KindList {
		seen = make(map[string][]byte)
	}
	for i := range r.items {
		it := &r.items[i]
		if r.q.alpha {
			if v, ok := seen[string(it.elem)]; ok && seen != nil {
				it.cmp, it.hasCmp = v, v != nil
				continue
			}
			r.lookup(by, it.elem, func(v []byte) { it.cmp, it.hasCmp = bytes.Clone(v), true })
			if it.hasCmp && it.cmp == nil {
				it.cmp = []byte{}
			}
			if seen != nil {
				seen[string(it.elem)] = it.cmp
			}
			continue
		}
		r.lookup(by, it.elem, func(v []byte) {
			var ok bool
			if it.score, ok = sortScore(v); !ok {
				r.bad = true
			}
		})
	}
}

// lookup calls fn with the value pattern sp names for element e, if any:
// the element itself, a string key's value, or a hash key's field. fn runs
// under the store's lock: it must not keep v or call the store.
func (r *sortRun) lookup(sp *sortPattern, e []byte, fn func(v []byte)) {
	switch {
	case sp.self:
		fn(e)
		return
	case sp.noStar:
		return
	}
	r.scratch = sp.key(r.scratch[:0], e)
	if !sp.isField {
		r.db.ViewString(r.scratch, fn) // another kind names nothing
		return
	}
	r.db.View(r.scratch, store.KindHash, func(o store.Object) {
		if hs, _ := o.(*store.Hash); hs != nil {
			if v, ok := hs.Get(sp.field); ok {
				fn(v)
			}
		}
	})
}

// order sorts the items as Redis does, so that ties come in its order
// too: with glibc's qsort (a stable merge sort), or under BY with a LIMIT
// window, with its pqsort, which orders only enough for the window.
func (r *sortRun) order(start, end int64) {
	n := int64(len(r.items))
	if r.q.by != nil && (start != 0 || end != n-1) {
		partialQuicksort(r.items, 0, len(r.items), func(a, b *sortItem) int { return r.compare(*a, *b) }, int(start), int(end))
		return
	}
	slices.SortStableFunc(r.items, r.compare)
}

// compare is Redis's sortCompare: numeric weights, ties broken by the
// elements' bytes; or ALPHA, by the BY values (missing ones first) or the
// elements, compared as C's strcoll does in the C locale (up to a NUL),
// or byte by byte when the result is stored.
func (r *sortRun) compare(a, b sortItem) int {
	var c int
	switch {
	case !r.q.alpha:
		switch {
		case a.score > b.score:
			c = 1
		case a.score < b.score:
			c = -1
		default:
			c = bytes.Compare(a.elem, b.elem)
		}
	case r.q.by != nil:
		switch {
		case !a.hasCmp || !b.hasCmp:
			c = int(boolInt(a.hasCmp) - boolInt(b.hasCmp))
		case r.q.store != nil:
			c = bytes.Compare(a.cmp, b.cmp)
		default:
			c = bytes.Compare(beforeNUL(a.cmp), beforeNUL(b.cmp))
		}
	case r.q.store != nil:
		c = bytes.Compare(a.elem, b.elem)
	default:
		c = bytes.Compare(beforeNUL(a.elem), beforeNUL(b.elem))
	}
	if r.q.desc {
		return -c
	}
	return c
}

// beforeNUL is b as a C function sees it: up to its first NUL.
func beforeNUL(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// sortScore reads a weight as Redis's SORT does, with strtod on the C
// string: leading spaces skipped, an empty string 0, nothing after the
// number, and NaN or a value beyond double's range refused.
func sortScore(v []byte) (float64, bool) {
	v = beforeNUL(v)
	if len(v) == 0 {
		return 0, true
	}
	i := 0
	for i < len(v) && isCSpace(v[i]) {
		i++
	}
	return store.ParseFloat(v[i:], store.Double)
}

func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// outputLen is how many values SORT returns or stores for the window.
func (r *sortRun) outputLen(start, end int64) int64 {
	n := end - start + 1
	if len(r.q.gets) > 0 {
		n *= int64(len(r.q.gets))
	}
	return n
}

// reply writes the window: the elements, or for each the values its GET
// patterns name (nil for none).
func (r *sortRun) reply(start, end int64) {
	cl := r.cl
	cl.writeArray(int(r.outputLen(start, end)))
	for j := start; j <= end; j++ {
		e := r.items[j].elem
		if len(r.q.gets) == 0 {
			cl.writeBulk(e)
			continue
		}
		for g := range r.q.gets {
			found := false
			r.lookup(&r.q.gets[g], e, func(v []byte) { found = true; cl.writeBulk(v) })
			if !found {
				cl.writeNull()
			}
		}
	}
}

// sortRecordBatch is how many elements one logged RPUSH carries.
const sortRecordBatch = 512

// storeResult makes the destination a list of the window's elements or
// GET values (an empty string for none), or deletes it when there are
// none, and replies with the count.
func (r *sortRun) storeResult(args [][]byte, start, end int64) {
	cl, dst := r.cl, r.q.store
	list := store.NewList()
	var need int64
	rec := cl.effectScratch()
	logged := cl.logsEffects()
	if logged {
		rec = aof.AppendCommand(rec, []byte("DEL"), dst)
	}
	batch := 0
	var pending []byte // the next RPUSH's arguments
	push := func(v []byte) {
		list.PushBack(v)
		need += int64(len(v)) + 16
		if !logged {
			return
		}
		pending = aof.AppendArg(pending, v)
		if batch++; batch == sortRecordBatch {
			rec = appendRPush(rec, dst, batch, pending)
			batch, pending = 0, pending[:0]
		}
	}
	for j := start; j <= end; j++ {
		e := r.items[j].elem
		if len(r.q.gets) == 0 {
			push(e)
			continue
		}
		for g := range r.q.gets {
			found := false
			r.lookup(&r.q.gets[g], e, func(v []byte) { found = true; push(v) })
			if !found {
				push(nil)
			}
		}
	}
	if batch > 0 {
		rec = appendRPush(rec, dst, batch, pending)
	}
	stored := list.Len()
	existed := false
	keys := [1][]byte{dst}
	err := r.db.Tx(keys[:], need, func(t *store.Tx) error {
		existed = t.Kind(0) != store.KindNone
		if stored == 0 {
			return t.Put(0, nil)
		}
		return t.Put(0, list)
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(stored))
	switch {
	case stored > 0:
		r.h.signalReady(cl, dst)
		cl.notifyNew(!existed, dst)
		cl.notify(evList, "sortstore", dst)
	case existed:
		cl.notify(evGeneric, "del", dst)
	default:
		return // nothing changed, nothing logged
	}
	cl.setEffect(rec)
}

// appendRPush appends RPUSH key and the n arguments already encoded in
// args.
func appendRPush(dst, key []byte, n int, args []byte) []byte {
	dst = aof.AppendHeader(dst, n+2)
	dst = aof.AppendArg(dst, []byte("RPUSH"))
	dst = aof.AppendArg(dst, key)
	return append(dst, args...)
}
