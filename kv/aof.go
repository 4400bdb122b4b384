package kv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Persistence hooks. A command with the write flag runs, when an
// append-only file is attached, under the kv stripe locks of its keys (one
// stripe per store shard), and its record is appended to the log before the
// stripes are released: two loops writing one key then log in the order
// the store applied them, which the file's replay depends on. A record says
// what the command did, not what it was asked, as Redis propagates it:
// relative expirations become absolute (PXAT, PEXPIREAT), a conditional
// write that did nothing is not logged, INCRBYFLOAT becomes a SET of its
// result, and a read-modify-write command (INCR, APPEND, SETRANGE) that met
// a missing or expired key is preceded by a DEL of it, because a replay
// keeps expired keys until the load ends (Redis logs a DEL when a key
// expires; Shoal logs it when a write finds one gone).
//
// Under appendfsync always, the replies of a batch are held back while any
// record appended so far (by any client) is not yet durable. At the end of
// the loop's cycle the loop syncs the log itself, or waits for the round
// in flight (group commit, aof_hold.go), and releases them with the cycle's
// output; where the engine has no cycle end they are handed to the
// connection through Conn.RunReserved once the writer goroutine has synced
// them. Later batches' replies queue behind them, so the order of replies
// is kept, and a graceful close waits for them (the cycle-end function or
// the reservation counts as a queued task). A read
// passes its keys' stripes first (callReader), so the records of the values
// it shows are among those waited for.

// logRule says how a write command is logged: the log field of its table
// entry, which every command with the write flag sets and no other does
// (checkEntry).
type logRule uint8

const (
	logNone        logRule = iota // not logged: commands without the write flag
	logAsIs                       // unless the reply is an error
	logRMW                        // as is, preceded by DEL if the key was missing or expired
	logSet                        // SET key value [PXAT t] if it wrote
	logSetNX                      // SET key value if the reply is :1
	logSetEX                      // SETEX/PSETEX: SET key value PXAT t
	logGetSet                     // SET key value
	logGetDel                     // DEL key if the reply was a value
	logGetEx                      // PEXPIREAT / PERSIST / DEL per the key's TTL after, if options were given
	logMSetNX                     // MSET ... if the reply is :1
	logExpire                     // PEXPIREAT key t (or DEL key) if the reply is :1
	logIfOne                      // as is if the reply is :1 (PERSIST)
	logIfNonZero                  // as is unless the reply is :0 (DEL, UNLINK)
	logRenameNX                   // RENAME a b if the reply is :1
	logIncrFloat                  // SET key result [PXAT t]
	logFlush                      // FLUSHALL or FLUSHDB, without ASYNC; locks every stripe
	logEveryStripe                // as is, under every stripe (SWAPDB: no write of either database between its swap and its record)
	logDelAbsent                  // as is, preceded by DEL of those of its keys that were missing or expired
	logEffect                     // the record the command left in aofState.effect (blocking pops, LMPOP)

	numLogRules // not a rule: checkEntry refuses it and anything above
)

// readsKeyAt1 reports whether the rule takes args[1] as the command's key
// (to test it before the command runs, or to log its state after).
func (r logRule) readsKeyAt1() bool {
	switch r {
	case logRMW, logSet, logSetNX, logSetEX, logGetSet, logGetDel, logGetEx, logExpire, logRenameNX, logIncrFloat:
		return true
	}
	return false
}

// aofState is a client's part in the append-only file.
type aofState struct {
	end       int64 // logical offset of the end of its last record
	committed int64 // end as last passed to Writer.Commit
	scratch   []byte
	stripes   []int
	absent    []int  // logDelAbsent: positions of the keys missing before the command ran
	effect    []byte // logEffect: the command's record of what it did

	// Under appendfsync always: replies waiting for their records to be
	// durable, in order, each batch marked with the offset it waits for.
	held    []byte
	marks   []holdMark
	closing bool         // QUIT (or an error) arrived while replies were held
	durable atomic.Int64 // highest offset the writer confirmed, for this client
	failed  atomic.Bool  // the writer could not make a held record durable
	onSync  func(end int64, ok bool)
	release func()

	// The group commit at the end of the loop's cycle (aof_hold.go).
	ender       cycleEnder // cl.conn, if its loop runs cycle-end functions
	cycleQueued bool       // syncAtCycleEnd is queued for this cycle
}

type holdMark struct {
	end int64
	n   int // len(held) after the batch
}

// AttachAOF makes h log every write to w, from the next command on. Call it
// before serving, after LoadAOF.
func (h *Handler) AttachAOF(w *aof.Writer, loadTruncated bool) {
	h.aof = w
	// From now on the attached file is what CONFIG reports.
	h.params.Own("appendfilename", config.Owner{Get: func() string { return filepath.Base(w.Path()) }})
	h.params.Own("aof-load-truncated", config.Owner{Get: func() string { return config.FormatYesNo(loadTruncated) }})
	h.rw.attached.Store(w)
	h.stripes = make([]sync.Mutex, h.shared.ShardCount())
	h.dels.on.Store(true) // after the stripes: the expirer may log at once
}

// callReader runs a read command and then, under appendfsync always,
// takes and drops the stripes of its keys (every stripe for a command over
// the whole keyspace): a write holds its stripe from its store operation
// until its record is appended, so once the read gets through, every value
// it may have shown is in the log, and the batch's wait for the log's end
// (afterBatch) covers it.
func (h *Handler) callReader(cl *client, cmd *command, args [][]byte) {
	cmd.fn(h, cl, args)
	if h.aof.Policy() != aof.FsyncAlways {
		return
	}
	if cl.aof == nil {
		cl.aof = &aofState{}
	}
	h.lockStripes(cl, cmd, args)
	h.unlockStripes(cl)
}

// callLogged runs a write command under its stripes and logs what it did.
func (h *Handler) callLogged(cl *client, cmd *command, args [][]byte) {
	if h.aof != nil {
		if msg := h.aof.WriteError(); msg != "" {
			cl.writeError("MISCONF " + msg)
			return
		}
	}
	if cl.aof == nil {
		// Allocated on a client's first write, so that clients that only
		// read (and idle ones) do not carry it.
		cl.aof = &aofState{}
	}
	h.lockStripes(cl, cmd, args)
	defer h.unlockStripes(cl)
	if h.rw.active.Load() {
		h.copyBeforeWrite(cl)
	}
	if h.primary.snapshot.Load() != nil {
		h.syncCopyBeforeWrite(cl.aof.stripes) // a full sync's snapshot (primary_snapshot.go)
	}
	absent := false
	if cmd.log == logRMW {
		absent = cl.db().PTTL(args[1]) == -2
	}
	if cmd.log == logDelAbsent {
		cl.aof.absent = h.absentKeys(cl.db(), cl.aof.absent[:0], cmd, args)
	}
	start := len(cl.out)
	cl.aof.effect = cl.aof.effect[:0]
	cmd.fn(h, cl, args)
	// The keys its lookups found expired, and those it evicted from its
	// own shards, are deleted before what it did (expiry_log.go).
	h.flushDeletionsOf(cl)
	reply := cl.out[start:]
	if len(reply) == 0 || reply[0] == '-' {
		return
	}
	dst := cl.aof.scratch[:0]
	if cmd.log == logDelAbsent && len(cl.aof.absent) > 0 {
		dst = aof.AppendHeader(dst, 1+len(cl.aof.absent))
		dst = aof.AppendArg(dst, []byte("DEL"))
		for _, i := range cl.aof.absent {
			dst = aof.AppendArg(dst, args[i])
		}
	}
	var rec []byte
	if cmd.log == logEffect {
		rec = append(dst, cl.aof.effect...)
	} else {
		rec = h.record(cl.db(), dst, cmd, args, reply, absent)
	}
	cl.aof.scratch = rec
	if len(rec) == 0 {
		return
	}
	h.appendRecord(cl, rec)
}

// appendRecord appends a command's record to the log and the replication
// stream, under the stripes the command holds.
func (h *Handler) appendRecord(cl *client, rec []byte) {
	db := int(cl.selected.Load())
	multi := cl.execLogPrefix() // MULTI before an EXEC's or a script's first record
	if h.aof != nil {
		buf := append(h.aof.Select(h.aof.Begin(), db), multi...)
		cl.aof.end = h.aof.End(append(buf, rec...))
	}
	if h.primary.feeding.Load() {
		h.feedRecords(db, multi, rec) // primary.go
	}
}

// callMayLog runs a read command that may change how a value is stored
// (PFCOUNT's cached cardinality) under its stripes, as a write runs, and
// logs the effect it left, if any: Redis propagates such a command when
// it changed something. A replica does not log its own clients' (Redis
// neither feeds them to its replicas).
func (h *Handler) callMayLog(cl *client, cmd *command, args [][]byte) {
	if cl.aof == nil {
		cl.aof = &aofState{}
	}
	h.lockStripes(cl, cmd, args)
	defer h.unlockStripes(cl)
	if h.rw.active.Load() {
		h.copyBeforeWrite(cl)
	}
	if h.primary.snapshot.Load() != nil {
		h.syncCopyBeforeWrite(cl.aof.stripes)
	}
	cl.aof.effect = cl.aof.effect[:0]
	cmd.fn(h, cl, args)
	h.flushDeletionsOf(cl)
	if len(cl.aof.effect) > 0 {
		h.appendRecord(cl, cl.aof.effect)
	}
}

// logExec logs the EXEC that closes a transaction's or a script's records
// (their first was preceded by MULTI: execLogPrefix), to the file and the
// replication stream.
func (h *Handler) logExec(cl *client) {
	if h.aof != nil {
		buf := h.aof.Begin()
		end := h.aof.End(append(buf, execRecord...))
		if cl.aof != nil {
			cl.aof.end = end
		}
	}
	if h.primary.feeding.Load() {
		h.feedStream(-1, execRecord)
	}
}

// The records around a transaction's or a script's writes; read-only.
var (
	multiRecord = []byte("*1\r\n$5\r\nMULTI\r\n")
	execRecord  = []byte("*1\r\n$4\r\nEXEC\r\n")
)

// logsEffects reports whether cl's logEffect command must leave its
// record in cl.aof.effect: it is logged (to the file or the replication
// stream), and not a replay.
func (cl *client) logsEffects() bool {
	return cl.aof != nil && cl.h != nil && (cl.h.aof != nil || cl.h.primary.feeding.Load())
}

// absentKeys appends the positions of cmd's keys that are missing or
// expired now, before it runs: a multi-key write (ZUNIONSTORE, ZMPOP, ...)
// reads keys a replay would still hold if they had expired, as replays keep
// expired keys until the load ends, so its record deletes them first.
func (h *Handler) absentKeys(db *store.Store, dst []int, cmd *command, args [][]byte) []int {
	var at [16]int
	var pos []int
	if cmd.movableKeys {
		pos = cmd.keyPositions(at[:0], args)
	} else {
		last := cmd.lastKey
		if last < 0 {
			last += len(args)
		}
		for i := cmd.firstKey; i > 0 && i <= last && i < len(args); i += cmd.step {
			pos = append(pos, i)
		}
	}
	for _, i := range pos {
		if db.PTTL(args[i]) == -2 && !slices.ContainsFunc(dst, func(j int) bool { return string(args[j]) == string(args[i]) }) {
			dst = append(dst, i)
		}
	}
	return dst
}

// record appends the log record of a command that succeeded.
func (h *Handler) record(db *store.Store, dst []byte, cmd *command, args [][]byte, reply []byte, absent bool) []byte {
	switch cmd.log {
	case logRMW:
		if absent {
			dst = aof.AppendCommand(dst, []byte("DEL"), args[1])
		}
		return aof.AppendCommand(dst, args...)
	case logSet:
		if !setWrote(args, reply) {
			return dst
		}
		return h.appendSetState(db, dst, args[1], args[2])
	case logSetNX:
		if !isOne(reply) {
			return dst
		}
		return h.appendSetState(db, dst, args[1], args[2])
	case logSetEX:
		return h.appendSetState(db, dst, args[1], args[3])
	case logGetSet:
		return h.appendSetState(db, dst, args[1], args[2])
	case logGetDel:
		if isNull(reply) {
			return dst
		}
		return aof.AppendCommand(dst, []byte("DEL"), args[1])
	case logGetEx:
		if len(args) == 2 || isNull(reply) {
			return dst
		}
		return h.appendTTLState(db, dst, args[1])
	case logMSetNX:
		if !isOne(reply) {
			return dst
		}
		dst = aof.AppendHeader(dst, len(args))
		dst = aof.AppendArg(dst, []byte("MSET"))
		for _, a := range args[1:] {
			dst = aof.AppendArg(dst, a)
		}
		return dst
	case logExpire:
		if !isOne(reply) {
			return dst
		}
		return h.appendTTLState(db, dst, args[1])
	case logIfOne:
		if !isOne(reply) {
			return dst
		}
	case logIfNonZero:
		if bytes.Equal(reply, []byte(":0\r\n")) {
			return dst
		}
	case logRenameNX:
		if !isOne(reply) {
			return dst
		}
		return aof.AppendCommand(dst, []byte("RENAME"), args[1], args[2])
	case logIncrFloat:
		val, ok := bulkPayload(reply)
		if !ok {
			return dst
		}
		return h.appendSetState(db, dst, args[1], val)
	case logFlush:
		return aof.AppendCommand(dst, args[0]) // FLUSHDB or FLUSHALL, without ASYNC: the flush was done
	}
	return aof.AppendCommand(dst, args...)
}

// appendSetState logs SET key val with key's expiry as it now is in the
// store, absolute: the TTL the command computed, or the one KEEPTTL kept.
func (h *Handler) appendSetState(db *store.Store, dst, key, val []byte) []byte {
	t := db.ExpireTime(key)
	switch {
	case t == -2: // set with a time already past: Redis deletes the key
		return aof.AppendCommand(dst, []byte("DEL"), key)
	case t < 0:
		return aof.AppendCommand(dst, []byte("SET"), key, val)
	}
	dst = aof.AppendHeader(dst, 5)
	dst = aof.AppendArg(dst, []byte("SET"))
	dst = aof.AppendArg(dst, key)
	dst = aof.AppendArg(dst, val)
	dst = aof.AppendArg(dst, []byte("PXAT"))
	return aof.AppendIntArg(dst, t)
}

// appendTTLState logs key's expiry as it now is: PEXPIREAT, PERSIST, or a
// DEL if the new time had already passed.
func (h *Handler) appendTTLState(db *store.Store, dst, key []byte) []byte {
	t := db.ExpireTime(key)
	switch {
	case t == -2:
		return aof.AppendCommand(dst, []byte("DEL"), key)
	case t < 0:
		return aof.AppendCommand(dst, []byte("PERSIST"), key)
	}
	dst = aof.AppendHeader(dst, 3)
	dst = aof.AppendArg(dst, []byte("PEXPIREAT"))
	dst = aof.AppendArg(dst, key)
	return aof.AppendIntArg(dst, t)
}

// setWrote reports whether SET with these arguments wrote, from its reply:
// without NX/XX it always does; with them, +OK says so, or with GET a null
// (NX: there was no old value) or a value (XX: there was).
func setWrote(args [][]byte, reply []byte) bool {
	nx, xx, get := false, false, false
	for _, a := range args[3:] {
		switch {
		case ascii.EqualFold(a, "NX"):
			nx = true
		case ascii.EqualFold(a, "XX"):
			xx = true
		case ascii.EqualFold(a, "GET"):
			get = true
		}
	}
	switch {
	case !nx && !xx:
		return true
	case !get:
		return reply[0] == '+'
	case nx:
		return isNull(reply)
	default:
		return !isNull(reply)
	}
}

func isOne(reply []byte) bool  { return bytes.Equal(reply, []byte(":1\r\n")) }
func isNull(reply []byte) bool { return reply[0] == '_' || bytes.HasPrefix(reply, []byte("$-1\r\n")) }

// bulkPayload returns the payload of a bulk-string reply.
func bulkPayload(reply []byte) ([]byte, bool) {
	if reply[0] != '$' {
		return nil, false
	}
	i := bytes.Index(reply, []byte("\r\n"))
	if i < 0 || len(reply) < i+4 {
		return nil, false
	}
	return reply[i+2 : len(reply)-2], true
}

// lockStripes locks the stripes of the command's keys in ascending order
// (every stripe for FLUSHALL), so commands on overlapping keys cannot
// deadlock.
func (h *Handler) lockStripes(cl *client, cmd *command, args [][]byte) {
	s := cl.aof.stripes[:0]
	switch {
	case cmd.log == logFlush, cmd.log == logEveryStripe, cmd.reads && cmd.firstKey == 0:
		for i := range h.stripes {
			s = append(s, i)
		}
	case cmd.movableKeys:
		// ZUNIONSTORE, ZMPOP, ...: every key the count names, so a write
		// to a source key cannot be logged between this one's read of it
		// and its record.
		var at [16]int
		for _, i := range cmd.keyPositions(at[:0], args) {
			s = append(s, h.shared.ShardIndex(args[i]))
		}
		if len(s) > 1 {
			slices.Sort(s)
			s = slices.Compact(s)
		}
	case cmd.firstKey > 0:
		last := cmd.lastKey
		if last < 0 {
			last += len(args)
		}
		for i := cmd.firstKey; i <= last && i < len(args); i += cmd.step {
			s = append(s, h.shared.ShardIndex(args[i]))
		}
		if len(s) > 1 {
			slices.Sort(s)
			s = slices.Compact(s)
		}
	}
	for _, i := range s {
		h.stripes[i].Lock()
	}
	cl.aof.stripes = s
}

func (h *Handler) unlockStripes(cl *client) {
	for _, i := range cl.aof.stripes {
		h.stripes[i].Unlock()
	}
	cl.aof.stripes = cl.aof.stripes[:0]
}

// LoadAOF replays the append-only file at path into the store through the
// command functions, with expiry suspended (store.SetLoading) so that the
// keyspace is rebuilt as it was logged. Call it before serving and before
// AttachAOF. It reports how many commands it ran.
func (h *Handler) LoadAOF(path string, repairTruncated bool) (aof.LoadStats, error) {
	h.shared.SetLoading(true)
	defer h.shared.SetLoading(false)
	cl := &client{h: h, proto: 2, authed: true, valueDigits: 1}
	cl.parser.Limits = &h.opts.Limits
	var firstErr string
	var errCount int64
	st, err := aof.Load(path, repairTruncated, func(args [][]byte) error {
		if dispatchIdx.find(args[0]) == nil {
			return fmt.Errorf("unknown command '%s' in the append only file", truncateArg(args[0]))
		}
		cl.out = cl.out[:0]
		h.dispatch(cl, args)
		if len(cl.out) > 0 && cl.out[0] == '-' {
			errCount++
			if firstErr == "" {
				firstErr = string(bytes.TrimRight(cl.out, "\r\n"))
			}
		}
		if cl.closeAfterReply {
			return errors.New("a command in the append only file closed the connection")
		}
		return nil
	}, func(off int64) {
		h.opts.Logger.Info("loading the append only file", "path", path, "bytes", off)
	})
	if errCount > 0 {
		h.opts.Logger.Warn("commands in the append only file answered errors", "count", errCount, "first", firstErr)
	}
	return st, err
}

func truncateArg(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// ownAOFSettings makes h.params read and apply the persistence settings
// kv owns. appendfsync changes at run time, also with no file attached (it
// is the policy a file would get); appendonly cannot be switched at run time.
func (h *Handler) ownAOFSettings() {
	p, s := h.params, &h.cfg
	s.fsyncIdle = p.Get("appendfsync")
	p.Own("appendonly", config.Owner{
		Get: func() string { return config.FormatYesNo(h.aof != nil) },
		Set: func(string) {}, // Check lets only the value in use through
		Check: func(v string) error {
			if on := config.FormatYesNo(h.aof != nil); v != on {
				return fmt.Errorf("appendonly can only be chosen at startup (--appendonly); it is %s", on)
			}
			return nil
		},
	})
	p.Own("appendfsync", config.Owner{
		Get: func() string {
			if h.aof == nil {
				return s.get(&s.fsyncIdle)
			}
			return h.aof.Policy().String()
		},
		Set: func(v string) {
			pol, err := aof.ParseFsync(v)
			if err != nil {
				panic("kv: the settings table offers an appendfsync aof lacks: " + err.Error())
			}
			if h.aof != nil {
				h.aof.SetPolicy(pol)
				return
			}
			s.mu.Lock()
			s.fsyncIdle = v
			s.mu.Unlock()
		},
	})
	// The process's working directory, which the file's name is relative to.
	p.Own("dir", config.Owner{Get: func() string { d, _ := os.Getwd(); return d }})
	h.rw.autoPercent.Store(p.Int("auto-aof-rewrite-percentage"))
	h.rw.autoMinSize.Store(p.Int("auto-aof-rewrite-min-size"))
	p.Own("auto-aof-rewrite-percentage", config.Owner{
		Get: func() string { return strconv.FormatInt(h.rw.autoPercent.Load(), 10) },
		Set: func(v string) { h.rw.autoPercent.Store(atoi64(v)) },
	})
	p.Own("auto-aof-rewrite-min-size", config.Owner{
		Get: func() string { return strconv.FormatInt(h.rw.autoMinSize.Load(), 10) },
		Set: func(v string) { h.rw.autoMinSize.Store(atoi64(v)) },
	})
}

// aofInfo writes INFO persistence's aof fields, as Redis 7.0 names them.
func (h *Handler) aofInfo(field func(k string, v any)) {
	w := h.aof
	if w == nil {
		field("aof_enabled", 0)
		field("aof_rewrite_in_progress", 0)
		field("aof_rewrite_scheduled", 0)
		field("aof_last_rewrite_time_sec", -1)
		field("aof_current_rewrite_time_sec", -1)
		field("aof_last_bgrewrite_status", "ok")
		field("aof_rewrites", 0)
		field("aof_last_write_status", "ok")
		return
	}
	rs := w.RewriteStats()
	field("aof_enabled", 1)
	field("aof_rewrite_in_progress", boolInt(rs.InProgress))
	field("aof_rewrite_scheduled", 0)
	field("aof_last_rewrite_time_sec", rs.LastSeconds)
	field("aof_current_rewrite_time_sec", rs.CurrentSeconds)
	field("aof_last_bgrewrite_status", okErr(rs.LastOK))
	field("aof_rewrites", rs.Count)
	field("aof_last_write_status", okErr(w.WriteError() == ""))
	field("aof_current_size", w.Size())
	field("aof_base_size", w.BaseSize())
	field("aof_pending_rewrite", 0)
	field("aof_buffer_length", w.Pending())
	field("aof_pending_bio_fsync", 0)
	field("aof_delayed_fsync", 0)
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}
