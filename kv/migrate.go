package kv

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password] [AUTH2 username password] [KEYS key ...], as
// redis-server 7.0: the keys' DUMP payloads go to the target as pipelined
// RESTOREs (after AUTH and SELECT), and each key the target restored is
// deleted here unless COPY, logged as one DEL.
//
// Redis does the network I/O inside the command, blocking the whole
// server for up to the timeout. Shoal blocks nothing: the command dumps
// the keys on its loop, parks the client (a waiter in no queue: no write
// serves it, finishWait answers it) and does the dial, the write and the
// reads in a goroutine (migrate_conn.go). The deletes then happen on that
// goroutine with the world stopped (stopWorld, as for EXEC), under the
// keys' AOF stripes, and the reply goes back to the client's loop through
// the blocking commands' finishWait, which also holds it for appendfsync
// always.
//
// Other clients run while the target works, so a key may change between
// its dump and its delete, which cannot happen in Redis. A key whose value
// or expiry is no longer the one sent is kept: the target has the old
// value and this server the new one, as if the MIGRATE had been a COPY
// and the other write had come after it. Deleting it would lose that
// write; nothing else is consistent with some order of the two commands.
//
// Inside EXEC or a script (which stop the world) and for a client without
// a connection there is nothing to park: there the I/O is done in the
// command, on the loop, holding every other loop as Redis holds its
// server; the DEL is logged there too, inside the transaction's MULTI.

var _ = registerFamily(family{commands: []*command{
	{
		name: "migrate", arity: -6, fn: cmdMigrate, log: logEffect,
		flags: "write movablekeys", acl: "@keyspace @write @slow @dangerous", tips: "nondeterministic_output",
		firstKey: 3, lastKey: 3, step: 1, keysOf: migrateKeys, keySpecs: []keySpec{
			{flags: "RW access delete", index: 3, keyStep: 1},
			{flags: "RW access delete incomplete", keyword: "KEYS", from: -2, lastKey: -1, keyStep: 1},
		},
		doc: commandDoc{"Atomically transfers a key from one Redis instance to another.", "2.6.0", "generic",
			"This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed."},
	},
	{
		name: "asking", arity: 1, fn: cmdAsking,
		flags: "fast", acl: "@fast @connection",
		doc: commandDoc{"Signals that a cluster client is following an -ASK redirect.", "3.0.0", "cluster", "O(1)"},
	},
}})

// MIGRATE's errors, as redis-server 7.0 words them (the connecting one
// says "client" there too).
const (
	errMigrateKeysArg   = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
	errMigrateConnect   = "IOERR error or timeout connecting to the client"
	errMigrateWriting   = "IOERR error or timeout writing to target instance"
	errMigrateReading   = "IOERR error or timeout reading to target instance"
	errTargetReplied    = "ERR Target instance replied with error: "
	errClusterDisabled  = "ERR This instance has cluster support disabled"
	migrateDefaultMilli = 1000 // a timeout <= 0 means this, as in Redis
)

// migrateKey is one key to send: its name, its DUMP payload and its
// expiry (unix ms, -1 for none) when it was dumped.
type migrateKey struct {
	key, payload []byte
	expireAt     int64
}

// migration is one MIGRATE's request, copied out of the arguments so that
// a goroutine may carry it.
type migration struct {
	host, port    string
	asking        bool  // cluster mode: RESTORE-ASKING, which an importing target serves, as Redis sends
	db            int64 // the target's database
	timeout       time.Duration
	copy, replace bool
	auth          bool
	user, pass    []byte // user only with AUTH2
	srcDB         int    // the source database: the client's when it ran
	keys          []migrateKey
}

// migrateResult is what the target answered: the client's reply and the
// keys it restored (indexes into migration.keys), in the order sent.
type migrateResult struct {
	reply []byte
	acked []int
}

// migrateKeys is Redis 7.0's migrateGetKeys: the key, or the keys after
// KEYS (none when the key argument is not empty then), skipping the
// arguments of AUTH and AUTH2 on the way; a KEYS last of all is not
// looked at.
func migrateKeys(dst []int, args [][]byte) []int {
	for i := 6; i < len(args)-1; i++ {
		switch {
		case ascii.EqualFold(args[i], "keys"):
			if len(args[3]) != 0 {
				return dst
			}
			for j := i + 1; j < len(args); j++ {
				dst = append(dst, j)
			}
			return dst
		case ascii.EqualFold(args[i], "auth"):
			i++
		case ascii.EqualFold(args[i], "auth2"):
			i += 2
		}
	}
	if len(args) > 3 {
		dst = append(dst, 3)
	}
	return dst
}

// parseMigrate reads MIGRATE's arguments in Redis's order: the options
// first, then the timeout, then the database.
func parseMigrate(args [][]byte) (*migration, [][]byte, string) {
	m := &migration{host: string(args[1]), port: string(args[2])}
	keys := args[3:4]
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case ascii.EqualFold(args[j], "copy"):
			m.copy = true
		case ascii.EqualFold(args[j], "replace"):
			m.replace = true
		case ascii.EqualFold(args[j], "auth"):
			if more < 1 {
				return nil, nil, errSyntax
			}
			j++
			m.auth, m.user, m.pass = true, nil, append([]byte(nil), args[j]...)
		case ascii.EqualFold(args[j], "auth2"):
			if more < 2 {
				return nil, nil, errSyntax
			}
			m.auth = true
			m.user = append([]byte(nil), args[j+1]...)
			m.pass = append([]byte(nil), args[j+2]...)
			j += 2
		case ascii.EqualFold(args[j], "keys"):
			if len(args[3]) != 0 {
				return nil, nil, errMigrateKeysArg
			}
			keys = args[j+1:]
			j = len(args)
		default:
			return nil, nil, errSyntax
		}
	}
	timeout, ok := ascii.ParseInt(args[5])
	if !ok {
		return nil, nil, errNotInteger
	}
	db, ok := ascii.ParseInt(args[4])
	if !ok {
		return nil, nil, errNotInteger
	}
	if timeout <= 0 {
		timeout = migrateDefaultMilli
	}
	m.timeout = time.Duration(min(timeout, int64(time.Hour/time.Millisecond)*24*365)) * time.Millisecond
	m.db = db
	return m, keys, ""
}

func cmdMigrate(h *Handler, cl *client, args [][]byte) {
	m, keys, errText := parseMigrate(args)
	if errText != "" {
		cl.writeError(errText)
		return
	}
	if h.cluster != nil {
		m.asking = true
	}
	m.srcDB = int(cl.selected.Load())
	db := cl.db()
	ds := dumpPool.Get().(*dumpScratch)
	defer dumpPool.Put(ds)
	for _, k := range keys {
		payload, found, err := appendDump(db, nil, k, ds)
		if err != nil {
			cl.writeError("ERR " + err.Error())
			return
		}
		if !found {
			continue
		}
		m.keys = append(m.keys, migrateKey{key: append([]byte(nil), k...), payload: payload, expireAt: db.ExpireTime(k)})
	}
	if len(m.keys) == 0 {
		cl.writeStatus("NOKEY")
		return
	}
	if cl.conn == nil || cl.inExec() {
		res := h.transfer(m)
		if isErrorLine(res.reply) {
			cl.writeError(strings.TrimSuffix(string(res.reply[1:]), "\r\n"))
		} else {
			cl.out = append(cl.out, res.reply...)
		}
		h.applyMigrate(m, res.acked, cl)
		return
	}
	// Parked as a blocked client, but in no key's queue: its state is
	// done from the start, so that a disconnect (cancelWait) has nothing
	// to take out of the queues and CLIENT UNBLOCK does not find it.
	w := &waiter{cl: cl, state: waitDone}
	s := cl.sessionOf()
	quiet := s.reply != replyOn // CLIENT REPLY OFF or SKIP: dispatch suppresses nothing of a later reply
	s.blocked = w
	h.blocking.blocked.Add(1)
	var counters *commandCounters
	if cmd := cl.lastCmd.Load(); cmd != nil && cl.stats != nil {
		counters = &cl.stats.cmds[cmd.statsID]
	}
	go func() {
		res := h.transfer(m)
		end := h.applyMigrate(m, res.acked, nil)
		if isErrorLine(res.reply) {
			// Counted as it would have been in the command: the call
			// failed, and INFO's error replies have one more.
			h.errors.count(strings.TrimSuffix(string(res.reply[1:]), "\r\n"))
			if counters != nil {
				counters.failed.Add(1)
			}
		}
		if quiet {
			res.reply = nil
		}
		_ = cl.conn.Run(func() { h.finishWait(w, res.reply, end) })
	}()
}

// applyMigrate deletes the keys the target restored, unless COPY, when
// they still hold what was sent, and logs the DEL. With cl nil it runs on
// the migration's goroutine and stops the world for it; otherwise it runs
// in cl's command, inside EXEC or a script, which stopped it already. It
// returns the AOF offset after its record (0 for none).
func (h *Handler) applyMigrate(m *migration, acked []int, cl *client) int64 {
	if m.copy || len(acked) == 0 {
		return 0
	}
	if cl == nil {
		defer h.resumeWorld(nil, h.stopWorld(nil))
		select {
		case <-h.done: // closed while the target worked: its stores may be gone
			return 0
		default:
		}
	}
	logged := h.aof != nil || h.primary.feeding.Load() // to the file or to replicas
	if logged && cl == nil {
		stripes := h.lockKeyStripes(m, acked)
		defer h.unlockKeyStripes(stripes)
		if h.rw.active.Load() {
			h.copyStripesBeforeWrite(stripes) // before the deletes: a rewrite under way copies the values first
		}
	}
	db := h.db(m.srcDB)
	ds := dumpPool.Get().(*dumpScratch)
	defer dumpPool.Put(ds)
	var deleted [][]byte
	for _, i := range acked {
		k := m.keys[i].key
		if !m.unchanged(db, i, ds) || db.Del([][]byte{k}) == 0 {
			continue
		}
		deleted = append(deleted, k)
		h.touchKeyIn(m.srcDB, k)
		if h.pubsub.events.active.Load()&evGeneric != 0 {
			h.publishEvent(cl, "del", k, m.srcDB)
		}
	}
	if !logged || len(deleted) == 0 {
		return 0
	}
	rec := aof.AppendCommand(nil, append([][]byte{[]byte("DEL")}, deleted...)...)
	var multi []byte
	if cl != nil {
		multi = cl.execLogPrefix() // MULTI before an EXEC's or a script's first record, in both logs
	}
	if h.primary.feeding.Load() {
		h.feedRecords(m.srcDB, multi, rec) // primary.go
	}
	if h.aof == nil {
		return 0
	}
	buf := append(h.aof.Select(h.aof.Begin(), m.srcDB), multi...)
	end := h.aof.End(append(buf, rec...))
	if cl != nil {
		if cl.aof == nil {
			cl.aof = &aofState{}
		}
		cl.aof.end = end
	}
	return end
}

// unchanged reports whether m.keys[i] still holds the value and expiry
// it was dumped with.
func (m *migration) unchanged(db *store.Store, i int, ds *dumpScratch) bool {
	mk := &m.keys[i]
	payload, found, err := appendDump(db, nil, mk.key, ds)
	return err == nil && found && string(payload) == string(mk.payload) && db.ExpireTime(mk.key) == mk.expireAt
}

// lockKeyStripes locks the AOF stripes of the keys in ascending order,
// as callLogged would for a command with these keys.
func (h *Handler) lockKeyStripes(m *migration, keys []int) []int {
	var s []int
	for _, i := range keys {
		s = append(s, h.shared.ShardIndex(m.keys[i].key))
	}
	slices.Sort(s)
	s = slices.Compact(s)
	for _, i := range s {
		h.stripes[i].Lock()
	}
	return s
}

func (h *Handler) unlockKeyStripes(s []int) {
	for _, i := range s {
		h.stripes[i].Unlock()
	}
}

// appendRestores appends the pipeline for the target: AUTH and SELECT when
// needed, then one RESTORE per key with its TTL as it is now; a key that
// expired since it was dumped is left out, as Redis does. It returns the
// keys sent (indexes into m.keys).
func (m *migration) appendRestores(dst []byte, selectDB bool, now int64) ([]byte, []int) {
	if m.auth {
		if m.user != nil {
			dst = aof.AppendCommand(dst, []byte("AUTH"), m.user, m.pass)
		} else {
			dst = aof.AppendCommand(dst, []byte("AUTH"), m.pass)
		}
	}
	if selectDB {
		dst = aof.AppendCommand(dst, []byte("SELECT"), strconv.AppendInt(nil, m.db, 10))
	}
	var sent []int
	for i, k := range m.keys {
		ttl := int64(0)
		if k.expireAt >= 0 {
			ttl = k.expireAt - now
			if ttl < 0 {
				continue
			}
			ttl = max(ttl, 1)
		}
		n := 4
		if m.replace {
			n = 5
		}
		dst = aof.AppendHeader(dst, n)
		if m.asking {
			dst = aof.AppendArg(dst, []byte("RESTORE-ASKING"))
		} else {
			dst = aof.AppendArg(dst, []byte("RESTORE"))
		}
		dst = aof.AppendArg(dst, k.key)
		dst = aof.AppendIntArg(dst, ttl)
		dst = aof.AppendArg(dst, k.payload)
		if m.replace {
			dst = aof.AppendArg(dst, []byte("REPLACE"))
		}
		sent = append(sent, i)
	}
	return dst, sent
}
