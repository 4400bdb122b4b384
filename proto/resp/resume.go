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

// pending is how far a large command got. The first and last bytes read are
// kept to recognise the same command when Parse is called again.
type pending struct {
	active bool
	left   int64 // arguments still to read
	off    int   // where the next bulk header starts, from the command's first byte
	head   [16]byte
	tail   [16]byte
	nhead  int
	ntail  int
}

func (p *Parser) savePending(b []byte, off int, left int64) {
	if p.pending == nil {
		p.pending = new(pending) // only connections that send a large command in pieces pay for it
	}
	q := p.pending
	q.active, q.left, q.off = true, left, off
	q.nhead = copy(q.head[:], b[:off])
	q.ntail = copy(q.tail[:], b[max(0, off-len(q.tail)):off])
}

func (q *pending) matches(b []byte) bool {
	return len(b) >= q.off &&
		bytes.Equal(b[:q.nhead], q.head[:q.nhead]) &&
		bytes.Equal(b[q.off-q.ntail:q.off], q.tail[:q.ntail])
}

func (p *Parser) dropPending() {
	if p.pending != nil {
		p.pending.active = false
	}
	if cap(p.spans) > maxRetainedArgs {
		p.spans = nil
	}
	p.spans = p.spans[:0]
}
