package kv

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
)

// Client-side caching: CLIENT TRACKING and the invalidation messages, as
// Redis 7.0 has them (its tracking.c). A client with tracking on has its
// read keys remembered (default mode; with OPTIN only after CLIENT CACHING
// yes, with OPTOUT unless after CLIENT CACHING no); a write of a
// remembered key sends every client that read it one "invalidate" message
// and forgets it. BCAST clients get the keys matching their prefixes
// instead, remembered or not. The message is a RESP3 push on the client's
// own connection or, with REDIRECT, on another client's: a RESP3 push, or
// for a RESP2 client subscribed to __redis__:invalidate a Pub/Sub message.
// FLUSHDB and FLUSHALL send a null invalidation to every tracking client.
// The table is by key name across databases, as Redis's.
//
// A message to another client goes through its subscriber's mailbox
// (pubsub.go), which its own loop flushes, and counts against its output
// limit like a Pub/Sub message; one to the client whose command wrote the
// key goes into its replies, after the command's.

// trackingState is a client's CLIENT TRACKING settings; replaced whole, so
// other loops read it without a lock.
type trackingState struct {
	redirect int64
	bcast    bool
	optin    bool
	optout   bool
	noloop   bool
	prefixes []string
}

// trackingTable is the Handler's record of who may cache what.
type trackingTable struct {
	active  atomic.Int64 // clients with tracking on: the write path's fast test
	maxKeys atomic.Int64 // tracking-table-max-keys (0: no limit)

	mu       sync.Mutex
	keys     map[string]map[int64]struct{} // remembered key → reader ids
	items    int                           // (key, reader) pairs
	prefixes map[string]map[int64]struct{} // BCAST prefix → client ids
}

// ownTrackingSettings makes the settings table read and set
// tracking-table-max-keys.
func (h *Handler) ownTrackingSettings() {
	t := &h.tracking
	t.maxKeys.Store(h.params.Int("tracking-table-max-keys"))
	h.params.Own("tracking-table-max-keys", config.Owner{
		Get: func() string { return strconv.FormatInt(t.maxKeys.Load(), 10) },
		Set: func(v string) { n, _ := strconv.ParseInt(v, 10, 64); t.maxKeys.Store(n) },
	})
}

// tracking returns cl's settings, nil when tracking is off.
func (cl *client) tracking() *trackingState {
	if s := cl.sess.Load(); s != nil {
		return s.tracking.Load()
	}
	return nil
}

var (
	errCachingMode = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
	invalidateName = []byte("invalidate")
	trackingChan   = []byte("__redis__:invalidate")
)

// cmdClientTracking implements CLIENT TRACKING ON|OFF [REDIRECT id]
// [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP], with Redis 7.0's
// checks in its order.
func cmdClientTracking(h *Handler, cl *client, args [][]byte) {
	var st trackingState
	redirSet := false
	for j := 3; j < len(args); j++ {
		more := j+1 < len(args)
		switch a := args[j]; {
		case ascii.EqualFold(a, "redirect") && more:
			j++
			if redirSet {
				cl.writeError("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := ascii.ParseInt(args[j])
			if !ok {
				cl.writeError(errNotInteger)
				return
			}
			if h.clients.lookup(id) == nil {
				cl.writeError("ERR The client ID you want redirect to does not exist")
				return
			}
			st.redirect, redirSet = id, true
		case setFlag(a, []string{"bcast", "optin", "optout", "noloop"}, &st.bcast, &st.optin, &st.optout, &st.noloop):
		case ascii.EqualFold(a, "prefix") && more:
			j++
			st.prefixes = append(st.prefixes, string(args[j]))
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	switch {
	case ascii.EqualFold(args[2], "on"):
		old := cl.tracking()
		switch {
		case !st.bcast && len(st.prefixes) > 0:
			cl.writeError("ERR PREFIX option requires BCAST mode to be enabled")
			return
		case old != nil && old.bcast != st.bcast:
			cl.writeError("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		case st.bcast && (st.optin || st.optout):
			cl.writeError("ERR OPTIN and OPTOUT are not compatible with BCAST")
			return
		case st.optin && st.optout:
			cl.writeError("ERR You can't specify both OPTIN mode and OPTOUT mode")
			return
		case old != nil && (st.optin && old.optout || st.optout && old.optin):
			cl.writeError("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if st.bcast {
			if msg := prefixCollision(old, st.prefixes); msg != "" {
				cl.writeError(msg)
				return
			}
			if len(st.prefixes) == 0 && (old == nil || len(old.prefixes) == 0) {
				st.prefixes = []string{""} // every key
			}
			if old != nil {
				st.prefixes = append(append([]string(nil), old.prefixes...), st.prefixes...)
			}
		}
		h.startTracking(cl, &st)
	case ascii.EqualFold(args[2], "off"):
		h.stopTracking(cl)
	default:
		cl.writeError(errSyntax)
		return
	}
	cl.writeOK()
}

// prefixCollision is Redis's checkPrefixCollisionsOrReply: no prefix may
// be a prefix of another, given now or before.
func prefixCollision(old *trackingState, added []string) string {
	for i, p := range added {
		if old != nil {
			for _, q := range old.prefixes {
				if q != "" && (hasPrefix(p, q) || hasPrefix(q, p)) {
					return "ERR Prefix '" + p + "' overlaps with an existing prefix '" + q + "'. Prefixes for a single client must not overlap."
				}
			}
		}
		for j, q := range added {
			if i != j && (hasPrefix(p, q) || hasPrefix(q, p)) {
				return "ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// startTracking turns tracking on for cl (or changes its mode); its loop.
func (h *Handler) startTracking(cl *client, st *trackingState) {
	s := cl.sessionOf()
	t := &h.tracking
	old := s.tracking.Swap(st)
	if old == nil {
		t.active.Add(1)
		h.updateBeforeKeys()
	}
	// Its messages go through its subscriber's mailbox (pubsub.go).
	cl.subscriberOf()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range st.prefixes {
		if t.prefixes == nil {
			t.prefixes = make(map[string]map[int64]struct{})
		}
		ids := t.prefixes[p]
		if ids == nil {
			ids = make(map[int64]struct{})
			t.prefixes[p] = ids
		}
		ids[cl.id] = struct{}{}
	}
}

// stopTracking turns tracking off for cl: CLIENT TRACKING OFF, RESET and
// its close. The keys it read stay in the table until written, as in
// Redis, and are skipped then.
func (h *Handler) stopTracking(cl *client) {
	s := cl.sess.Load()
	if s == nil {
		return
	}
	old := s.tracking.Swap(nil)
	s.caching = 0
	if old == nil {
		return
	}
	t := &h.tracking
	t.active.Add(-1)
	h.updateBeforeKeys()
	t.mu.Lock()
	for _, p := range old.prefixes {
		if ids := t.prefixes[p]; ids != nil {
			delete(ids, cl.id)
			if len(ids) == 0 {
				delete(t.prefixes, p)
			}
		}
	}
	t.mu.Unlock()
}

// cmdClientCaching implements CLIENT CACHING YES|NO: the next command's
// keys are (OPTIN) or are not (OPTOUT) remembered.
func cmdClientCaching(_ *Handler, cl *client, args [][]byte) {
	st := cl.tracking()
	if st == nil || (!st.optin && !st.optout) {
		cl.writeError(errCachingMode)
		return
	}
	switch {
	case ascii.EqualFold(args[2], "yes") && st.optin, ascii.EqualFold(args[2], "no") && st.optout:
		cl.sessionOf().caching = cachingGiven
	case ascii.EqualFold(args[2], "yes"):
		cl.writeError("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
		return
	case ascii.EqualFold(args[2], "no"):
		cl.writeError("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
		return
	default:
		cl.writeError(errSyntax)
		return
	}
	cl.writeOK()
}

// session.caching: CLIENT CACHING was given for the next command (or the
// transaction it starts).
const cachingGiven = 1

// endCaching clears CLIENT CACHING's mark after a command, as Redis's
// resetClient: not after CLIENT itself, nor inside MULTI ... EXEC.
func (s *session) endCaching(cmd *command) {
	if s.caching != 0 && !s.multi && !s.execing && (cmd.parent == nil || cmd.parent.name != "client") {
		s.caching = 0
	}
}

func cmdClientGetRedir(_ *Handler, cl *client, _ [][]byte) {
	st := cl.tracking()
	switch {
	case st == nil:
		cl.writeInt(-1)
	default:
		cl.writeInt(st.redirect)
	}
}

func cmdClientTrackingInfo(_ *Handler, cl *client, _ [][]byte) {
	st := cl.tracking()
	cl.writeMap(3)
	cl.writeBulkStr("flags")
	if st == nil {
		cl.writeSet(1)
		cl.writeBulkStr("off")
		cl.writeBulkStr("redirect")
		cl.writeInt(-1)
		cl.writeBulkStr("prefixes")
		cl.writeArray(0)
		return
	}
	flags := []string{"on"}
	if st.bcast {
		flags = append(flags, "bcast")
	}
	if st.optin {
		flags = append(flags, "optin")
		if s := cl.sess.Load(); s != nil && s.caching != 0 {
			flags = append(flags, "caching-yes")
		}
	}
	if st.optout {
		flags = append(flags, "optout")
		if s := cl.sess.Load(); s != nil && s.caching != 0 {
			flags = append(flags, "caching-no")
		}
	}
	if st.noloop {
		flags = append(flags, "noloop")
	}
	if st.redirect != 0 && cl.h.clients.lookup(st.redirect) == nil {
		flags = append(flags, "broken_redirect")
	}
	cl.writeSet(len(flags))
	for _, f := range flags {
		cl.writeBulkStr(f)
	}
	cl.writeBulkStr("redirect")
	cl.writeInt(st.redirect)
	cl.writeBulkStr("prefixes")
	n := 0
	for _, p := range st.prefixes {
		if p != "" {
			n++
		}
	}
	cl.writeArray(n)
	for _, p := range st.prefixes {
		if p != "" {
			cl.writeBulkStr(p)
		}
	}
}

// rememberKeys records the keys cl's read-only command read, if cl
// tracks them. dispatch calls it after the command, while tracking is on
// anywhere.
func (h *Handler) rememberKeys(cl *client, cmd *command, args [][]byte) {
	s := cl.sess.Load()
	if s == nil {
		return
	}
	st := s.tracking.Load()
	if st == nil || st.bcast || (st.optin && s.caching == 0) || (st.optout && s.caching != 0) {
		return
	}
	t := &h.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keys == nil {
		t.keys = make(map[string]map[int64]struct{})
	}
	forEachKey(cmd, args, func(key []byte) {
		ids := t.keys[string(key)]
		if ids == nil {
			ids = make(map[int64]struct{}, 1)
			t.keys[string(key)] = ids
		}
		if _, ok := ids[cl.id]; !ok {
			ids[cl.id] = struct{}{}
			t.items++
		}
	})
	for max := t.maxKeys.Load(); max > 0 && int64(len(t.keys)) > max; {
		for k, ids := range t.keys { // a random key, as Redis evicts
			delete(t.keys, k)
			t.items -= len(ids)
			h.sendInvalidations(nil, ids, []byte(k))
			break
		}
	}
}

// forEachKey calls fn with each key argument of cmd, by its table entry.
func forEachKey(cmd *command, args [][]byte, fn func(key []byte)) {
	if cmd.movableKeys {
		var at [16]int
		for _, i := range cmd.keyPositions(at[:0], args) {
			fn(args[i])
		}
		return
	}
	last := cmd.lastKey
	if last < 0 {
		last += len(args)
	}
	for i := cmd.firstKey; i > 0 && i <= last && i < len(args); i += cmd.step {
		fn(args[i])
	}
}

// invalidateWritten sends the invalidations of the keys a successful write
// command wrote; dispatch calls it while tracking is on anywhere.
func (h *Handler) invalidateWritten(cl *client, cmd *command, args [][]byte, reply []byte) {
	if len(reply) == 0 || reply[0] == '-' || !wroteSomething(cmd, args, reply) {
		return
	}
	if cmd.log == logFlush {
		h.invalidateAll(cl)
		return
	}
	forEachWrittenKey(cmd, args, func(key []byte) { h.invalidate(cl, key) })
}

// forEachWrittenKey is forEachKey for the keys a write may change: of the
// keys a getkeys procedure finds (keysOf), those not flagged RO, so that
// SORT and GEORADIUS touch their STORE destination, not their source.
func forEachWrittenKey(cmd *command, args [][]byte, fn func(key []byte)) {
	if cmd.keysOf == nil {
		forEachKey(cmd, args, fn)
		return
	}
	var at [16]int
	for i, p := range cmd.keysOf(at[:0], args) {
		if !hasWord(cmd.foundKeyFlags(i), "RO") {
			fn(args[p])
		}
	}
}

// invalidate tells the clients that read key, and the BCAST clients of
// its prefixes, that it changed. from is the client whose command wrote it
// (nil: a write from elsewhere).
func (h *Handler) invalidate(from *client, key []byte) {
	t := &h.tracking
	if t.active.Load() == 0 {
		return
	}
	t.mu.Lock()
	ids := t.keys[string(key)]
	if ids != nil {
		delete(t.keys, string(key))
		t.items -= len(ids)
	}
	var bcast []int64
	for p, pids := range t.prefixes {
		if hasPrefix(string(key), p) {
			for id := range pids {
				bcast = append(bcast, id)
			}
		}
	}
	t.mu.Unlock()
	h.sendInvalidations(from, ids, key)
	for _, id := range bcast {
		if c := h.clients.lookup(id); c != nil {
			h.sendInvalidation(from, c, key, true)
		}
	}
}

// invalidateAll sends every tracking client the null invalidation of a
// flush and forgets every remembered key.
func (h *Handler) invalidateAll(from *client) {
	t := &h.tracking
	t.mu.Lock()
	t.keys, t.items = nil, 0
	t.mu.Unlock()
	for _, c := range h.clients.snapshot() {
		if c.tracking() != nil {
			h.sendInvalidation(from, c, nil, false)
		}
	}
}

func (h *Handler) sendInvalidations(from *client, ids map[int64]struct{}, key []byte) {
	for id := range ids {
		if c := h.clients.lookup(id); c != nil {
			h.sendInvalidation(from, c, key, false)
		}
	}
}

// sendInvalidation sends target the invalidation of key (nil: all, after
// a flush), as Redis's sendTrackingMessage.
func (h *Handler) sendInvalidation(from, target *client, key []byte, bcast bool) {
	st := target.tracking()
	if st == nil || st.bcast != bcast || (st.noloop && target == from) {
		return
	}
	to := target
	if st.redirect != 0 {
		if to = h.clients.lookup(st.redirect); to == nil {
			if target.protoShown.Load() > 2 {
				var b []byte
				b = resp.AppendPushHeader(b, 2)
				b = resp.AppendBulkString(b, "tracking-redir-broken")
				b = resp.AppendInt(b, st.redirect)
				h.pushTo(from, target, b)
			}
			return
		}
	}
	var b []byte
	switch {
	case to.protoShown.Load() > 2:
		b = resp.AppendPushHeader(b, 2)
		b = resp.AppendBulk(b, invalidateName)
	case to != target && to.subscribed():
		b = resp.AppendArrayHeader(b, 3)
		b = resp.AppendBulkString(b, "message")
		b = resp.AppendBulk(b, trackingChan)
	default:
		return // RESP2 without a redirect: there is no way to tell it
	}
	if key == nil {
		// Redis's null in the tracking client's protocol, whoever
		// receives it.
		if target.protoShown.Load() > 2 {
			b = append(b, "_\r\n"...)
		} else {
			b = append(b, "$-1\r\n"...)
		}
	} else {
		b = resp.AppendArrayHeader(b, 1)
		b = resp.AppendBulk(b, key)
	}
	h.pushTo(from, to, b)
}

// pushTo writes msg to c: into from's replies when c is the client whose
// command is running (after its reply, as Redis), else through c's
// mailbox to its loop.
func (h *Handler) pushTo(from, c *client, msg []byte) {
	if c == from && from.out != nil {
		from.out = append(from.out, msg...)
		return
	}
	s := c.sess.Load()
	if s == nil {
		return
	}
	if sub := s.sub.Load(); sub != nil {
		sub.deliverRaw(msg, h.outLimits.pubsubHard.Load())
	}
}

// trackingInfo is INFO's tracking counts: keys remembered, (key, client)
// pairs, and BCAST prefixes.
func (h *Handler) trackingInfo() (keys, items, prefixes int) {
	t := &h.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.keys), t.items, len(t.prefixes)
}

// trackingFlags appends CLIENT LIST's tracking flags: t (on), R (its
// redirect is gone), B (BCAST).
func appendTrackingFlags(b []byte, cl *client) []byte {
	st := cl.tracking()
	if st == nil {
		return b
	}
	b = append(b, 't')
	if st.redirect != 0 && cl.h.clients.lookup(st.redirect) == nil {
		b = append(b, 'R')
	}
	if st.bcast {
		b = append(b, 'B')
	}
	return b
}

// deliverRaw queues msg, a whole message, for the subscriber's loop, as
// deliver does a Pub/Sub message: dropped once the client is closing or
// past its limit.
func (s *subscriber) deliverRaw(msg []byte, limit int64) {
	s.mu.Lock()
	if s.closed || s.overLimit || s.cl.conn == nil {
		s.mu.Unlock()
		return
	}
	s.box.write(msg)
	if pending := int64(s.box.size + s.cl.conn.OutputBacklog()); limit > 0 && pending > limit {
		s.overLimit, s.overBytes = true, pending
		dropped := s.box.take()
		dropped.each(func([]byte) {})
	}
	s.boxLen.Store(int64(s.box.size))
	schedule := !s.scheduled
	s.scheduled = true
	s.mu.Unlock()
	if schedule {
		_ = s.cl.conn.Run(s.flushFn)
	}
}
