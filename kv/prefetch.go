package kv

import "github.com/shoalkv/shoal/store"

// Batched lookups of a pipeline (store/prefetch.go). Before running a window
// of a pipelined read, execute has the store bring into the CPU caches the
// slots, entries and values of the window's keys, so that their cache misses
// overlap instead of following one another command by command. Only the
// plain shape is looked at: a multibulk of 2 to maxPrefetchArgs short bulks,
// whose command takes its first key at position 1 (GET, SET, INCR, HGET,
// EXISTS, ...). Anything else ends the window; the commands run as before
// whatever the scan finds, which changes nothing but the caches. A batch's
// first command runs before any scan, so a client that does not pipeline
// (one command a read) pays nothing; neither does a database small enough to
// stay in the caches (store.PrefetchPays), where the scan would be all cost.

// maxPrefetchArgs and maxPrefetchBulk bound the commands the scan steps over.
const (
	maxPrefetchArgs = 8
	maxPrefetchBulk = 1 << 16
)

// noPrefetch turns the prefetch off: the peer BenchmarkExecuteGETRandom
// measures it against.
var noPrefetch bool

// prefetchAhead scans the commands of in from off (the next to run) and has
// the client's database prefetch the keys of up to store.PrefetchMax of them.
// It returns where the scan stopped, which execute treats as the start of the
// next window; len(in) when the database is too small for its lookups to miss
// the caches, so that a batch on such a database checks only once.
func (h *Handler) prefetchAhead(cl *client, in []byte, off int) int {
	db := cl.db()
	if !db.PrefetchPays() {
		return len(in)
	}
	var keys [store.PrefetchMax][]byte
	n, pos := 0, off
	for n < len(keys) {
		name, key, next, ok := peekCommand(in, pos)
		if !ok {
			break
		}
		pos = next
		if c := dispatchIdx.find(name); c != nil && c.firstKey == 1 {
			keys[n] = key
			n++
		}
	}
	if n >= 2 {
		db.Prefetch(keys[:n])
	}
	return pos
}

// peekCommand reads the multibulk command at in[pos:] without the parser:
// its name, its first argument and where it ends. ok is false when it is not
// complete and of the plain shape prefetchAhead looks at.
func peekCommand(in []byte, pos int) (name, arg []byte, next int, ok bool) {
	count, pos, ok := peekHeader(in, pos, '*')
	if !ok || count < 2 || count > maxPrefetchArgs {
		return nil, nil, 0, false
	}
	for i := range count {
		var n int
		if n, pos, ok = peekHeader(in, pos, '$'); !ok || len(in)-pos < n+2 || in[pos+n] != '\r' || in[pos+n+1] != '\n' {
			return nil, nil, 0, false
		}
		switch i {
		case 0:
			name = in[pos : pos+n]
		case 1:
			arg = in[pos : pos+n]
		}
		pos += n + 2
	}
	return name, arg, pos, true
}

// peekHeader reads "<kind><digits>\r\n" at in[pos:] and returns the number
// and the position after it.
func peekHeader(in []byte, pos int, kind byte) (n, next int, ok bool) {
	if pos >= len(in) || in[pos] != kind {
		return 0, 0, false
	}
	for pos++; pos < len(in) && in[pos] >= '0' && in[pos] <= '9'; pos++ {
		if n = n*10 + int(in[pos]-'0'); n > maxPrefetchBulk {
			return 0, 0, false
		}
	}
	if pos+1 >= len(in) || in[pos] != '\r' || in[pos+1] != '\n' {
		return 0, 0, false
	}
	return n, pos + 2, true
}

// ReadAhead gathers the first commands of what several clients sent, which
// their loop read in one poll before running any (eventloop.ReadAheadHandler),
// and has the keyspace prefetch their keys together: at pipeline depth 1 each
// client's read holds one command, so prefetchAhead never runs, and the
// lookups' cache misses would otherwise come one client after another. Use it
// on the stack: Add each client's input, then Flush.
type ReadAhead struct {
	db   *store.Store
	pays bool
	n    int
	keys [store.PrefetchMax][]byte
}

// Add notes the key of the command at the start of in, if it has the plain
// shape prefetchAhead looks at and cl may run it (an unauthenticated client's
// keys are not looked up).
func (r *ReadAhead) Add(clt *Client, in []byte) {
	cl := &clt.c
	if noPrefetch || !cl.authed {
		return
	}
	if db := cl.db(); db != r.db {
		r.Flush()
		r.db, r.pays = db, db.PrefetchPays()
	}
	if !r.pays {
		return
	}
	name, key, _, ok := peekCommand(in, 0)
	if !ok {
		return
	}
	if c := dispatchIdx.find(name); c != nil && c.firstKey == 1 {
		r.keys[r.n] = key
		if r.n++; r.n == len(r.keys) {
			r.Flush()
		}
	}
}

// Flush prefetches the keys added since the last Flush, if there are two or
// more (one alone has nothing to overlap with).
func (r *ReadAhead) Flush() {
	if r.n >= 2 {
		r.db.Prefetch(r.keys[:r.n])
	}
	clear(r.keys[:r.n])
	r.n = 0
}
