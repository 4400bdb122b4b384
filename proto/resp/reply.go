package resp

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/shoalkv/shoal/internal/ascii"
	"math"
)

// ErrInvalidReply reports a reply that breaks the protocol. Errors returned
// by ReadReply and SkipReply wrap it with what was wrong.
var ErrInvalidReply = errors.New("resp: invalid reply")

// maxAggregateLen bounds the element count a reply may claim. Redis never
// sends more than 2^32 elements; a larger claim is corruption, and refusing
// it keeps SkipReply's pending count from overflowing.
const maxAggregateLen = math.MaxUint32

// Reply is one RESP2 or RESP3 reply as a client reads it. Aggregates are
// flat: ReadReply returns only their header, and their elements follow as
// further replies.
type Reply struct {
	// Kind is the type byte: '+' simple string, '-' error, ':' integer,
	// '$' bulk, '*' array, and for RESP3 '_' null, ',' double, '#' boolean,
	// '(' big number, '=' verbatim, '!' bulk error, '%' map, '~' set,
	// '>' push, '|' attribute.
	Kind byte
	// Data is the payload of string-like kinds: the text of '+', '-', ',',
	// '(', ':' and '#', the bytes of '$' and '!', and for '=' the whole
	// payload including its "fmt:" prefix (see Verbatim). It is nil for nulls
	// and aggregates, and aliases the buffer given to ReadReply.
	Data []byte
	// Int is the value of ':' and of '#' (1 for true, 0 for false).
	Int int64
	// Len is the count on the wire for aggregates (pairs for '%' and '|';
	// see Elements), the byte length for '$', '!' and '=', and -1 for the
	// null kinds "$-1", "*-1" and "_".
	Len int
}

// IsNull reports whether r is a RESP2 null bulk or array, or RESP3's null.
func (r Reply) IsNull() bool { return r.Len == -1 && (r.Kind == '$' || r.Kind == '*' || r.Kind == '_') }

// Elements returns how many replies follow r's header as its elements: Len
// for arrays, sets and pushes, 2*Len for maps and attributes, 0 otherwise.
// An attribute is also followed by the reply it describes; SkipReply skips
// both.
func (r Reply) Elements() int {
	switch r.Kind {
	case '*', '~', '>':
		return max(r.Len, 0)
	case '%', '|':
		return 2 * r.Len
	}
	return 0
}

// Verbatim splits a '=' reply's Data into its three-byte format ("txt",
// "mkd") and its text.
func (r Reply) Verbatim() (format, text []byte) {
	if r.Kind != '=' || len(r.Data) < 4 {
		return nil, r.Data
	}
	return r.Data[:3], r.Data[4:]
}

// ReadReply reads one reply (an aggregate's header only) from the front of
// buf. r.Data aliases buf. n is the bytes consumed and never exceeds
// len(buf). err is ErrIncomplete when buf ends early, or wraps
// ErrInvalidReply.
func ReadReply(buf []byte) (r Reply, n int, err error) {
	if len(buf) == 0 {
		return Reply{}, 0, ErrIncomplete
	}
	r.Kind = buf[0]
	if !isReplyKind[r.Kind] {
		// Say so now rather than wait for a line that may never come.
		return Reply{}, 0, invalid("unknown type byte %q", r.Kind)
	}
	line, n, err := replyLine(buf)
	if err != nil {
		return Reply{}, 0, err
	}
	switch r.Kind {
	case '+', '-', ',', '(':
		r.Data = line
	case ':':
		v, ok := ascii.ParseInt(line)
		if !ok {
			return Reply{}, 0, invalid("integer %q", line)
		}
		r.Data, r.Int = line, v
	case '#':
		if len(line) != 1 || (line[0] != 't' && line[0] != 'f') {
			return Reply{}, 0, invalid("boolean %q", line)
		}
		r.Data = line
		if line[0] == 't' {
			r.Int = 1
		}
	case '_':
		if len(line) != 0 {
			return Reply{}, 0, invalid("null with payload %q", line)
		}
		r.Len = -1
	case '$', '!', '=':
		return readBlob(buf, r, line, n)
	case '*', '%', '~', '>', '|':
		v, ok := ascii.ParseInt(line)
		if !ok || v < -1 || v > maxAggregateLen || (v == -1 && r.Kind != '*') {
			return Reply{}, 0, invalid("%q aggregate length %q", r.Kind, line)
		}
		r.Len = int(v)
	}
	return r, n, nil
}

// isReplyKind marks every type byte ReadReply knows.
var isReplyKind = [256]bool{'+': true, '-': true, ':': true, '$': true, '*': true, '_': true, ',': true,
	'#': true, '(': true, '=': true, '!': true, '%': true, '~': true, '>': true, '|': true}

// replyLine returns the text after buf's type byte up to CRLF and the index
// just past the CRLF.
func replyLine(buf []byte) (line []byte, next int, err error) {
	cr := bytes.IndexByte(buf[1:], '\r') + 1 // buf[0] is the type byte, even if it is '\r'
	if cr == 0 || cr+1 >= len(buf) {
		return nil, 0, ErrIncomplete
	}
	if buf[cr+1] != '\n' {
		return nil, 0, invalid("CR not followed by LF in %q line", buf[0])
	}
	return buf[1:cr:cr], cr + 2, nil
}

// readBlob finishes a length-prefixed reply whose header line is line.
func readBlob(buf []byte, r Reply, line []byte, pos int) (Reply, int, error) {
	size, ok := ascii.ParseInt(line)
	if ok && size == -1 && r.Kind == '$' {
		r.Len = -1
		return r, pos, nil
	}
	if !ok || size < 0 || (r.Kind == '=' && size < 4) {
		return Reply{}, 0, invalid("%q length %q", r.Kind, line)
	}
	// Compare with what arrived; the claim itself is never allocated.
	if size > int64(len(buf)-pos-2) {
		return Reply{}, 0, ErrIncomplete
	}
	end := pos + int(size)
	if buf[end] != '\r' || buf[end+1] != '\n' {
		return Reply{}, 0, invalid("%q payload of %d bytes not followed by CRLF", r.Kind, size)
	}
	if r.Kind == '=' && buf[pos+3] != ':' {
		return Reply{}, 0, invalid("verbatim string without \"fmt:\" prefix")
	}
	r.Data, r.Len = buf[pos:end:end], int(size)
	return r, end + 2, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidReply}, args...)...)
}

// SkipReply returns the length of the whole reply at the front of buf,
// including every nested element, and for an attribute the reply it
// describes. It does not recurse, so nesting depth costs no stack.
func SkipReply(buf []byte) (n int, err error) {
	pending := 1
	for pending > 0 {
		r, m, err := ReadReply(buf[n:])
		if err != nil {
			return 0, err
		}
		n += m
		pending += r.Elements() - 1
		if r.Kind == '|' {
			pending++
		}
	}
	return n, nil
}
