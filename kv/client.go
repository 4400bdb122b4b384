package kv

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// client is the per-connection state; the edge holds it inside a Client.
//
// Ownership: everything except the fields marked otherwise is touched only
// by the connection's loop goroutine. CLIENT LIST and CLIENT KILL, running on
// other loops, read id/addresses (immutable after OnOpen), the atomics, and
// the name fields under mu.
type client struct {
	conn   Conn // nil for a client without a connection (AOF loading, benchmarks)
	h      *Handler
	parser resp.Parser
	out    []byte // the Conn's output buffer while OnTraffic runs, else nil

	// Ordered so that the small fields share words: the struct is 224
	// bytes, an allocation size class of its own (the Parser's rarely used
	// state behind a pointer took it down from 288).
	batchCmds       int64        // commands run in the current OnTraffic call
	sampleTick      uint32       // commands run, to pick the ones timed
	selected        atomic.Int32 // SELECT's database index; atomic for CLIENT LIST
	authed          bool         // AUTH succeeded, or no password was required at connect
	closeAfterReply bool         // QUIT, protocol error, CLIENT KILL of itself
	valueDigits     uint8        // digits of the last GET value's length: the next header's guess
	failed          bool         // the running command replied with an error
	unixSocket      bool         // connected on a Unix socket; immutable after OnOpen
	proto           uint8        // 2 or 3
	clusterFlags    uint8        // ASKING, READONLY (cluster_check.go)
	stats           *loopState   // the client's loop's counters, lent arguments, ready keys, exec gate
	aof             *aofState    // persistence state, from the client's first logged write (aof.go)

	// Immutable after OnOpen.
	id         int64
	addr       string
	laddr      string
	createdAt  int64        // unix ms
	lastActive atomic.Int64 // Handler.clock at the last read with data
	commands   atomic.Int64 // commands run; written by the loop, read by INFO
	lastCmd    atomic.Pointer[command]
	protoShown atomic.Int32 // proto as CLIENT LIST shows it
	fd         int32        // next to protoShown: the two share a word

	// sess is the client's transaction, pub/sub and blocking state
	// (multi.go, pubsub.go, blocking.go), nil until its first MULTI,
	// WATCH, subscription or blocking wait; atomic for CLIENT LIST.
	sess atomic.Pointer[session]

	// names are CLIENT SETNAME's and SETINFO's and the ACL user, replaced
	// whole (copy on write) so that CLIENT LIST on another loop reads them
	// without a lock. A connection starts with its Handler's shared
	// defaultNames; nil for the clients Shoal runs itself (AOF loading,
	// replication), which have no user and may do anything.
	names atomic.Pointer[clientNames]
}

// clientNames is what a client called itself, and who it authenticated
// as: the user shares the names' pointer so that the client struct keeps
// its size class, and changes as rarely (AUTH, HELLO, RESET).
type clientNames struct {
	name, libName, libVer string
	user                  *aclUser // the ACL user (acl.go); nil: none, unrestricted
}

// getNames returns the client's names; the zero value if it set none.
func (cl *client) getNames() clientNames {
	if n := cl.names.Load(); n != nil {
		return *n
	}
	return clientNames{}
}

// updateNames applies change to a copy of the names and publishes it. Only
// the client's own loop calls it, so updates never race each other.
func (cl *client) updateNames(change func(*clientNames)) {
	n := cl.getNames()
	change(&n)
	cl.names.Store(&n)
}

// setAuthed records the authentication state; unauthenticated clients get
// Redis's tighter request limits (10 arguments, 16 KiB bulks).
func (cl *client) setAuthed(v bool) {
	cl.authed = v
	cl.parser.Unauthenticated = !v
}

func (cl *client) setName(name string) {
	cl.updateNames(func(n *clientNames) { n.name = name })
}

func (cl *client) getName() string { return cl.getNames().name }

// registry tracks live clients for CLIENT LIST/KILL and INFO.
type registry struct {
	mu             sync.Mutex
	clients        map[int64]*client
	killed         map[int64]struct{} // CLIENT KILLed, not yet closed by their loop: no longer listed; under mu
	closedCommands int64              // commands of the clients already removed; under mu
	nextID         atomic.Int64
}

// lookup returns the client with id, nil if there is none (any more).
func (r *registry) lookup(id int64) *client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clients[id]
}

func (r *registry) add(cl *client) {
	r.mu.Lock()
	if r.clients == nil {
		r.clients = make(map[int64]*client)
	}
	r.clients[cl.id] = cl
	r.mu.Unlock()
}

// remove drops cl, keeping its command count in the total. OnClose runs on
// cl's loop, so the count is final.
func (r *registry) remove(cl *client) {
	r.mu.Lock()
	if _, ok := r.clients[cl.id]; ok {
		delete(r.clients, cl.id)
		delete(r.killed, cl.id)
		r.closedCommands += cl.commands.Load()
	}
	r.mu.Unlock()
}

// kill marks cl killed (its close is on its way to its loop), so that it
// is no longer listed or counted, as Redis frees a killed client at once;
// false if it was already killed or is gone.
func (r *registry) kill(cl *client) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, live := r.clients[cl.id]; !live {
		return false
	}
	if _, done := r.killed[cl.id]; done {
		return false
	}
	if r.killed == nil {
		r.killed = make(map[int64]struct{})
	}
	r.killed[cl.id] = struct{}{}
	return true
}

// commands returns how many commands all clients, live and gone, have run.
// Summing under mu keeps a closing client from being counted twice or not
// at all.
func (r *registry) commands() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.closedCommands
	for _, cl := range r.clients {
		n += cl.commands.Load()
	}
	return n
}

func (r *registry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.clients) - len(r.killed)
}

// snapshot returns the live clients ordered by id, the order Redis lists them.
func (r *registry) snapshot() []*client {
	r.mu.Lock()
	list := make([]*client, 0, len(r.clients))
	for id, cl := range r.clients {
		if _, killed := r.killed[id]; !killed {
			list = append(list, cl)
		}
	}
	r.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	return list
}

// appendClientInfo appends one CLIENT LIST line (without the newline) in
// Redis 7's field order. Shoal keeps no per-client query buffer while
// idle, so its fields report 0; omem is the output a slow reader left.
func appendClientInfo(b []byte, cl *client, now int64) []byte {
	names := cl.getNames()
	name, libName, libVer := names.name, names.libName, names.libVer
	cmd := "NULL"
	if c := cl.lastCmd.Load(); c != nil {
		cmd = c.name
	}
	b = append(b, "id="...)
	b = strconv.AppendInt(b, cl.id, 10)
	b = append(b, " addr="...)
	b = append(b, cl.addr...)
	b = append(b, " laddr="...)
	b = append(b, cl.laddr...)
	b = append(b, " fd="...)
	b = strconv.AppendInt(b, int64(cl.fd), 10)
	b = append(b, " name="...)
	b = append(b, name...)
	b = append(b, " age="...)
	b = strconv.AppendInt(b, (now-cl.createdAt)/1000, 10)
	b = append(b, " idle="...)
	b = strconv.AppendInt(b, (now-cl.lastActive.Load())/1000, 10)
	b = appendSessionInfo(b, cl) // flags, db, sub, psub, ssub, multi (pubsub.go)
	b = append(b, " qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0"...)
	b = appendOutputInfo(b, cl) // obl, oll, omem, tot-mem (outlimits.go)
	b = append(b, " events=r cmd="...)
	b = append(b, cmd...)
	b = append(b, " user="...)
	b = append(b, cl.aclUserName(names.user)...)
	b = append(b, " redir=-1 resp="...)
	b = strconv.AppendInt(b, int64(cl.protoShown.Load()), 10)
	b = append(b, " lib-name="...)
	b = append(b, libName...)
	b = append(b, " lib-ver="...)
	b = append(b, libVer...)
	return b
}

func nowMillis() int64 { return time.Now().UnixMilli() }
