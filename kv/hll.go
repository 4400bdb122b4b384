package kv

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
)

// HyperLogLog commands over string values in Redis's representation
// (hll_repr.go). PFADD, PFMERGE and PFDEBUG are logged as they are (PFADD
// preceded by a DEL when its key was missing or expired, PFMERGE by a DEL
// of each of its keys that was), so a replay rebuilds the same bytes.
// PFCOUNT stores the cardinality it computed in the header, as Redis does,
// and is then logged as Redis propagates it (PFCOUNT key), so that a
// replica or a replay holds the same bytes.
var _ = registerFamily(family{commands: []*command{
	{
		name: "pfadd", arity: -2, fn: cmdPFAdd, log: logRMW,
		flags: "write denyoom fast", acl: "@write @hyperloglog @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds elements to a HyperLogLog, creating it if needed; 1 if its estimate may have changed.", "2.8.9", "hyperloglog", "O(1) to add every element."},
	},
	{
		name: "pfcount", arity: -2, fn: cmdPFCount, mayLog: true,
		flags: "readonly", acl: "@read @hyperloglog @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{
			notes: "RW because it may change the internal representation of the key, and propagate to replicas",
			flags: "RW access", index: 1, lastKey: -1, keyStep: 1,
		}},
		doc: commandDoc{"Estimates the number of distinct elements added to a HyperLogLog, or to the union of several.", "2.8.9", "hyperloglog",
			"O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys."},
	},
	{
		name: "pfmerge", arity: -2, fn: cmdPFMerge, log: logDelAbsent,
		flags: "write denyoom", acl: "@write @hyperloglog @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{
			{flags: "RW access insert", index: 1, keyStep: 1},
			{flags: "RO access", index: 2, lastKey: -1, keyStep: 1},
		},
		doc: commandDoc{"Merges HyperLogLogs into the first key's, creating it if needed.", "2.8.9", "hyperloglog", "O(N) to merge N HyperLogLogs, but with high constant times."},
	},
	{
		name: "pfdebug", arity: 3, fn: cmdPFDebug, log: logAsIs,
		flags: "write denyoom admin", acl: "@write @hyperloglog @admin @slow @dangerous",
		firstKey: 2, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW access", index: 2, keyStep: 1}},
		doc: commandDoc{"Shows or changes a HyperLogLog's internals: GETREG, DECODE, ENCODING, TODENSE.", "2.8.9", "hyperloglog", "N/A"},
	},
	{
		name: "pfselftest", arity: 1, fn: cmdPFSelfTest,
		flags: "admin", acl: "@hyperloglog @admin @slow @dangerous",
		doc: commandDoc{"Checks the HyperLogLog implementation: register access, sparse and dense agreement, error bounds.", "2.8.9", "hyperloglog", "N/A"},
	},
}})

// hllSparseMaxBytes is the hll-sparse-max-bytes setting: the size past
// which a sparse HyperLogLog turns dense.
func (h *Handler) hllSparseMaxBytes() int64 { return h.params.Int("hll-sparse-max-bytes") }

func cmdPFAdd(h *Handler, cl *client, args [][]byte) {
	var updated, created bool
	var errText string
	err := cl.db().EditString(args[1], hllDenseSize, func(v []byte, found bool) []byte {
		if !found {
			v, created, updated = newHLL(), true, true
		} else if !isHLL(v) {
			errText = errNotHLL
			return nil
		} else if v[4] == hllDense {
			for _, ele := range args[2:] {
				_, r := hllAdd(v, ele, 0)
				updated = updated || r == 1
			}
			if updated {
				hllInvalidateCache(v)
			}
			return nil // changed in place
		} else if !sparseRaises(v, args[2:]) {
			return nil // nothing to add: no copy
		} else {
			v = append(make([]byte, 0, len(v)+8), v...)
		}
		// A sparse value grows or turns dense: change a copy and store it.
		var changed bool
		v, changed, errText = hllAddSparse(v, args[2:], h.hllSparseMaxBytes())
		updated = updated || changed
		if updated && errText == "" {
			hllInvalidateCache(v)
		}
		return v
	})
	if cl.writeFailure(err, errText) {
		return
	}
	cl.writeInt(boolInt(updated))
	if updated {
		cl.notifyNew(created, args[1])
		cl.notify(evString, "pfadd", args[1])
	}
}

// hllAddSparse adds elements to sparse HLL v, which may grow or turn dense
// on the way. Corrupt opcodes stop it with Redis's error, what was added
// before them kept, as in Redis.
func hllAddSparse(v []byte, elements [][]byte, maxBytes int64) ([]byte, bool, string) {
	updated := false
	for _, ele := range elements {
		var r int
		v, r = hllAdd(v, ele, maxBytes)
		switch r {
		case 1:
			updated = true
		case -1:
			return v, updated, errCorruptHLL
		}
	}
	return v, updated, ""
}

func cmdPFCount(h *Handler, cl *client, args [][]byte) {
	if len(args) > 2 {
		h.pfCountUnion(cl, args[1:])
		return
	}
	var card uint64
	var cached, updated bool
	var errText string
	found, err := cl.db().ViewString(args[1], func(v []byte) {
		if !isHLL(v) {
			errText = errNotHLL
			return
		}
		card, cached = hllCachedCount(v)
	})
	if err == nil && found && errText == "" && !cached {
		// Count under the write lock and keep the result in the header.
		err = cl.db().EditString(args[1], 0, func(v []byte, found bool) []byte {
			if !found {
				card = 0
				return nil
			}
			if !isHLL(v) {
				errText = errNotHLL
				return nil
			}
			if card, cached = hllCachedCount(v); cached {
				return nil
			}
			histo, invalid := hllHistogram(v)
			if invalid {
				errText = errCorruptHLL
				return nil
			}
			card = hllEstimate(&histo)
			binary.LittleEndian.PutUint64(v[8:16], card)
			updated = true
			return nil
		})
	}
	if cl.writeFailure(err, errText) {
		return
	}
	cl.writeInt(int64(card))
	if updated {
		// As Redis: the key changed (WATCH, tracking), and the PFCOUNT is
		// logged, so that a replica or a replay caches the same count.
		h.touchKeyIn(int(cl.selected.Load()), args[1])
		cl.setEffect(aof.AppendCommand(cl.effectScratch(), args[0], args[1]))
	}
}

// pfCountUnion is PFCOUNT of several keys: the estimate of their union,
// cached nowhere.
func (h *Handler) pfCountUnion(cl *client, keys [][]byte) {
	var regs [hllRegisters]uint8
	if errText := mergeHLLs(cl, keys, &regs, nil); errText != "" {
		cl.writeError(errText)
		return
	}
	var histo [64]int
	for _, r := range regs {
		histo[r]++
	}
	cl.writeInt(int64(hllEstimate(&histo)))
}

// mergeHLLs raises regs to the registers of the HLLs at keys (a missing key
// is empty) and returns the first error Redis would give. dense, when not
// nil, learns whether any of them was dense.
func mergeHLLs(cl *client, keys [][]byte, regs *[hllRegisters]uint8, dense *bool) string {
	for _, key := range keys {
		var errText string
		_, err := cl.db().ViewString(key, func(v []byte) {
			switch {
			case !isHLL(v):
				errText = errNotHLL
			case !hllMergeInto(regs, v):
				errText = errCorruptHLL
			case v[4] == hllDense && dense != nil:
				*dense = true
			}
		})
		if err != nil {
			return err.Error()
		}
		if errText != "" {
			return errText
		}
	}
	return ""
}

func cmdPFMerge(h *Handler, cl *client, args [][]byte) {
	var regs [hllRegisters]uint8
	useDense := false
	if errText := mergeHLLs(cl, args[1:], &regs, &useDense); errText != "" {
		cl.writeError(errText)
		return
	}
	maxBytes := h.hllSparseMaxBytes()
	var created bool
	var errText string
	err := cl.db().EditString(args[1], hllDenseSize, func(v []byte, found bool) []byte {
		if found {
			v = append(make([]byte, 0, len(v)+8), v...)
		} else {
			v, created = newHLL(), true
		}
		if useDense && v[4] == hllSparse {
			var ok bool
			if v, ok = sparseToDense(v); !ok {
				errText = errCorruptHLL
				return nil
			}
		}
		for i, r := range regs {
			if r == 0 {
				continue
			}
			if v[4] == hllDense {
				denseRaise(v[hllHeaderSize:], i, r)
			} else {
				v, _ = sparseSet(v, i, r, maxBytes) // Redis goes on past a corrupt value too
			}
		}
		hllInvalidateCache(v)
		return v
	})
	if cl.writeFailure(err, errText) {
		return
	}
	cl.writeOK()
	cl.notifyNew(created, args[1])
	cl.notify(evString, "pfadd", args[1])
}

func cmdPFDebug(h *Handler, cl *client, args [][]byte) {
	sub, key := args[1], args[2]
	errText := ""
	err := cl.db().EditString(key, hllDenseSize, func(v []byte, found bool) []byte {
		switch {
		case !found:
			errText = "ERR The specified key does not exist"
			return nil
		case !isHLL(v):
			errText = errNotHLL
			return nil
		}
		switch {
		case ascii.EqualFold(sub, "getreg"):
			d := v
			if v[4] == hllSparse {
				var ok bool
				if d, ok = sparseToDense(v); !ok {
					errText = errCorruptHLL
					return nil
				}
			}
			cl.writeArray(hllRegisters)
			for i := range hllRegisters {
				cl.writeInt(int64(denseRegister(d[hllHeaderSize:], i)))
			}
			if v[4] == hllSparse {
				return d
			}
		case ascii.EqualFold(sub, "decode"):
			if v[4] != hllSparse {
				errText = "ERR HLL encoding is not sparse"
				return nil
			}
			cl.writeBulkStr(decodeSparse(v))
		case ascii.EqualFold(sub, "encoding"):
			cl.writeStatus([]string{"dense", "sparse"}[v[4]])
		case ascii.EqualFold(sub, "todense"):
			if v[4] == hllDense {
				cl.writeInt(0)
				return nil
			}
			d, ok := sparseToDense(v)
			if !ok {
				errText = errCorruptHLL
				return nil
			}
			cl.writeInt(1)
			return d
		default:
			errText = "ERR Unknown PFDEBUG subcommand '" + string(sub) + "'"
		}
		return nil
	})
	cl.writeFailure(err, errText)
}

// writeFailure writes the store's error, or else errText, the error a
// command found inside a store callback; false if there is neither.
func (cl *client) writeFailure(err error, errText string) bool {
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case errText != "":
		cl.writeError(errText)
	default:
		return false
	}
	return true
}

// decodeSparse is PFDEBUG DECODE: the opcodes of sparse HLL v as text.
func decodeSparse(v []byte) string {
	var b strings.Builder
	for p := hllHeaderSize; p < len(v); {
		run, val, size := sparseOp(v, p)
		switch {
		case val != 0:
			b.WriteString("v:" + strconv.Itoa(val) + "," + strconv.Itoa(run) + " ")
		case size == 2:
			b.WriteString("Z:" + strconv.Itoa(run) + " ")
		default:
			b.WriteString("z:" + strconv.Itoa(run) + " ")
		}
		p += size
	}
	return strings.TrimRight(b.String(), " ")
}

// cmdPFSelfTest is Redis's self test of the implementation: dense register
// access with random values, then ten million elements added to a dense
// and a sparse HLL whose estimates must agree with each other and stay
// within six standard errors of the truth at each power of ten. It holds
// its loop for about as long as redis-server holds its thread (seconds).
func cmdPFSelfTest(h *Handler, cl *client, _ [][]byte) {
	if errText := hllSelfTest(rand.Uint64, h.hllSparseMaxBytes(), 10_000_000); errText != "" {
		cl.writeError(errText)
		return
	}
	cl.writeOK()
}

// hllSelfTest is PFSELFTEST's work with adds elements (Redis: ten million).
func hllSelfTest(random func() uint64, maxBytes int64, adds uint64) string {
	dense := make([]byte, hllDenseSize)
	copy(dense, "HYLL")
	regs := dense[hllHeaderSize:]
	var want [hllRegisters]uint8
	for range 1000 {
		for i := range want {
			want[i] = uint8(random() & 63)
			setDenseRegister(regs, i, want[i])
		}
		for i := range want {
			if got := denseRegister(regs, i); got != want[i] {
				return fmt.Sprintf("TESTFAILED Register %d should be %d but is %d", i, want[i], got)
			}
		}
	}
	clear(regs)
	sparse := newHLL()
	relErr := 1.04 / math.Sqrt(hllRegisters)
	checkpoint := uint64(1)
	seed := random()
	var ele [8]byte
	for j := uint64(1); j <= adds; j++ {
		binary.LittleEndian.PutUint64(ele[:], j^seed)
		hllAdd(dense, ele[:], maxBytes)
		sparse, _ = hllAdd(sparse, ele[:], maxBytes)
		if j != checkpoint {
			continue
		}
		if int64(j) < maxBytes/2 && sparse[4] != hllSparse {
			return "TESTFAILED sparse encoding not used"
		}
		dh, _ := hllHistogram(dense)
		sh, _ := hllHistogram(sparse)
		est := hllEstimate(&dh)
		if est != hllEstimate(&sh) {
			return "TESTFAILED dense/sparse disagree"
		}
		maxErr := uint64(math.Ceil(relErr * 6 * float64(checkpoint)))
		if j == 10 {
			maxErr = 1
		}
		absErr := int64(checkpoint) - int64(est)
		if absErr < 0 {
			absErr = -absErr
		}
		if absErr > int64(maxErr) {
			return fmt.Sprintf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, absErr)
		}
		checkpoint *= 10
	}
	return ""
}
