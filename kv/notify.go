package kv

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/store"
)

// Keyspace notifications, as Redis 7.0 has them (its notify.c): with
// notify-keyspace-events naming classes of events, a command that changes
// a key publishes "__keyspace@<db>__:<key>" with the event's name (K) and
// "__keyevent@<db>__:<event>" with the key (E) through Pub/Sub, which is
// global across databases. The event names and the conditions under which
// each is published are Redis's, command by command: each command's
// function publishes its own events (cl.notify), after its write, in
// Redis's order. What happens outside a command's own logic is here:
//
//   - A key found expired by a command's lookup publishes "expired" before
//     the command runs (beforeKeys, which every command with keys runs
//     through: notifyWrapCommands), and a read that finds a key missing
//     publishes "keymiss" (class m). Both cost one flag test per command
//     while the classes are off.
//   - Keys the store removes on its own, expired by its active cycle or
//     evicted under maxmemory, reach storeRemoved through the store's
//     RemoveHook: "expired" and "evicted". The same hook and beforeKeys
//     send client-side caching's invalidations for them (tracking.go).
//   - "new" (class n) is published when a write creates a key, before the
//     command's event; commands learn that from the store (Update's nil
//     object) or, for strings, from a lookup made only while n is on.
//
// The flags live in the Pub/Sub registry (pubsubRegistry.events): a write
// tests one atomic word before doing anything else for notifications.

// Event classes, one bit each, as notify-keyspace-events names them.
const (
	evKeyspace uint32 = 1 << iota // K: __keyspace@<db>__:<key> channels
	evKeyevent                    // E: __keyevent@<db>__:<event> channels
	evGeneric                     // g: DEL, EXPIRE, RENAME, ...
	evString                      // $
	evList                        // l
	evSet                         // s
	evHash                        // h
	evZSet                        // z
	evExpired                     // x
	evEvicted                     // e
	evStream                      // t
	evKeyMiss                     // m
	evModule                      // d
	evNew                         // n

	// evAll is A: every class but m and n.
	evAll = evGeneric | evString | evList | evSet | evHash | evZSet | evExpired | evEvicted | evStream | evModule
)

// classLetters maps each letter to its classes, in the order Redis lists
// them in its error text.
var classLetters = []struct {
	letter byte
	class  uint32
}{
	{'A', evAll}, {'g', evGeneric}, {'$', evString}, {'l', evList}, {'s', evSet}, {'h', evHash}, {'z', evZSet},
	{'x', evExpired}, {'e', evEvicted}, {'K', evKeyspace}, {'E', evKeyevent}, {'t', evStream}, {'m', evKeyMiss},
	{'d', evModule}, {'n', evNew},
}

// errEventClass is CONFIG SET's reason for a letter that names no class,
// in Redis's words.
var errEventClass error = eventClassError{}

type eventClassError struct{}

func (eventClassError) Error() string {
	return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
}

// parseEventClasses reads a notify-keyspace-events value.
func parseEventClasses(v string) (uint32, error) {
	var flags uint32
	for i := 0; i < len(v); i++ {
		found := false
		for _, c := range classLetters {
			if c.letter == v[i] {
				flags |= c.class
				found = true
				break
			}
		}
		if !found {
			return 0, errEventClass
		}
	}
	return flags, nil
}

// formatEventClasses is CONFIG GET's form of flags, as Redis writes it: A
// for all of evAll (and then, as in Redis, no n), else the class letters;
// then K, E and m.
func formatEventClasses(flags uint32) string {
	var b strings.Builder
	if flags&evAll == evAll {
		b.WriteByte('A')
	} else {
		for _, c := range []struct {
			letter byte
			class  uint32
		}{{'g', evGeneric}, {'$', evString}, {'l', evList}, {'s', evSet}, {'h', evHash}, {'z', evZSet},
			{'x', evExpired}, {'e', evEvicted}, {'t', evStream}, {'d', evModule}, {'n', evNew}} {
			if flags&c.class != 0 {
				b.WriteByte(c.letter)
			}
		}
	}
	for _, c := range []struct {
		letter byte
		class  uint32
	}{{'K', evKeyspace}, {'E', evKeyevent}, {'m', evKeyMiss}} {
		if flags&c.class != 0 {
			b.WriteByte(c.letter)
		}
	}
	return b.String()
}

// keyspaceEvents is the notify-keyspace-events setting.
type keyspaceEvents struct {
	// active is the classes published: the setting's, or 0 while it has
	// neither K nor E and nothing can be published. Every emit tests it.
	active atomic.Uint32
	config atomic.Uint32 // the setting as given, for CONFIG GET

	// beforeKeys is whether commands run beforeKeys first: while x or m
	// is published or a client tracks keys. The one test every command
	// with keys makes; mu orders its updates.
	beforeKeys atomic.Bool
	mu         sync.Mutex
}

func (e *keyspaceEvents) set(flags uint32) {
	e.config.Store(flags)
	if flags&(evKeyspace|evKeyevent) == 0 {
		flags = 0
	}
	e.active.Store(flags)
}

// ownNotifySettings makes the settings table read and set
// notify-keyspace-events here, and has the store report the keys it
// removes on its own.
func (h *Handler) ownNotifySettings() {
	ev := &h.pubsub.events
	flags, _ := parseEventClasses(h.params.Get("notify-keyspace-events"))
	ev.set(flags)
	h.updateBeforeKeys()
	h.params.Own("notify-keyspace-events", config.Owner{
		Get: func() string { return formatEventClasses(ev.config.Load()) },
		Set: func(v string) {
			flags, _ := parseEventClasses(v)
			ev.set(flags)
			h.updateBeforeKeys()
		},
		Check: func(v string) error {
			_, err := parseEventClasses(v)
			return err
		},
	})
	h.shared.SetRemoveHook(h.storeRemoved)
}

// updateBeforeKeys recomputes keyspaceEvents.beforeKeys after the setting
// or the number of tracking clients changed.
func (h *Handler) updateBeforeKeys() {
	ev := &h.pubsub.events
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.beforeKeys.Store(ev.active.Load()&(evExpired|evKeyMiss) != 0 || h.tracking.active.Load() != 0)
}

// notifying reports whether events of class are published.
func (h *Handler) notifying(class uint32) bool { return h.pubsub.events.active.Load()&class != 0 }

// notify publishes event for key of cl's database, if its class is on.
func (cl *client) notify(class uint32, event string, key []byte) {
	if cl.h.pubsub.events.active.Load()&class != 0 {
		cl.h.publishEvent(cl, event, key, int(cl.selected.Load()))
	}
}

// notifyIn is notify for a key of database db (MOVE, COPY ... DB).
func (cl *client) notifyIn(db int, class uint32, event string, key []byte) {
	if cl.h.pubsub.events.active.Load()&class != 0 {
		cl.h.publishEvent(cl, event, key, db)
	}
}

// notifyDB publishes event for key of database db, if its class is on;
// from as publishEvent's.
func (h *Handler) notifyDB(from *client, db int, class uint32, event string, key []byte) {
	if h.pubsub.events.active.Load()&class != 0 {
		h.publishEvent(from, event, key, db)
	}
}

// keyIsNew reports, while class n is on, whether key is missing from cl's
// database: a write about to run then creates it and publishes "new".
// While n is off it reports false at the cost of a flag test.
func (cl *client) keyIsNew(key []byte) bool {
	return cl.h.pubsub.events.active.Load()&evNew != 0 && !cl.db().KeyExists(key)
}

// notifyNew publishes "new" for key if created: what a write that made the
// key publishes before its own event.
func (cl *client) notifyNew(created bool, key []byte) {
	if created {
		cl.notify(evNew, "new", key)
	}
}

// notifyRemoved publishes the event of a command that removed elements
// from a collection, then "del" if that emptied it and the key went.
func (cl *client) notifyRemoved(class uint32, event string, key []byte, emptied bool) {
	cl.notify(class, event, key)
	if emptied {
		cl.notify(evGeneric, "del", key)
	}
}

// notifyStored publishes the events of a *STORE command that wrote its
// result to dst: "new" if dst did not exist and then event; an empty
// result deletes dst instead, publishing "del" if it existed.
func (cl *client) notifyStored(class uint32, event string, dst []byte, stored, existed bool) {
	switch {
	case stored:
		cl.notifyNew(!existed, dst)
		cl.notify(class, event, dst)
	case existed:
		cl.notify(evGeneric, "del", dst)
	}
}

// publishEvent publishes the keyspace and keyevent messages of one event,
// as the K and E classes ask. from is the client whose command caused it
// (nil: the store), so that its own subscription gets the messages before
// the command's reply, as in Redis.
func (h *Handler) publishEvent(from *client, event string, key []byte, db int) {
	flags := h.pubsub.events.active.Load()
	var buf [128]byte
	var name [32]byte
	if flags&evKeyspace != 0 {
		ch := append(buf[:0], "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		h.publish(from, ch, append(name[:0], event...), false)
	}
	if flags&evKeyevent != 0 {
		ch := append(buf[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		h.publish(from, ch, key, false)
	}
}

// dbIndexOf returns the index of database s, -1 if it is none of h's now
// (a SWAPDB moved it meanwhile).
func (h *Handler) dbIndexOf(s *store.Store) int {
	for _, i := range h.madeIndexes() {
		if h.dbs[i].Load() == s {
			return i
		}
	}
	return -1
}

// storeRemoved is the store's RemoveHook: a key expired by the active
// cycle or evicted. It runs under the key's shard lock, so it only
// publishes, invalidates and touches watches, which take no store lock.
func (h *Handler) storeRemoved(s *store.Store, key []byte, evicted bool) {
	class, event := evExpired, "expired"
	if evicted {
		class, event = evEvicted, "evicted"
	}
	if h.notifying(class) {
		if db := h.dbIndexOf(s); db >= 0 {
			h.publishEvent(nil, event, key, db)
		}
	}
	if h.tracking.active.Load() != 0 {
		h.invalidate(nil, key)
	}
	// Its watchers' EXEC fails, as after Redis's signalModifiedKey on an
	// eviction or an expiry.
	if h.watches.active.Load() != 0 {
		if db := h.dbIndexOf(s); db >= 0 {
			h.touchWatched(int32(db), key)
		}
	}
}

// keymissRule says which key arguments of a command publish "keymiss"
// when missing: Redis's reads look their keys up with notification of a
// miss, and a few writes do too (the source keys of the *STORE commands,
// COPY's, the GET* commands').
type keymissRule uint8

const (
	missNone       keymissRule = iota
	missAll                    // every key: reads
	missFirst                  // the key at position 1 only
	missAfterFirst             // every key but the destination at position 1
)

// notifyWrap is what beforeKeys needs of each command, by statsID.
var notifyWrap []keymissRule

// keymissExceptions are the writes that publish keymiss, and the reads
// that do not (Redis's OBJECT and MEMORY USAGE look keys up without it).
var keymissExceptions = map[string]keymissRule{
	"getset": missFirst, "getdel": missFirst, "getex": missFirst, "copy": missFirst,
	"sinterstore": missAfterFirst, "sunionstore": missAfterFirst, "sdiffstore": missAfterFirst,
	"zunionstore": missAfterFirst, "zinterstore": missAfterFirst, "zdiffstore": missAfterFirst,
	"zrangestore": missAfterFirst, "bitop": missAfterFirst, "pfmerge": missAll,
	"geosearchstore": missAfterFirst, "georadius": missFirst, "georadiusbymember": missFirst,
	"object|encoding": missNone, "object|freq": missNone, "object|idletime": missNone,
	"object|refcount": missNone, "memory|usage": missNone,
}

func init() { notifyWrapCommands(commandsByID) }

// notifyWrapCommands has every command that looks keys up (a read or a
// write with keys; not the scripts, whose commands look their own keys
// up) run beforeKeys first.
func notifyWrapCommands(cmds []*command) {
	notifyWrap = make([]keymissRule, len(cmds))
	for _, cmd := range cmds {
		if !cmd.logged && !cmd.reads || cmd.firstKey == 0 && !cmd.movableKeys ||
			strings.HasPrefix(cmd.name, "eval") || strings.HasPrefix(cmd.name, "fcall") {
			continue
		}
		rule := missNone
		if cmd.reads {
			rule = missAll
		}
		if r, ok := keymissExceptions[cmd.name]; ok {
			rule = r
		}
		notifyWrap[cmd.statsID] = rule
		fn, c := cmd.fn, cmd
		cmd.fn = func(h *Handler, cl *client, args [][]byte) {
			if h.pubsub.events.beforeKeys.Load() {
				h.beforeKeys(cl, c, args)
			}
			fn(h, cl, args)
		}
	}
}

// beforeKeys does what Redis's key lookups do before cmd's own work: a key
// whose TTL ran out is removed, publishing "expired" and invalidating it
// for client-side caches, and a missing key of a read publishes "keymiss".
func (h *Handler) beforeKeys(cl *client, cmd *command, args [][]byte) {
	db := cl.db()
	dbIndex := int(cl.selected.Load())
	rule := missNone
	if h.notifying(evKeyMiss) && cmd.statsID < len(notifyWrap) {
		rule = notifyWrap[cmd.statsID]
	}
	// A write holds its keys' stripes (aof.go): its deletions are its own;
	// a read's enter the deletion log (expiry_log.go). A replica deletes
	// only for its own clients' writes, before they come here.
	write, replica := cmd.logged, h.followsPrimary()
	i := 0
	forEachKey(cmd, args, func(key []byte) {
		i++
		var reclaimed bool
		switch {
		case replica:
		case write:
			reclaimed = db.ReclaimExpired(key)
		default:
			reclaimed = db.ReclaimExpiredRead(key)
		}
		if reclaimed {
			if h.notifying(evExpired) {
				h.publishEvent(cl, "expired", key, dbIndex)
			}
			if h.tracking.active.Load() != 0 {
				h.invalidate(nil, key)
			}
		}
		if rule == missAll || rule == missFirst && i == 1 || rule == missAfterFirst && i > 1 {
			if !db.KeyExists(key) {
				h.publishEvent(cl, "keymiss", key, dbIndex)
			}
		}
	})
}
