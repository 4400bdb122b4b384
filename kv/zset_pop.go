package kv

import (
	"math"
	"math/rand/v2"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// ZPOPMIN, ZPOPMAX, ZMPOP, ZRANDMEMBER and ZSCAN.

// zpopShape is the shape of a pop's reply.
type zpopShape struct {
	nested  bool // each element as a [member, score] array
	withKey bool // the key first: BZPOPMIN's flat [key, member, score], ZMPOP's [key, [[member, score], ...]]
}

// zpop pops up to count elements (count -1: one, as without COUNT), the
// lowest or with max the highest, from the first of keys that exists, and
// writes them in shape. found is false when no key exists: nothing was
// written, and the caller answers empty (or, for the blocking commands,
// waits). A first existing key of another type answers WRONGTYPE. The
// blocking BZPOPMIN/BZPOPMAX/BZMPOP are meant to call it as they are.
func (h *Handler) zpop(cl *client, keys [][]byte, max bool, count int64, shape zpopShape) (found bool) {
	var popped []byte
	emptied := false
	if len(keys) == 1 {
		err := cl.db().Update(keys[0], store.KindZSet, 0, func(o store.Object) store.Object {
			if o != nil {
				found, popped = true, keys[0]
				emptied = writeZPop(cl, keys[0], o.(*store.ZSet), max, count, shape)
			}
			return o
		})
		if err != nil {
			cl.writeError(err.Error())
			return true
		}
	} else {
		err := cl.db().Tx(keys, 0, func(t *store.Tx) error {
			for i := range keys {
				o, err := t.Object(i, store.KindZSet)
				if err != nil {
					return err
				}
				if o != nil {
					found, popped = true, keys[i]
					emptied = writeZPop(cl, keys[i], o.(*store.ZSet), max, count, shape)
					return nil
				}
			}
			return nil
		})
		if err != nil {
			cl.writeError(err.Error())
			return true
		}
	}
	if found && count != 0 {
		cl.notifyRemoved(evZSet, endEvent(max, "zpopmax", "zpopmin"), popped, emptied)
	}
	return found
}

// writeZPop pops from z (whose key is key) and writes the reply; it
// reports whether z is left empty.
func writeZPop(cl *client, key []byte, z *store.ZSet, max bool, count int64, shape zpopShape) (emptied bool) {
	if count == 0 {
		cl.writeArray(0)
		return false
	}
	if count < 0 {
		count = 1
	}
	n := int(min(count, int64(z.Len())))
	switch {
	case !shape.nested && !shape.withKey:
		cl.writeArray(2 * n)
	case shape.nested && !shape.withKey:
		cl.writeArray(n)
	case !shape.nested:
		cl.writeArray(2*n + 1)
		cl.writeBulk(key)
	default:
		cl.writeArray(2)
		cl.writeBulk(key)
		cl.writeArray(n)
	}
	lo, hi := 0, n
	if max {
		lo, hi = z.Len()-n, z.Len()
	}
	z.Range(lo, hi, max, func(m []byte, s float64) bool {
		if shape.nested {
			cl.writeArray(2)
		}
		cl.writeBulk(m)
		cl.writeScore(s)
		return true
	})
	z.RemoveRange(lo, hi)
	return z.Len() == 0
}

func cmdZPopMin(h *Handler, cl *client, args [][]byte) { h.zpopMinMax(cl, args, false) }
func cmdZPopMax(h *Handler, cl *client, args [][]byte) { h.zpopMinMax(cl, args, true) }

func (h *Handler) zpopMinMax(cl *client, args [][]byte, max bool) {
	count, ok := parsePopCount(cl, args)
	if !ok {
		return
	}
	// RESP3 nests the pairs only when a count was given.
	shape := zpopShape{nested: cl.proto >= 3 && count != -1}
	if !h.zpop(cl, args[1:2], max, count, shape) {
		cl.writeArray(0)
	}
}

// parseZMPop parses ZMPOP's (and BZMPOP's) arguments from numkeys at
// args[at]: the keys, MIN or MAX, and COUNT.
func parseZMPop(args [][]byte, at int) (keys [][]byte, max bool, count int64, errText string) {
	numkeys, ok := parseLong(args[at])
	if !ok || numkeys < 1 {
		return nil, false, 0, "ERR numkeys should be greater than 0"
	}
	if numkeys >= int64(len(args)-at-1) {
		return nil, false, 0, errSyntax
	}
	where := at + int(numkeys) + 1
	switch {
	case ascii.EqualFold(args[where], "min"):
	case ascii.EqualFold(args[where], "max"):
		max = true
	default:
		return nil, false, 0, errSyntax
	}
	count = -1
	for j := where + 1; j < len(args); j++ {
		if count == -1 && ascii.EqualFold(args[j], "count") && j+1 < len(args) {
			j++
			if count, ok = parseLong(args[j]); !ok || count < 1 {
				return nil, false, 0, "ERR count should be greater than 0"
			}
			continue
		}
		return nil, false, 0, errSyntax
	}
	return args[at+1 : where], max, max64(count, 1), ""
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func cmdZMPop(h *Handler, cl *client, args [][]byte) {
	keys, max, count, errText := parseZMPop(args, 1)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	if !h.zpop(cl, keys, max, count, zpopShape{nested: true, withKey: true}) {
		cl.writeNullArray()
	}
}

func cmdZRandMember(h *Handler, cl *client, args [][]byte) {
	if len(args) == 2 {
		h.viewZSet(cl, args[1], func(z *store.ZSet) {
			if z == nil {
				cl.writeNull()
				return
			}
			m, _ := z.At(rand.IntN(z.Len()))
			cl.writeBulk(m)
		})
		return
	}
	l, errText := parseRandCount(args[2])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	withScores := false
	if len(args) > 4 || len(args) == 4 && !ascii.EqualFold(args[3], "withscores") {
		cl.writeError(errSyntax)
		return
	}
	if len(args) == 4 {
		withScores = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			cl.writeError("ERR value is out of range")
			return
		}
	}
	if l < -randMaxCount {
		cl.writeError("ERR value is out of range")
		return
	}
	h.viewZSet(cl, args[1], func(z *store.ZSet) {
		if z == nil || l == 0 {
			cl.writeArray(0)
			return
		}
		writeZRandom(cl, z, l, withScores)
	})
}

// writeZRandom writes ZRANDMEMBER's reply for a count l != 0: with
// repetitions when l < 0 (or l == 1), the whole set in order when l covers
// it, else l distinct members.
func writeZRandom(cl *client, z *store.ZSet, l int64, withScores bool) {
	n := z.Len()
	one := func(rank int) {
		m, s := z.At(rank)
		cl.writeScored(m, s, withScores)
	}
	header := func(k int) { cl.writePairArray(k, withScores) }
	if l < 0 || l == 1 {
		k := int(l)
		if l < 0 {
			k = int(-l)
		}
		header(k)
		for i := 0; i < k; i++ {
			one(rand.IntN(n))
		}
		return
	}
	if l >= int64(n) { // the whole set, from the highest as Redis's iterator goes
		writeZRange(cl, z, 0, n, true, withScores)
		return
	}
	// l distinct ranks: a partial Fisher-Yates shuffle over a sparse map
	// of swapped positions, O(l) whatever the set's size.
	k := int(l)
	header(k)
	swapped := make(map[int]int, k)
	at := func(i int) int {
		if v, ok := swapped[i]; ok {
			return v
		}
		return i
	}
	for i := 0; i < k; i++ {
		j := i + rand.IntN(n-i)
		vi, vj := at(i), at(j)
		swapped[i], swapped[j] = vj, vi
		one(vj)
	}
}
