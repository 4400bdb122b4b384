package resp

import "bytes"

// A multibulk command of resumeMinArgs or more arguments that arrives over
// several reads is resumed where the last Parse stopped. Re-reading every
// earlier argument instead would cost O(n·k) for n arguments arriving in k
// reads: a client could make the server parse a 1M-argument command
// hundreds of times over. Smaller commands re-parse, which is cheaper than
// keeping the bookkeeping.
var resumeMinArgs int64 = 64 // a variable so that tests can exercise resuming on small inputs

// span locates one argument in the command's bytes.
type span struct{ start, end int }

// rare is the Parser state only some connections need: how far a large
// command got (the first and last bytes read are kept to recognise the same
// command when Parse is called again), the spans of its arguments, and the
// scratch buffer of unescaped inline arguments.
type rare struct {
	spans   []span // arguments read so far of a large command
	scratch []byte // unescaped inline arguments

	active bool
	left   int64 // arguments still to read
	off    int   // where the next bulk header starts, from the command's first byte
	head   [16]byte
	tail   [16]byte
	nhead  int
	ntail  int
}

// rareState returns p.rare, allocating it for the connection's first large
// command or escaped inline argument.
func (p *Parser) rareState() *rare {
	if p.rare == nil {
		p.rare = new(rare)
	}
	return p.rare
}

func (p *Parser) savePending(b []byte, off int, left int64) {
	q := p.rareState()
	q.active, q.left, q.off = true, left, off
	q.nhead = copy(q.head[:], b[:off])
	q.ntail = copy(q.tail[:], b[max(0, off-len(q.tail)):off])
}

func (q *rare) matches(b []byte) bool {
	return len(b) >= q.off &&
		bytes.Equal(b[:q.nhead], q.head[:q.nhead]) &&
		bytes.Equal(b[q.off-q.ntail:q.off], q.tail[:q.ntail])
}

func (p *Parser) dropPending() {
	q := p.rare
	if q == nil {
		return
	}
	q.active = false
	if cap(q.spans) > maxRetainedArgs {
		q.spans = nil
	}
	q.spans = q.spans[:0]
}
