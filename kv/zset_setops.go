package kv

import (
	"bytes"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// ZUNION, ZINTER, ZDIFF, their *STORE forms and ZINTERCARD, as Redis's
// zunionInterDiffGenericCommand: the inputs sorted by size (stably, so the
// order in which equal-sized inputs' scores are summed is Redis's too),
// weights applied, NaN products and sums turned into 0.

type zsetOp uint8

const (
	zopUnion zsetOp = iota
	zopInter
	zopDiff
)

const (
	aggSum = iota
	aggMin
	aggMax
)

// setMembersOfSet, when the set family provides it, lets a plain set be an
// input of ZUNION and its relatives as in Redis (each member scoring 1):
// it calls fn with each member of the set o. Until then a set input
// answers WRONGTYPE.
var setMembersOfSet func(o store.Object, fn func(member []byte))

func cmdZUnion(h *Handler, cl *client, args [][]byte)      { h.zsetOp(cl, args, false, zopUnion, false) }
func cmdZInter(h *Handler, cl *client, args [][]byte)      { h.zsetOp(cl, args, false, zopInter, false) }
func cmdZDiff(h *Handler, cl *client, args [][]byte)       { h.zsetOp(cl, args, false, zopDiff, false) }
func cmdZInterCard(h *Handler, cl *client, args [][]byte)  { h.zsetOp(cl, args, false, zopInter, true) }
func cmdZUnionStore(h *Handler, cl *client, args [][]byte) { h.zsetOp(cl, args, true, zopUnion, false) }
func cmdZInterStore(h *Handler, cl *client, args [][]byte) { h.zsetOp(cl, args, true, zopInter, false) }
func cmdZDiffStore(h *Handler, cl *client, args [][]byte)  { h.zsetOp(cl, args, true, zopDiff, false) }

// zsetOpArgs is a parsed ZUNION-like command.
type zsetOpArgs struct {
	keys       [][]byte
	weights    []float64
	aggregate  int
	withScores bool
	limit      int64
}

// parseZSetOp parses from numkeys at args[at]. Errors in the options
// (errLate) come after the keys' types are checked, as in Redis.
func parseZSetOp(args [][]byte, at int, toStore bool, op zsetOp, cardOnly bool) (a zsetOpArgs, errText, errLate string) {
	setnum, ok := parseLong(args[at])
	if !ok {
		return a, errNotInteger, ""
	}
	if setnum < 1 {
		return a, "ERR at least 1 input key is needed for '" + strings.ToLower(string(args[0])) + "' command", ""
	}
	if setnum > int64(len(args)-at-1) {
		return a, errSyntax, ""
	}
	j := at + 1 + int(setnum)
	a.keys = args[at+1 : j]
	a.weights = make([]float64, setnum)
	for i := range a.weights {
		a.weights[i] = 1
	}
	for j < len(args) {
		remaining := len(args) - j
		switch opt := args[j]; {
		case op != zopDiff && !cardOnly && remaining >= int(setnum)+1 && ascii.EqualFold(opt, "weights"):
			j++
			for i := range a.weights {
				w, ok := parseScore(args[j])
				if !ok {
					return a, "", errWeightFloat
				}
				a.weights[i] = w
				j++
			}
		case op != zopDiff && !cardOnly && remaining >= 2 && ascii.EqualFold(opt, "aggregate"):
			switch agg := args[j+1]; {
			case ascii.EqualFold(agg, "sum"):
				a.aggregate = aggSum
			case ascii.EqualFold(agg, "min"):
				a.aggregate = aggMin
			case ascii.EqualFold(agg, "max"):
				a.aggregate = aggMax
			default:
				return a, "", errSyntax
			}
			j += 2
		case remaining >= 1 && !toStore && !cardOnly && ascii.EqualFold(opt, "withscores"):
			a.withScores = true
			j++
		case cardOnly && remaining >= 2 && ascii.EqualFold(opt, "limit"):
			l, ok := parseLong(args[j+1])
			if !ok || l < 0 {
				return a, "", "ERR LIMIT can't be negative"
			}
			a.limit = l
			j += 2
		default:
			return a, "", errSyntax
		}
	}
	return a, "", ""
}

// zsrc is one input: a sorted set (nil when missing) and its weight.
type zsrc struct {
	z      *store.ZSet
	weight float64
}

func (s *zsrc) len() int {
	if s.z == nil {
		return 0
	}
	return s.z.Len()
}

type zpair struct {
	m []byte
	s float64
}

func aggregate(target *float64, v float64, agg int) {
	switch agg {
	case aggSum:
		*target += v
		if math.IsNaN(*target) { // inf + -inf
			*target = 0
		}
	case aggMin:
		if v < *target {
			*target = v
		}
	case aggMax:
		if v > *target {
			*target = v
		}
	}
}

func (h *Handler) zsetOp(cl *client, args [][]byte, toStore bool, op zsetOp, cardOnly bool) {
	at := 1
	if toStore {
		at = 2
	}
	a, errText, errLate := parseZSetOp(args, at, toStore, op, cardOnly)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	keys := a.keys
	if toStore {
		keys = append([][]byte{args[1]}, a.keys...)
	}
	first := len(keys) - len(a.keys) // a.keys[i] is keys[first+i]
	need := int64(0)
	if toStore {
		need = 1
	}
	var stored int
	existed := false
	err := cl.db().Tx(keys, need, func(t *store.Tx) error {
		srcs := make([]zsrc, len(a.keys))
		for i := range a.keys {
			srcs[i].weight = a.weights[i]
			switch t.Kind(first + i) {
			case store.KindNone:
			case store.KindSet:
				if setMembersOfSet == nil {
					return store.ErrWrongType
				}
			case store.KindZSet:
			default:
				return store.ErrWrongType
			}
		}
		if errLate != "" {
			cl.writeError(errLate)
			return nil
		}
		for i := range a.keys {
			switch t.Kind(first + i) {
			case store.KindZSet:
				o, _ := t.Object(first+i, store.KindZSet)
				srcs[i].z = o.(*store.ZSet)
			case store.KindSet:
				o, _ := t.Object(first+i, store.KindSet)
				z := store.NewZSet(o.Len(), 0)
				setMembersOfSet(o, func(m []byte) { z.Set(m, 1) })
				srcs[i].z = z
			}
		}
		if op != zopDiff {
			sort.SliceStable(srcs, func(i, j int) bool { return srcs[i].len() < srcs[j].len() })
		}
		var res []zpair
		switch op {
		case zopUnion:
			res = zunion(srcs, a.aggregate)
		case zopInter:
			var card int64
			res, card = zinter(srcs, a.aggregate, cardOnly, a.limit)
			if cardOnly {
				cl.writeInt(card)
				return nil
			}
		default:
			res = zdiff(srcs)
		}
		slices.SortFunc(res, func(x, y zpair) int {
			switch {
			case x.s < y.s:
				return -1
			case x.s > y.s:
				return 1
			}
			return bytes.Compare(x.m, y.m)
		})
		if !toStore {
			writeZPairs(cl, res, a.withScores)
			return nil
		}
		stored, existed = len(res), t.Kind(0) != store.KindNone
		if stored == 0 {
			return t.Put(0, nil)
		}
		maxLen := 0
		for _, p := range res {
			maxLen = max(maxLen, len(p.m))
		}
		dst := store.NewZSet(len(res), maxLen)
		for _, p := range res {
			dst.Set(p.m, p.s)
		}
		return t.Put(0, dst)
	})
	if err == nil && toStore && stored > 0 {
		h.signalReady(cl, args[1]) // a waiting BZPOPMIN (zset_block.go)
	}
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case toStore && errLate == "":
		cl.writeInt(int64(stored))
		cl.notifyStored(evZSet, [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}[op], args[1], stored > 0, existed)
	}
}

func writeZPairs(cl *client, res []zpair, withScores bool) {
	cl.writePairArray(len(res), withScores)
	for _, p := range res {
		cl.writeScored(p.m, p.s, withScores)
	}
}

func zunion(srcs []zsrc, agg int) []zpair {
	var res []zpair
	index := make(map[string]int)
	for _, src := range srcs {
		if src.len() == 0 {
			continue
		}
		src.z.Range(0, src.len(), false, func(m []byte, s float64) bool {
			score := src.weight * s
			if math.IsNaN(score) {
				score = 0
			}
			if i, ok := index[string(m)]; ok {
				aggregate(&res[i].s, score, agg)
				return true
			}
			index[string(m)] = len(res)
			res = append(res, zpair{m, score})
			return true
		})
	}
	return res
}

func zinter(srcs []zsrc, agg int, cardOnly bool, limit int64) ([]zpair, int64) {
	var res []zpair
	var card int64
	if srcs[0].len() == 0 {
		return nil, 0
	}
	first := srcs[0]
	first.z.Range(0, first.len(), false, func(m []byte, s float64) bool {
		score := first.weight * s
		if math.IsNaN(score) {
			score = 0
		}
		for _, other := range srcs[1:] {
			v, ok := other.z.Score(m)
			if !ok {
				return true
			}
			aggregate(&score, v*other.weight, agg)
		}
		if cardOnly {
			card++
			return limit == 0 || card < limit
		}
		res = append(res, zpair{m, score})
		return true
	})
	return res, card
}

func zdiff(srcs []zsrc) []zpair {
	var res []zpair
	first := srcs[0]
	if first.len() == 0 {
		return nil
	}
	first.z.Range(0, first.len(), false, func(m []byte, s float64) bool {
		for _, other := range srcs[1:] {
			if other.z != nil {
				if _, ok := other.z.Score(m); ok {
					return true
				}
			}
		}
		res = append(res, zpair{m, s})
		return true
	})
	return res
}
