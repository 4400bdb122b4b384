package resp

import (
	"bytes"
	"github.com/shoalkv/shoal/internal/ascii"
)

// Parser parses commands sent by clients. It is not safe for concurrent use;
// give each connection its own Parser, owned by the goroutine that reads it.
type Parser struct {
	// Limits bounds lengths the peer may claim; nil, or zero fields, take
	// the defaults in DefaultLimits. A pointer, so that the many Parsers of a
	// server share one (kept in every connection, a value would cost 16
	// bytes more each).
	Limits *Limits
	// Unauthenticated applies Redis's tighter limits for clients that still
	// have to AUTH (more than 10 arguments or a bulk over 16384 bytes is a
	// protocol error). Set it while requirepass is set and the connection has
	// not authenticated.
	Unauthenticated bool

	args [][]byte // reused across commands: the steady state allocates nothing
	// rare holds what only large commands and escaped inline arguments
	// need, allocated by the first of those, so that a connection that
	// never sends one keeps a Parser of 48 bytes.
	rare *rare
}

// Memory a Parser keeps between commands after a rare huge one; beyond this
// it lets the garbage collector have it back.
const (
	maxRetainedArgs    = 4096
	maxRetainedScratch = 4096
)

// Redis's fixed limits for unauthenticated clients (networking.c).
const (
	unauthMaxMultibulk = 10
	unauthMaxBulk      = 16384
)

// Reset forgets a partly received command. Parse resumes a large command
// where the previous call stopped when it is given the same bytes again
// with more appended, as an event loop does; call Reset before parsing an
// unrelated buffer with the same Parser.
func (p *Parser) Reset() { p.dropPending() }

// SwapArgs exchanges the slice the Parser reuses for Parse's args with
// *buf. A server that serves many connections one at a time from one
// goroutine (an event loop) can keep one slice per goroutine and lend it to
// the connection it is serving, swapping it back afterwards, instead of every
// idle connection keeping a slice of its own. The args Parse returned alias
// the slice: swap back only once they are no longer used.
func (p *Parser) SwapArgs(buf *[][]byte) { p.args, *buf = *buf, p.args }

// Release lets the garbage collector have back the memory a rare huge command
// left in the Parser (more than 4096 arguments, or long unescaped inline
// arguments), so an idle connection does not pin it. Parse does this itself
// before each command; call Release after handling a command's args when the
// connection may then sit idle. It invalidates the args Parse returned.
func (p *Parser) Release() {
	if cap(p.args) > maxRetainedArgs {
		p.args = nil
	}
	if p.rare != nil && cap(p.rare.scratch) > maxRetainedScratch {
		p.rare.scratch = nil
	}
}

// Parse parses one command from the front of buf, a RESP multibulk
// ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") or an inline line ("GET k\r\n").
//
// args are sub-slices of buf, except inline arguments that needed unescaping,
// which live in the Parser's scratch. They are valid until the next call to
// Parse or until buf is modified; the args slice itself is reused.
//
// A command of many arguments that arrives over several reads is resumed
// where the previous call stopped, provided buf starts with the same bytes
// as before (see Reset), so its cost stays linear in its size.
//
// n is the number of bytes consumed. Empty inline lines and "*0"/"*-1"
// multibulks carry no command and are skipped; when only such bytes could be
// consumed Parse returns n > 0 and no args. err is ErrIncomplete when buf
// holds no complete command, or a *ProtocolError after which the connection
// should be answered with "-" + err.Error() and closed. n is 0 whenever err
// is not nil, and never exceeds len(buf).
func (p *Parser) Parse(buf []byte) (args [][]byte, n int, err error) {
	lim := DefaultLimits
	if p.Limits != nil {
		lim = p.Limits.withDefaults()
	}
	p.Release()
	if p.rare != nil {
		p.rare.scratch = p.rare.scratch[:0]
	}
	pos := 0
	for pos < len(buf) {
		var m int
		if buf[pos] == '*' {
			args, m, err = p.parseMultibulk(buf[pos:], &lim, pos == 0)
		} else {
			args, m, err = p.parseInline(buf[pos:], &lim)
		}
		if err != nil {
			if pos > 0 {
				// Hand back what was skipped; the error shows again next call.
				return nil, pos, nil
			}
			return nil, 0, err
		}
		pos += m
		if len(args) > 0 {
			return args, pos, nil
		}
	}
	if pos > 0 {
		return nil, pos, nil
	}
	return nil, 0, ErrIncomplete
}

// parseMultibulk parses "*<count>\r\n" and count "$<len>\r\n<data>\r\n" bulks
// from b, which starts with '*'. The order of checks and the error texts
// follow processMultibulkBuffer, so that any prefix of a stream gets the same
// verdict as in Redis. front says b starts where the caller's buffer does,
// the only place a pending large command can resume.
func (p *Parser) parseMultibulk(b []byte, lim *Limits, front bool) ([][]byte, int, error) {
	if p.rare != nil && p.rare.active {
		if front && p.rare.matches(b) {
			return p.bulks(b, p.rare.off, p.rare.left, true, lim)
		}
		p.dropPending()
	}
	count, ok, pos, err := header(b, 0, lim.MaxInlineLen, msgBigMbulkCount)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return nil, 0, protoErr(msgInvalidMultibulk, "multibulk length %q is not an integer", headerText(b, 0))
	}
	if count > lim.MaxMultibulkLen {
		return nil, 0, protoErr(msgInvalidMultibulk, "multibulk length %d exceeds limit %d", count, lim.MaxMultibulkLen)
	}
	if p.Unauthenticated && count > unauthMaxMultibulk {
		return nil, 0, protoErr(msgUnauthMultibulk, "multibulk length %d exceeds %d before AUTH", count, unauthMaxMultibulk)
	}
	if count <= 0 {
		return nil, pos, nil // Redis consumes "*0" and "*-1" and runs nothing
	}
	return p.bulks(b, pos, count, count >= resumeMinArgs, lim)
}

// bulks reads count bulk arguments starting at b[pos]. Small commands go
// straight into p.args. Large ones record spans instead, so that if they
// are incomplete the next call can resume at the first unread bulk.
func (p *Parser) bulks(b []byte, pos int, count int64, large bool, lim *Limits) ([][]byte, int, error) {
	args := p.args[:0]
	for ; count > 0; count-- {
		next, end, err := p.bulk(b, pos, lim)
		if err != nil {
			if large && err == ErrIncomplete {
				p.savePending(b, pos, count)
			} else if large {
				p.dropPending()
			} else {
				p.args = args // keep any capacity grown on the way
			}
			return nil, 0, err
		}
		if large {
			q := p.rareState()
			q.spans = append(q.spans, span{next, end})
		} else {
			args = append(args, b[next:end:end])
		}
		// Like Redis, skip the two bytes after the data without checking
		// that they are CRLF, so the same streams are accepted.
		pos = end + 2
	}
	if large {
		spans := p.rareState().spans
		if cap(args) < len(spans) {
			args = make([][]byte, 0, len(spans)) // sized by arguments that arrived
		}
		for _, s := range spans {
			args = append(args, b[s.start:s.end:s.end])
		}
		p.dropPending()
	}
	p.args = args
	return args, pos, nil
}

// bulk reads the bulk whose header starts at b[pos] and returns where its
// data starts and ends.
func (p *Parser) bulk(b []byte, pos int, lim *Limits) (next, end int, err error) {
	if pos >= len(b) {
		return 0, 0, ErrIncomplete
	}
	if b[pos] != '$' {
		// Redis reports the wrong type byte only once the line is whole.
		if _, _, _, err := header(b, pos, lim.MaxInlineLen, msgBigBulkCount); err != nil {
			return 0, 0, err
		}
		return 0, 0, expectedDollar(b[pos])
	}
	size, ok, next, err := header(b, pos, lim.MaxInlineLen, msgBigBulkCount)
	if err != nil {
		return 0, 0, err
	}
	if !ok || size < 0 {
		return 0, 0, protoErr(msgInvalidBulk, "bulk length %q is not a non-negative integer", headerText(b, pos))
	}
	if size > lim.MaxBulkLen {
		return 0, 0, protoErr(msgInvalidBulk, "bulk length %d exceeds proto-max-bulk-len %d", size, lim.MaxBulkLen)
	}
	if p.Unauthenticated && size > unauthMaxBulk {
		return 0, 0, protoErr(msgUnauthBulk, "bulk length %d exceeds %d before AUTH", size, unauthMaxBulk)
	}
	// Compare against what has arrived, never allocate for the claim.
	if size > int64(len(b)-next-2) { // not size+2: MaxBulkLen may be near MaxInt64
		return 0, 0, ErrIncomplete
	}
	return next, next + int(size), nil
}

// header reads the number in the header line starting at b[start] (the '*'
// or '$' byte). It returns the value, whether ascii.ParseInt (Redis's string2ll) accepts the digits,
// and the index just past the line. Like Redis it ends the line at the
// first '\r', needs one more byte after it whatever that byte is, and gives
// up with tooBig once more than maxLine bytes follow start without any '\r'.
func header(b []byte, start, maxLine int, tooBig string) (v int64, ok bool, next int, err error) {
	// Fast path: 1 to 18 digits without a leading zero, then '\r' and one
	// more byte. It agrees with the general path below on every input.
	i := start + 1
	if i < len(b) && b[i] >= '1' && b[i] <= '9' {
		v = int64(b[i] - '0')
		i++
		for i < len(b) && i-start <= 18 && b[i] >= '0' && b[i] <= '9' {
			v = v*10 + int64(b[i]-'0')
			i++
		}
		if i+1 < len(b) && b[i] == '\r' {
			return v, true, i + 2, nil
		}
	}
	cr := bytes.IndexByte(b[start:], '\r')
	if cr < 0 {
		if len(b)-start > maxLine {
			return 0, false, 0, protoErr(tooBig, "no CR within %d bytes of header (limit %d)", len(b)-start, maxLine)
		}
		return 0, false, 0, ErrIncomplete
	}
	cr += start
	if cr+1 >= len(b) {
		return 0, false, 0, ErrIncomplete
	}
	if cr <= start {
		return 0, false, cr + 2, nil // only for a line that starts with '\r'
	}
	v, ok = ascii.ParseInt(b[start+1 : cr])
	return v, ok, cr + 2, nil
}

// headerText returns the header digits at b[start:] for error details.
func headerText(b []byte, start int) []byte {
	line := b[start+1:]
	if i := bytes.IndexByte(line, '\r'); i >= 0 {
		line = line[:i]
	}
	if len(line) > 32 {
		line = line[:32]
	}
	return line
}
