package kv

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
	"github.com/shoalkv/shoal/store"
)

// Pub/sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH,
// SPUBLISH and PUBSUB, with Redis 7.0's replies in RESP2 and RESP3 (push
// messages).
//
// Delivery. The registry maps channels and patterns to subscribers; PUBLISH
// runs on the publisher's loop and appends the formatted message to each
// subscriber's mailbox under the mailbox's own lock, then, if no flush is
// pending, asks the subscriber's loop to run one (Conn.Execute): a burst of
// messages costs one task. Messages reach a subscriber in the order their
// PUBLISHes appended them, whatever the loops. The flush writes the mailbox
// to the Conn, whose limits are the pubsub class's (outlimits.go): past
// client-output-buffer-limit pubsub's hard limit unsent (a subscriber that
// does not read), or its soft limit for too long, the write closes the
// connection, as in Redis. The mailbox counts against the same hard limit
// with what the connection holds (its backlog), so a loop that does not
// keep up cannot hold a second limit's worth in the mailbox. A subscriber's own
// (UN)SUBSCRIBE replies and messages it publishes to itself first take the
// mailbox's content into the reply stream, so they keep Redis's order.

var _ = registerFamily(family{commands: []*command{
	{
		name: "subscribe", arity: -2, fn: cmdSubscribe,
		flags: "pubsub noscript loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Listens for messages published to channels.", "2.0.0", "pubsub", "O(N) where N is the number of channels to subscribe to."},
	},
	{
		name: "unsubscribe", arity: -1, fn: cmdUnsubscribe,
		flags: "pubsub noscript loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Stops listening to messages posted to channels.", "2.0.0", "pubsub", "O(N) where N is the number of clients already subscribed to a channel."},
	},
	{
		name: "psubscribe", arity: -2, fn: cmdPSubscribe,
		flags: "pubsub noscript loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Listens for messages published to channels that match one or more patterns.", "2.0.0", "pubsub", "O(N) where N is the number of patterns the client is already subscribed to."},
	},
	{
		name: "punsubscribe", arity: -1, fn: cmdPUnsubscribe,
		flags: "pubsub noscript loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Stops listening to messages published to channels that match one or more patterns.", "2.0.0", "pubsub", "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client)."},
	},
	{
		name: "ssubscribe", arity: -2, fn: cmdSSubscribe,
		flags: "pubsub noscript loading stale", acl: "@pubsub @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "not_key", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Listens for messages published to shard channels.", "7.0.0", "pubsub", "O(N) where N is the number of shard channels to subscribe to."},
	},
	{
		name: "sunsubscribe", arity: -1, fn: cmdSUnsubscribe,
		flags: "pubsub noscript loading stale", acl: "@pubsub @slow",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "not_key", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Stops listening to messages posted to shard channels.", "7.0.0", "pubsub", "O(N) where N is the number of clients already subscribed to a shard channel."},
	},
	{
		name: "publish", arity: 3, fn: cmdPublish,
		flags: "pubsub loading stale fast", acl: "@pubsub @fast",
		doc: commandDoc{"Posts a message to a channel.", "2.0.0", "pubsub", "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client)."},
	},
	{
		name: "spublish", arity: 3, fn: cmdSPublish,
		flags: "pubsub loading stale fast", acl: "@pubsub @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "not_key", index: 1, keyStep: 1}},
		doc: commandDoc{"Post a message to a shard channel", "7.0.0", "pubsub", "O(N) where N is the number of clients subscribed to the receiving shard channel."},
	},
	{
		name: "pubsub", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"A container for Pub/Sub commands.", "2.8.0", "pubsub", "Depends on subcommand."},
	},
	{
		name: "pubsub|channels", arity: -2, fn: cmdPubsubChannels,
		flags: "pubsub loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Returns the active channels.", "2.8.0", "pubsub", "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)"},
	},
	{
		name: "pubsub|numsub", arity: -2, fn: cmdPubsubNumsub,
		flags: "pubsub loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Returns a count of subscribers to channels.", "2.8.0", "pubsub", "O(N) for the NUMSUB subcommand, where N is the number of requested channels"},
	},
	{
		name: "pubsub|numpat", arity: 2, fn: cmdPubsubNumpat,
		flags: "pubsub loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Returns a count of unique pattern subscriptions.", "2.8.0", "pubsub", "O(1)"},
	},
	{
		name: "pubsub|shardchannels", arity: -2, fn: cmdPubsubShardChannels,
		flags: "pubsub loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Returns the active shard channels.", "7.0.0", "pubsub", "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels)."},
	},
	{
		name: "pubsub|shardnumsub", arity: -2, fn: cmdPubsubShardNumsub,
		flags: "pubsub loading stale", acl: "@pubsub @slow",
		doc: commandDoc{"Returns the count of subscribers of shard channels.", "7.0.0", "pubsub", "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels"},
	},
	{
		name: "pubsub|help", arity: 2, fn: cmdPubsubHelp,
		flags: "loading stale", acl: "@slow",
		doc: commandDoc{"Returns helpful text about the different subcommands.", "6.2.0", "pubsub", "O(1)"},
	},
}})

// space is one of the three namespaces of subscriptions.
type space uint8

const (
	spaceChannel space = iota
	spacePattern
	spaceShard
)

// Names of the replies and messages, by space.
var (
	subscribeName   = [...]string{"subscribe", "psubscribe", "ssubscribe"}
	unsubscribeName = [...]string{"unsubscribe", "punsubscribe", "sunsubscribe"}
	messageName     = [...]string{"message", "pmessage", "smessage"}
)

// subscriberSet is the subscribers of one channel or pattern.
type subscriberSet map[*subscriber]struct{}

// patternEntry is one subscribed pattern, also kept in a slice so PUBLISH
// matches against it without converting the map key.
type patternEntry struct {
	pattern []byte
	subs    subscriberSet
	index   int // in pubsubRegistry.patternList
}

// pubsubRegistry is every subscription of the server.
type pubsubRegistry struct {
	mu          sync.RWMutex
	channels    map[string]subscriberSet
	shards      map[string]subscriberSet
	patterns    map[string]*patternEntry
	patternList []*patternEntry

	// events is notify-keyspace-events: which keyspace notifications
	// commands publish here (notify.go).
	events keyspaceEvents
}

// subscriber is a client's side of pub/sub.
type subscriber struct {
	cl *client

	// Loop goroutine only.
	channels [3]map[string]struct{} // by space
	class    int                    // the output class the Conn was last given (noteClass)

	counts [3]atomic.Int32 // by space, for CLIENT LIST and the subscribed context
	boxLen atomic.Int64    // box.size, for CLIENT LIST's omem and maxmemory-clients

	mu        sync.Mutex // guards what follows
	box       mailbox    // messages not yet handed to the Conn
	scheduled bool       // a flush is queued on the loop
	closed    bool       // unsubscribed from everything at close or RESET
	overLimit bool       // the box passed the hard limit: the connection closes
	overBytes int64      // the box and the Conn's backlog then
	flushFn   func()
}

// subscribed reports whether the client has any subscription: Redis's
// CLIENT_PUBSUB.
func (s *subscriber) subscribed() bool {
	return s != nil && s.counts[0].Load()+s.counts[1].Load()+s.counts[2].Load() > 0
}

// subscribed reports whether cl is in the subscribed context.
func (cl *client) subscribed() bool {
	s := cl.sess.Load()
	return s != nil && s.sub.Load().subscribed()
}

// subscriberOf returns cl's subscriber, creating it.
func (cl *client) subscriberOf() *subscriber {
	s := cl.sessionOf()
	sub := s.sub.Load()
	if sub == nil {
		sub = &subscriber{cl: cl}
		sub.flushFn = sub.flush
		s.sub.Store(sub)
	}
	sub.mu.Lock()
	sub.closed = false
	sub.mu.Unlock()
	return sub
}

// total is the count Redis's (P)(UN)SUBSCRIBE replies show: channels and
// patterns together, or shard channels alone.
func (s *subscriber) total(sp space) int64 {
	if sp == spaceShard {
		return int64(len(s.channels[spaceShard]))
	}
	return int64(len(s.channels[spaceChannel]) + len(s.channels[spacePattern]))
}

// writeSubReply appends one (un)subscribe confirmation: a push in RESP3.
func writeSubReply(cl *client, kind string, name []byte, null bool, count int64) {
	if cl.proto >= 3 {
		cl.out = resp.AppendPushHeader(cl.out, 3)
	} else {
		cl.out = resp.AppendArrayHeader(cl.out, 3)
	}
	cl.out = resp.AppendBulkString(cl.out, kind)
	if null {
		cl.writeNull()
	} else {
		cl.out = resp.AppendBulk(cl.out, name)
	}
	cl.out = resp.AppendInt(cl.out, count)
}

func cmdSubscribe(h *Handler, cl *client, args [][]byte)  { h.subscribe(cl, args[1:], spaceChannel) }
func cmdPSubscribe(h *Handler, cl *client, args [][]byte) { h.subscribe(cl, args[1:], spacePattern) }
func cmdSSubscribe(h *Handler, cl *client, args [][]byte) { h.subscribe(cl, args[1:], spaceShard) }
func cmdUnsubscribe(h *Handler, cl *client, args [][]byte) {
	h.unsubscribe(cl, args[1:], spaceChannel)
}
func cmdPUnsubscribe(h *Handler, cl *client, args [][]byte) {
	h.unsubscribe(cl, args[1:], spacePattern)
}
func cmdSUnsubscribe(h *Handler, cl *client, args [][]byte) {
	h.unsubscribe(cl, args[1:], spaceShard)
}

func (h *Handler) subscribe(cl *client, names [][]byte, sp space) {
	sub := cl.subscriberOf()
	sub.drainInto(cl)
	for _, name := range names {
		mine := sub.channels[sp]
		if mine == nil {
			mine = make(map[string]struct{})
			sub.channels[sp] = mine
		}
		if _, ok := mine[string(name)]; !ok {
			key := string(name)
			mine[key] = struct{}{}
			sub.counts[sp].Add(1)
			h.pubsub.add(sp, key, sub)
		}
		writeSubReply(cl, subscribeName[sp], name, false, sub.total(sp))
	}
	cl.noteClass(sub)
}

func (h *Handler) unsubscribe(cl *client, names [][]byte, sp space) {
	var sub *subscriber
	if s := cl.sess.Load(); s != nil {
		sub = s.sub.Load()
	}
	if sub != nil {
		sub.drainInto(cl)
		defer cl.noteClass(sub)
	}
	if len(names) == 0 {
		if sub == nil || len(sub.channels[sp]) == 0 {
			count := int64(0)
			if sub != nil {
				count = sub.total(sp)
			}
			writeSubReply(cl, unsubscribeName[sp], nil, true, count)
			return
		}
		all := make([]string, 0, len(sub.channels[sp]))
		for name := range sub.channels[sp] {
			all = append(all, name)
		}
		for _, name := range all {
			h.dropSubscription(sub, sp, name)
			writeSubReply(cl, unsubscribeName[sp], []byte(name), false, sub.total(sp))
		}
		return
	}
	for _, name := range names {
		count := int64(0)
		if sub != nil {
			if _, ok := sub.channels[sp][string(name)]; ok {
				h.dropSubscription(sub, sp, string(name))
			}
			count = sub.total(sp)
		}
		writeSubReply(cl, unsubscribeName[sp], name, false, count)
	}
}

func (h *Handler) dropSubscription(sub *subscriber, sp space, name string) {
	delete(sub.channels[sp], name)
	sub.counts[sp].Add(-1)
	h.pubsub.remove(sp, name, sub)
}

// endSubscriptions drops every subscription of sub without replies (close,
// RESET); messages already in its mailbox are still written.
func (h *Handler) endSubscriptions(sub *subscriber) {
	for sp := range sub.channels {
		for name := range sub.channels[sp] {
			h.pubsub.remove(space(sp), name, sub)
		}
		sub.channels[sp] = nil
		sub.counts[sp].Store(0)
	}
	sub.mu.Lock()
	sub.closed = true
	sub.mu.Unlock()
	sub.flushOrDrop()
	sub.cl.noteClass(sub)
}

// flushOrDrop makes sure what s's mailbox holds is written, after a RESET,
// or given back if the connection has closed: then no flush runs, and the
// chunks are outside the garbage collector's reach. s is closed: no
// message joins the mailbox now.
func (s *subscriber) flushOrDrop() {
	s.mu.Lock()
	s.box.setSlow(false) // a flush after a RESET finds out again
	empty := s.box.size == 0
	s.mu.Unlock()
	if empty || (s.cl.conn != nil && s.cl.conn.Run(s.flushFn) == nil) {
		return
	}
	s.mu.Lock()
	s.box.drop()
	s.boxLen.Store(0)
	s.mu.Unlock()
}

// endSession ends a client's transaction, watches and subscriptions: on
// close and on RESET.
func (h *Handler) endSession(cl *client, s *session) {
	if s.multi || len(s.watched) > 0 {
		h.endTransaction(s)
	}
	if sub := s.sub.Load(); sub != nil {
		h.endSubscriptions(sub)
	}
}

func (r *pubsubRegistry) add(sp space, name string, sub *subscriber) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sp == spacePattern {
		if r.patterns == nil {
			r.patterns = make(map[string]*patternEntry)
		}
		e := r.patterns[name]
		if e == nil {
			e = &patternEntry{pattern: []byte(name), subs: subscriberSet{}, index: len(r.patternList)}
			r.patterns[name] = e
			r.patternList = append(r.patternList, e)
		}
		e.subs[sub] = struct{}{}
		return
	}
	m := r.channelMap(sp)
	if *m == nil {
		*m = make(map[string]subscriberSet)
	}
	set := (*m)[name]
	if set == nil {
		set = subscriberSet{}
		(*m)[name] = set
	}
	set[sub] = struct{}{}
}

func (r *pubsubRegistry) remove(sp space, name string, sub *subscriber) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sp == spacePattern {
		e := r.patterns[name]
		if e == nil {
			return
		}
		delete(e.subs, sub)
		if len(e.subs) == 0 {
			last := r.patternList[len(r.patternList)-1]
			r.patternList[e.index] = last
			last.index = e.index
			r.patternList[len(r.patternList)-1] = nil
			r.patternList = r.patternList[:len(r.patternList)-1]
			delete(r.patterns, name)
		}
		return
	}
	m := *r.channelMap(sp)
	if set := m[name]; set != nil {
		delete(set, sub)
		if len(set) == 0 {
			delete(m, name)
		}
	}
}

func (r *pubsubRegistry) channelMap(sp space) *map[string]subscriberSet {
	if sp == spaceShard {
		return &r.shards
	}
	return &r.channels
}

// counts returns the numbers INFO stats shows: channels, patterns and
// shard channels with at least one subscriber.
func (r *pubsubRegistry) counts() (channels, patterns, shards int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.channels), len(r.patterns), len(r.shards)
}

func cmdPublish(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(h.publish(cl, args[1], args[2], false))
	h.propagatePublish(cl, args, false)
}

func cmdSPublish(h *Handler, cl *client, args [][]byte) {
	cl.writeInt(h.publish(cl, args[1], args[2], true))
	h.propagatePublish(cl, args, true)
}

// propagatePublish sends a PUBLISH or SPUBLISH on, as Redis 7.0 does: in a
// cluster to the other nodes over the bus (cluster_pubsub.go); otherwise
// to the replicas, in the replication stream but not the append-only file
// (forceCommandPropagation with PROPAGATE_REPL), so that subscribers of a
// replica get what is published on its primary. Within EXEC or a script
// the record goes ahead of the transaction's, where Redis has it inside.
func (h *Handler) propagatePublish(cl *client, args [][]byte, shard bool) {
	if h.cluster != nil {
		h.clusterPublish(args[1], args[2], shard)
		return
	}
	if h.primary.feeding.Load() {
		h.feedStream(int(cl.selected.Load()), aof.AppendCommand(nil, args...))
	}
}

// publish delivers msg to the subscribers of channel (and, unless shard, of
// the patterns it matches) and returns how many deliveries it made.
func (h *Handler) publish(from *client, channel, msg []byte, shard bool) int64 {
	r := &h.pubsub
	limit := h.outLimits.pubsubHard.Load()
	sp := spaceChannel
	if shard {
		sp = spaceShard
	}
	n := int64(0)
	r.mu.RLock()
	for sub := range (*r.channelMap(sp))[string(channel)] {
		if sub.deliver(from, sp, nil, channel, msg, limit) {
			n++
		}
	}
	if !shard {
		for _, e := range r.patternList {
			if !store.Match(e.pattern, channel) {
				continue
			}
			for sub := range e.subs {
				if sub.deliver(from, spacePattern, e.pattern, channel, msg, limit) {
					n++
				}
			}
		}
	}
	r.mu.RUnlock()
	return n
}

// appendMessage appends one message in the subscriber's protocol.
func appendMessage(b []byte, proto int32, sp space, pattern, channel, msg []byte) []byte {
	b = appendMessageHead(b, proto, sp, pattern, channel, len(msg))
	b = append(b, msg...)
	return append(b, crlf...)
}

// appendMessageHead appends a message up to its payload: the header, the
// kind, the pattern and channel, and the payload's length.
func appendMessageHead(b []byte, proto int32, sp space, pattern, channel []byte, msgLen int) []byte {
	n := 3
	if sp == spacePattern {
		n = 4
	}
	if proto >= 3 {
		b = resp.AppendPushHeader(b, n)
	} else {
		b = resp.AppendArrayHeader(b, n)
	}
	b = resp.AppendBulkString(b, messageName[sp])
	if sp == spacePattern {
		b = resp.AppendBulk(b, pattern)
	}
	b = resp.AppendBulk(b, channel)
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(msgLen), 10)
	return append(b, crlf...)
}

var crlf = []byte("\r\n")

// deliver hands one message to s and reports whether it took it (not if
// s is closing). A message to the publishing client itself goes straight
// into its replies (after what its mailbox holds), where Redis puts it:
// before PUBLISH's own reply.
func (s *subscriber) deliver(from *client, sp space, pattern, channel, msg []byte, limit int64) bool {
	proto := s.cl.protoShown.Load()
	if s.cl == from && from.out != nil {
		s.drainInto(from)
		from.out = appendMessage(from.out, proto, sp, pattern, channel, msg)
		return true
	}
	s.mu.Lock()
	if s.closed || s.overLimit || s.cl.conn == nil {
		s.mu.Unlock()
		return false
	}
	var head [128]byte
	s.box.write(appendMessageHead(head[:0], proto, sp, pattern, channel, len(msg)))
	s.box.write(msg)
	s.box.write(crlf)
	if pending := int64(s.box.size + s.cl.conn.OutputBacklog()); limit > 0 && pending > limit {
		s.overLimit, s.overBytes = true, pending
		s.box.drop()
	}
	s.boxLen.Store(int64(s.box.size))
	schedule := !s.scheduled
	s.scheduled = true
	s.mu.Unlock()
	if schedule {
		_ = s.cl.conn.Run(s.flushFn) // fails only once the connection is closed
	}
	return true
}

// drainInto moves the mailbox into cl's replies; the client's loop only.
func (s *subscriber) drainInto(cl *client) {
	s.mu.Lock()
	if s.box.size > 0 {
		s.box.each(func(p []byte) { cl.out = append(cl.out, p...) })
		s.boxLen.Store(0)
	}
	s.mu.Unlock()
}

// flush runs on the subscriber's loop: it writes the mailbox to the Conn,
// a chunk at a time, each leaving the mailbox only as it is written. So
// deliver's check of the mailbox and the backlog together sees every byte
// pending but the chunk being copied, and a chunk goes back as its copy is
// made: a mailbox that grew while the loop lagged costs nothing once in the
// backlog. The chunks there when the flush starts are its to write; a
// later message schedules the next flush, so a subscriber that keeps up
// with a fast publisher does not keep its loop from the other clients.
func (s *subscriber) flush() {
	c := s.cl.conn
	s.mu.Lock()
	s.scheduled = false
	for n := len(s.box.chunks) - s.box.head; ; n-- {
		if s.overLimit {
			pending := s.overBytes
			s.mu.Unlock()
			// Closed at once; its subscriptions end as it closes, so
			// PUBLISH stops counting it, as Redis stops at once for a
			// client it frees.
			c.Abort(fmt.Errorf("%w: %d bytes pending with its mailbox, hard limit %d", ErrOutputLimit, pending, s.cl.h.mailboxHard(s.class)))
			return
		}
		if n == 0 {
			s.mu.Unlock()
			return
		}
		ch, size, ok := s.box.pop()
		if !ok { // emptied by another: nothing is left to write
			s.mu.Unlock()
			return
		}
		s.boxLen.Store(int64(s.box.size))
		s.mu.Unlock()
		// Each chunk is checked against the limits as it is written, so
		// a subscriber past its limit is closed at the first that finds
		// it so (the writes after that fail at once).
		_, _ = c.Write(ch.buf[:size])
		slow := c.OutputBacklog() > 0 // the copy is in the backlog
		putChunk(ch, slow)
		s.mu.Lock()
		s.box.setSlow(slow)
	}
}

// pingSubscribed is PING in the RESP2 subscribed context: ["pong", arg].
func pingSubscribed(cl *client, args [][]byte) {
	if len(args) > 2 {
		cl.writeError(errWrongArgs("ping"))
		return
	}
	cl.writeArray(2)
	cl.writeBulkStr("pong")
	if len(args) == 2 {
		cl.writeBulk(args[1])
	} else {
		cl.writeBulkStr("")
	}
}

func cmdPubsubChannels(h *Handler, cl *client, args [][]byte) {
	h.pubsubChannels(cl, args, spaceChannel, "CHANNELS")
}

func cmdPubsubShardChannels(h *Handler, cl *client, args [][]byte) {
	h.pubsubChannels(cl, args, spaceShard, "SHARDCHANNELS")
}

func (h *Handler) pubsubChannels(cl *client, args [][]byte, sp space, sub string) {
	if len(args) > 3 {
		cl.writeError("ERR unknown subcommand or wrong number of arguments for '" + sub + "'. Try PUBSUB HELP.")
		return
	}
	var pattern []byte
	if len(args) == 3 {
		pattern = args[2]
	}
	r := &h.pubsub
	var names []string
	r.mu.RLock()
	for name := range *r.channelMap(sp) {
		if pattern == nil || store.Match(pattern, []byte(name)) {
			names = append(names, name)
		}
	}
	r.mu.RUnlock()
	sort.Strings(names)
	cl.writeArray(len(names))
	for _, name := range names {
		cl.writeBulkStr(name)
	}
}

func cmdPubsubNumsub(h *Handler, cl *client, args [][]byte) {
	h.pubsubNumsub(cl, args, spaceChannel)
}

func cmdPubsubShardNumsub(h *Handler, cl *client, args [][]byte) {
	h.pubsubNumsub(cl, args, spaceShard)
}

func (h *Handler) pubsubNumsub(cl *client, args [][]byte, sp space) {
	r := &h.pubsub
	cl.writeArray(2 * (len(args) - 2))
	r.mu.RLock()
	defer r.mu.RUnlock()
	m := *r.channelMap(sp)
	for _, name := range args[2:] {
		cl.writeBulk(name)
		cl.writeInt(int64(len(m[string(name)])))
	}
}

func cmdPubsubNumpat(h *Handler, cl *client, _ [][]byte) {
	_, patterns, _ := h.pubsub.counts()
	cl.writeInt(int64(patterns))
}

func cmdPubsubHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "PUBSUB", []string{
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	})
}

// appendSessionInfo appends CLIENT LIST's flags, db, sub, psub, ssub and
// multi fields for cl, from its session's and its own atomics.
func appendSessionInfo(b []byte, cl *client) []byte {
	s := cl.sess.Load()
	if s == nil {
		b = append(b, " flags="...)
		switch {
		case cl.isPrimaryLink():
			b = append(b, 'M')
		case cl.unixSocket:
			b = append(b, 'U')
		default:
			b = append(b, 'N')
		}
		b = append(b, " db="...)
		b = strconv.AppendInt(b, int64(cl.selected.Load()), 10)
		return append(b, " sub=0 psub=0 ssub=0 multi=-1"...)
	}
	var counts [3]int32
	if sub := s.sub.Load(); sub != nil {
		for i := range counts {
			counts[i] = sub.counts[i].Load()
		}
	}
	queued := s.queued.Load()
	b = append(b, " flags="...)
	n := len(b)
	if s.monitor.Load() {
		b = append(b, 'O')
	}
	if cl.h != nil && cl.h.isReplica(cl) {
		b = append(b, 'S')
	}
	if cl.isPrimaryLink() {
		b = append(b, 'M')
	}
	if counts[0]+counts[1]+counts[2] > 0 {
		b = append(b, 'P')
	}
	if queued >= 0 {
		b = append(b, 'x')
	}
	b = appendTrackingFlags(b, cl)
	if s.casDirty.Load() {
		b = append(b, 'd')
	}
	if cl.unixSocket {
		b = append(b, 'U')
	}
	if s.noEvict.Load() {
		b = append(b, 'e')
	}
	if len(b) == n {
		b = append(b, 'N')
	}
	b = append(b, " db="...)
	b = strconv.AppendInt(b, int64(cl.selected.Load()), 10)
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, int64(counts[0]), 10)
	b = append(b, " psub="...)
	b = strconv.AppendInt(b, int64(counts[1]), 10)
	b = append(b, " ssub="...)
	b = strconv.AppendInt(b, int64(counts[2]), 10)
	b = append(b, " multi="...)
	return strconv.AppendInt(b, int64(queued), 10)
}

// clientType is the TYPE CLIENT LIST and CLIENT KILL filter on: pubsub for
// a client in the subscribed context, else normal.
func clientTypeIs(cl *client, t []byte) bool {
	if cl.isPrimaryLink() {
		return ascii.EqualFold(t, "MASTER") // a replica's primary (repl_apply.go)
	}
	if cl.h != nil && cl.h.isReplica(cl) {
		return ascii.EqualFold(t, "REPLICA") || ascii.EqualFold(t, "SLAVE")
	}
	if cl.subscribed() {
		return ascii.EqualFold(t, "PUBSUB")
	}
	return ascii.EqualFold(t, "NORMAL")
}
