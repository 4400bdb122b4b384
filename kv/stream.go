package kv

import (
	"strconv"
	"time"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Streams: the commands of Redis 7.0's stream group over store.Stream.
// This file: the command table, XADD and XTRIM with their trimming
// options, XDEL, XSETID; stream_range.go: XRANGE, XREVRANGE, XLEN and the
// entry replies; stream_read.go: XREAD and its blocking.
//
// Logging, as Redis propagates them: XADD with the ID it generated in place
// of * or <ms>-*, and an approximate trim (~) as the exact one it came to
// (MAXLEN = <length after>, MINID = <first ID after>); XTRIM likewise, and
// only when it removed entries; XDEL only when it deleted.

var _ = registerFamily(family{kind: store.KindStream, rewrite: appendRewriteStream, commands: []*command{
	{
		name: "xadd", arity: -5, fn: cmdXAdd, log: logEffect,
		flags: "write denyoom fast", acl: "@write @stream @fast", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{notes: "UPDATE instead of INSERT because of the optional trimming feature", flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Appends a new message to a stream. Creates the key if it doesn't exist.", "5.0.0", "stream", "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted."},
	},
	{
		name: "xrange", arity: -4, fn: cmdXRange,
		flags: "readonly", acl: "@read @stream @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the messages from a stream within a range of IDs.", "5.0.0", "stream", "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1)."},
	},
	{
		name: "xrevrange", arity: -4, fn: cmdXRevRange,
		flags: "readonly", acl: "@read @stream @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the messages from a stream within a range of IDs in reverse order.", "5.0.0", "stream", "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1)."},
	},
	{
		name: "xlen", arity: 2, fn: cmdXLen,
		flags: "readonly fast", acl: "@read @stream @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Return the number of messages in a stream.", "5.0.0", "stream", "O(1)"},
	},
	{
		name: "xdel", arity: -3, fn: cmdXDel, log: logIfNonZero,
		flags: "write fast", acl: "@write @stream @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns the number of messages after removing them from a stream.", "5.0.0", "stream", "O(1) for each single item to delete in the stream, regardless of the stream size."},
	},
	{
		name: "xtrim", arity: -4, fn: cmdXTrim, log: logEffect,
		flags: "write", acl: "@write @stream @slow", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Deletes messages from the beginning of a stream.", "5.0.0", "stream", "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation."},
	},
	{
		name: "xsetid", arity: -3, fn: cmdXSetID, log: logAsIs,
		flags: "write denyoom fast", acl: "@write @stream @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"An internal command for replicating stream values.", "5.0.0", "stream", "O(1)"},
	},
}})

const (
	errXAddZero      = "ERR The ID specified in XADD must be greater than 0-0"
	errXAddSmaller   = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errXAddExhausted = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errXAddTooLarge  = "ERR Elements are too large to be stored"
)

// trimArgs are the options XADD and XTRIM share (streamAddTrimArgs).
type trimArgs struct {
	id         store.StreamID // XADD's ID
	idGiven    bool
	seqGiven   bool
	noMkStream bool
	strategy   int // 0 none, 1 MAXLEN, 2 MINID
	argIdx     int // the position of the count or ID after MAXLEN/MINID
	approx     bool
	limit      int64
	maxLen     int64
	minID      store.StreamID
}

const (
	trimNone = iota
	trimMaxLen
	trimMinID
)

// obeys reports whether cl's commands come from the AOF or a primary,
// whose trims Redis applies without a LIMIT (mustObeyClient).
func (cl *client) obeys() bool { return cl.conn == nil || cl.isPrimaryLink() }

// parseTrimArgs parses XADD's (xadd) or XTRIM's options from args[2] on
// as streamParseAddOrTrimArgsOrReply; it returns the position of XADD's
// ID (XTRIM: len(args)) or an error text.
func parseTrimArgs(cl *client, args [][]byte, xadd bool) (a trimArgs, idPos int, errText string) {
	limitGiven := false
	i := 2
	strictID := streamIDParse{strict: true}
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			goto done
		case (ascii.EqualFold(opt, "maxlen") || ascii.EqualFold(opt, "minid")) && more > 0:
			if a.strategy != trimNone {
				return a, 0, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
			}
			a.approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				a.approx = next[0] == '~'
				i++
			}
			if ascii.EqualFold(opt, "maxlen") {
				n, ok := ascii.ParseInt(args[i+1])
				if !ok {
					return a, 0, errNotInteger
				}
				if n < 0 {
					return a, 0, "ERR The MAXLEN argument must be >= 0."
				}
				a.maxLen, a.strategy = n, trimMaxLen
			} else {
				id, _, ok := strictID.parse(args[i+1])
				if !ok {
					return a, 0, errInvalidStreamID
				}
				a.minID, a.strategy = id, trimMinID
			}
			i++
			a.argIdx = i
		case ascii.EqualFold(opt, "limit") && more > 0:
			n, ok := ascii.ParseInt(args[i+1])
			if !ok {
				return a, 0, errNotInteger
			}
			if n < 0 {
				return a, 0, "ERR The LIMIT argument must be >= 0."
			}
			a.limit, limitGiven = n, true
			i++
		case xadd && ascii.EqualFold(opt, "nomkstream"):
			a.noMkStream = true
		case xadd:
			id, seqGiven, ok := streamIDParse{strict: true, seqStar: true}.parse(opt)
			if !ok {
				return a, 0, errInvalidStreamID
			}
			a.id, a.seqGiven, a.idGiven = id, seqGiven, true
			goto done
		default:
			return a, 0, errSyntax
		}
	}
done:
	if a.limit != 0 && a.strategy == trimNone {
		return a, 0, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
	}
	if !xadd && a.strategy == trimNone {
		return a, 0, "ERR syntax error, XTRIM must be called with a trimming strategy"
	}
	switch {
	case cl.obeys():
		a.limit = 0
	case limitGiven:
		if !a.approx {
			return a, 0, "ERR syntax error, LIMIT cannot be used without the special ~ option"
		}
	case a.approx:
		a.limit = 100 * store.Encodings().StreamNodeMaxEntries
		if a.limit <= 0 {
			a.limit = 10000
		}
		if a.limit > 1000000 {
			a.limit = 1000000
		}
	default:
		a.limit = 0
	}
	return a, i, ""
}

// trim applies a's trimming to s and returns how many entries went.
func (a *trimArgs) trim(s *store.Stream) int64 {
	if a.strategy == trimNone {
		return 0
	}
	return s.Trim(store.Trim{ByID: a.strategy == trimMinID, MaxLen: uint64(a.maxLen), MinID: a.minID, Approx: a.approx, Limit: a.limit})
}

// rewriteTrim returns args with an approximate trim made exact as Redis
// propagates it: "=" for "~", and the length after (MAXLEN) or the first
// ID, tombstones included (MINID).
func (a *trimArgs) rewriteTrim(args [][]byte, s *store.Stream) {
	if !a.approx {
		return
	}
	args[a.argIdx-1] = []byte("=")
	if a.strategy == trimMaxLen {
		args[a.argIdx] = strconv.AppendUint(nil, s.Entries(), 10)
	} else {
		args[a.argIdx] = s.Edge(true, false).AppendTo(nil)
	}
}

// cmdXAdd: XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT
// count]] *|id field value [field value ...].
func cmdXAdd(h *Handler, cl *client, args [][]byte) {
	a, idPos, errText := parseTrimArgs(cl, args, true)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	fieldPos := idPos + 1
	if n := len(args) - fieldPos; n < 2 || n%2 == 1 {
		cl.writeError(errWrongArgs("xadd"))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		cl.writeError(errXAddZero)
		return
	}
	var need int64 = 64
	total := 0
	for _, f := range args[fieldPos:] {
		total += len(f)
	}
	need += int64(total)
	created := false
	var id store.StreamID
	var trimmed int64
	var rec []byte
	fail := ""
	nullReply := false
	err := cl.db().Update(args[1], store.KindStream, need, func(o store.Object) store.Object {
		s, _ := o.(*store.Stream)
		if s == nil {
			if a.noMkStream {
				nullReply = true
				return nil
			}
			s, created = store.NewStream(), true
		}
		last := s.LastID()
		if last == store.MaxStreamID {
			fail = errXAddExhausted
			return s
		}
		switch {
		case !a.idGiven:
			id = nextStreamID(last, h.nowMs())
		case a.seqGiven:
			id = a.id
		case a.id.Ms == last.Ms:
			if last.Seq == 1<<64-1 {
				fail = errXAddTooLarge // Redis fails here with errno unset
				return s
			}
			id = store.StreamID{Ms: last.Ms, Seq: last.Seq + 1}
		default:
			id = a.id
		}
		if !last.Less(id) {
			fail = errXAddSmaller
			return s
		}
		if total > store.StreamMaxElementsLen {
			fail = errXAddTooLarge
			return s
		}
		s.Add(id, args[fieldPos:])
		trimmed = a.trim(s)
		if cl.logsEffects() {
			rargs := append([][]byte(nil), args...)
			a.rewriteTrim(rargs, s)
			if !a.idGiven || !a.seqGiven {
				rargs[idPos] = id.AppendTo(nil)
			}
			rec = aof.AppendCommand(cl.effectScratch(), rargs...)
		}
		return s
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
		return
	case nullReply:
		cl.writeNull()
		return
	case fail != "":
		cl.notifyNew(created, args[1]) // Redis created the key before it failed
		cl.writeError(fail)
		return
	}
	cl.writeBulk(id.AppendTo(cl.scratchID()))
	cl.setEffect(rec)
	cl.notifyNew(created, args[1])
	cl.notify(evStream, "xadd", args[1])
	if trimmed > 0 {
		cl.notify(evStream, "xtrim", args[1])
	}
	h.signalReady(cl, args[1])
}

// scratchID is a small stack-free buffer for an ID's text.
func (cl *client) scratchID() []byte { return make([]byte, 0, 41) }

// nextStreamID is streamNextID: now-0 if the clock is past last's time,
// else last's successor.
func nextStreamID(last store.StreamID, now uint64) store.StreamID {
	if now > last.Ms {
		return store.StreamID{Ms: now}
	}
	id, _ := last.Incr()
	return id
}

// nowMs is the clock XADD generates IDs from.
func (h *Handler) nowMs() uint64 { return uint64(time.Now().UnixMilli()) }

// cmdXTrim: XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
func cmdXTrim(_ *Handler, cl *client, args [][]byte) {
	a, _, errText := parseTrimArgs(cl, args, false)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	var deleted int64
	var rec []byte
	_, _, err := updateExisting(cl, args[1], store.KindStream, func(s *store.Stream) {
		deleted = a.trim(s)
		if deleted > 0 && cl.logsEffects() {
			rargs := append([][]byte(nil), args...)
			a.rewriteTrim(rargs, s)
			rec = aof.AppendCommand(cl.effectScratch(), rargs...)
		}
	})
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	if deleted > 0 {
		cl.setEffect(rec)
		cl.notify(evStream, "xtrim", args[1])
	}
	cl.writeInt(deleted)
}

// cmdXDel: XDEL key id [id ...].
func cmdXDel(_ *Handler, cl *client, args [][]byte) {
	if !streamOrZero(cl, args[1]) {
		return
	}
	ids := make([]store.StreamID, 0, len(args)-2)
	for _, b := range args[2:] {
		id, _, ok := streamIDParse{strict: true}.parse(b)
		if !ok {
			cl.writeError(errInvalidStreamID)
			return
		}
		ids = append(ids, id)
	}
	deleted := 0
	if _, _, err := updateExisting(cl, args[1], store.KindStream, func(s *store.Stream) { deleted = s.Delete(ids) }); err != nil {
		cl.writeError(err.Error())
		return
	}
	if deleted > 0 {
		cl.notify(evStream, "xdel", args[1])
	}
	cl.writeInt(int64(deleted))
}

// cmdXSetID: XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id].
func cmdXSetID(_ *Handler, cl *client, args [][]byte) {
	strict := streamIDParse{strict: true}
	id, _, ok := strict.parse(args[2])
	if !ok {
		cl.writeError(errInvalidStreamID)
		return
	}
	entriesAdded := int64(-1)
	var maxDel store.StreamID
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch {
		case ascii.EqualFold(args[i], "entriesadded") && more > 0:
			n, ok := ascii.ParseInt(args[i+1])
			if !ok {
				cl.writeError(errNotInteger)
				return
			}
			if n < 0 {
				cl.writeError("ERR entries_added must be positive")
				return
			}
			entriesAdded = n
		case ascii.EqualFold(args[i], "maxdeletedid") && more > 0:
			if maxDel, _, ok = strict.parse(args[i+1]); !ok {
				cl.writeError(errInvalidStreamID)
				return
			}
			if id.Less(maxDel) {
				cl.writeError("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	fail := ""
	found, _, err := updateExisting(cl, args[1], store.KindStream, func(s *store.Stream) {
		if s.Entries() > 0 {
			if id.Less(s.Edge(false, true)) {
				fail = "ERR The ID specified in XSETID is smaller than the target stream top item"
				return
			}
			if entriesAdded != -1 && s.Entries() > uint64(entriesAdded) {
				fail = "ERR The entries_added specified in XSETID is smaller than the target stream length"
				return
			}
		}
		var md *store.StreamID
		if !maxDel.IsZero() {
			md = &maxDel
		}
		s.SetLastID(id, entriesAdded, md)
	})
	switch {
	case err != nil:
		cl.writeError(err.Error())
	case !found:
		cl.writeError("ERR no such key")
	case fail != "":
		cl.writeError(fail)
	default:
		cl.writeOK()
		cl.notify(evStream, "xsetid", args[1])
	}
}

// streamOrZero reports whether key holds a stream; otherwise it answers
// :0 for a missing key and WRONGTYPE for another kind (XDEL, XACK).
func streamOrZero(cl *client, key []byte) bool {
	switch cl.db().Type(key) {
	case "none":
		cl.writeInt(0)
		return false
	case "stream":
		return true
	}
	cl.writeError(store.ErrWrongType.Error())
	return false
}
