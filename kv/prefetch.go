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
