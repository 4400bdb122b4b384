package resp

import (
	"bytes"

	"github.com/shoalkv/shoal/internal/ascii"
)

// parseInline parses one inline command line ("SET k \"v 1\"\r\n") from b,
// following processInlineBuffer and sdssplitargs. A line with no arguments
// (empty or all blanks) is consumed and yields none.
//
// Two deliberate differences from Redis, both about inputs Redis handles by
// accident of C strings or read sizes: a NUL byte is an ordinary byte here
// (Redis's strchr stops at it and waits for a newline that it never sees), and
// a line longer than MaxInlineLen is refused even when its newline has already
// arrived (Redis reads 16 KiB at a time, so whether it sees the newline before
// passing 64 KiB depends on how the bytes were split).
func (p *Parser) parseInline(b []byte, lim *Limits) ([][]byte, int, error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		if len(b) > lim.MaxInlineLen {
			return nil, 0, protoErr(msgBigInline, "%d bytes without a newline (limit %d)", len(b), lim.MaxInlineLen)
		}
		return nil, 0, ErrIncomplete
	}
	line := b[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) > lim.MaxInlineLen {
		return nil, 0, protoErr(msgBigInline, "inline line of %d bytes (limit %d)", len(line), lim.MaxInlineLen)
	}
	args, ok := p.splitArgs(line)
	if !ok {
		return nil, 0, protoErr(msgUnbalanced, "unbalanced or misplaced quote in %d-byte inline line", len(line))
	}
	return args, nl + 1, nil
}

// Byte classes for sdssplitargs, looked up once per byte.
const (
	classSpace   = 1 << iota // C's isspace in the "C" locale: skipped between arguments, allowed after a closing quote
	classBareEnd             // ends an unquoted token: only ' ', \t, \n, \r, so \v and \f can sit inside one
	classQuote               // starts a quoted part
)

var byteClass = [256]uint8{
	' ':  classSpace | classBareEnd,
	'\t': classSpace | classBareEnd,
	'\n': classSpace | classBareEnd,
	'\r': classSpace | classBareEnd,
	'\v': classSpace,
	'\f': classSpace,
	'"':  classQuote,
	'\'': classQuote,
}

func isSpace(c byte) bool  { return byteClass[c]&classSpace != 0 }
func endsBare(c byte) bool { return byteClass[c]&classBareEnd != 0 }

// SplitArgs splits line into arguments as Redis's sdssplitargs does, the
// rule for inline commands and for redis.conf lines: blanks separate
// arguments; "double quotes" take \xHH and \n \r \t \b \a escapes (any
// other escaped byte stands for itself); 'single quotes' take \'; a closing
// quote must be followed by a blank or the end of the line. ok is false where
// Redis reports "unbalanced quotes". The arguments may share line's memory.
func SplitArgs(line []byte) (args [][]byte, ok bool) {
	var p Parser
	return p.splitArgs(line)
}

// splitArgs splits line as sdssplitargs does. Arguments without quotes, and
// quoted ones without escapes, are sub-slices of line; the rest are unescaped
// into p.rare.scratch. ok is false for "unbalanced quotes".
func (p *Parser) splitArgs(line []byte) (args [][]byte, ok bool) {
	args = p.args[:0]
	i := 0
	for {
		for i < len(line) && byteClass[line[i]]&classSpace != 0 {
			i++
		}
		if i == len(line) {
			p.args = args
			return args, true
		}
		start := i
		for i < len(line) && byteClass[line[i]]&(classBareEnd|classQuote) == 0 {
			i++
		}
		if i == len(line) || endsBare(line[i]) {
			args = append(args, line[start:i:i])
			continue
		}
		if i == start {
			if arg, next, ok := plainQuoted(line, i); ok {
				args = append(args, arg)
				i = next
				continue
			}
		}
		var arg []byte
		arg, i, ok = p.unquote(line, start)
		if !ok {
			p.args = args
			return nil, false
		}
		args = append(args, arg)
	}
}

// plainQuoted returns the token at line[i] when it is one quoted string
// without backslashes whose closing quote ends the token properly: such a
// token needs no copy.
func plainQuoted(line []byte, i int) (arg []byte, next int, ok bool) {
	q := line[i]
	j := bytes.IndexByte(line[i+1:], q)
	if j < 0 {
		return nil, 0, false
	}
	j += i + 1
	if bytes.IndexByte(line[i+1:j], '\\') >= 0 {
		return nil, 0, false
	}
	if j+1 < len(line) && !isSpace(line[j+1]) {
		return nil, 0, false
	}
	return line[i+1 : j : j], j + 1, true
}

// unquote decodes the token starting at line[start] into the scratch buffer,
// with sdssplitargs's rules: in double quotes \xHH and \n \r \t \b \a escapes
// (any other escaped byte stands for itself), in single quotes only \', and a
// closing quote must be followed by a blank or the end of the line. Quotes may
// start mid-token: a"b c" is the one argument `ab c`.
func (p *Parser) unquote(line []byte, start int) (arg []byte, next int, ok bool) {
	// The rest of the line never decodes to more bytes than it has, so this
	// reservation holds for every later token of the line too, and appends
	// never move arguments already handed out.
	q := p.rareState()
	if need := len(line) - start; cap(q.scratch)-len(q.scratch) < need {
		q.scratch = make([]byte, 0, max(need, 2*cap(q.scratch)))
	}
	out := q.scratch[len(q.scratch):]
	i := start
	quote := byte(0) // the quote of the quoted part i is in, 0 outside one
	for {
		if quote == 0 {
			if i >= len(line) || endsBare(line[i]) {
				return p.keep(out), i, true
			}
			switch c := line[i]; c {
			case '"', '\'':
				quote = c
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		if i >= len(line) {
			return nil, 0, false // unterminated quotes
		}
		c := line[i]
		switch {
		case c == quote:
			if i+1 < len(line) && !isSpace(line[i+1]) {
				return nil, 0, false
			}
			return p.keep(out), i + 1, true
		case quote == '"' && c == '\\' && i+3 < len(line) && line[i+1] == 'x' && ascii.Unhex(line[i+2]) >= 0 && ascii.Unhex(line[i+3]) >= 0:
			out = append(out, byte(ascii.Unhex(line[i+2])<<4|ascii.Unhex(line[i+3])))
			i += 4
		case quote == '"' && c == '\\' && i+1 < len(line):
			out = append(out, unescape(line[i+1]))
			i += 2
		case quote == '\'' && c == '\\' && i+1 < len(line) && line[i+1] == '\'':
			out = append(out, '\'')
			i += 2
		default:
			out = append(out, c)
			i++
		}
	}
}

// keep marks out, which was appended at the end of p.rare.scratch, as used.
func (p *Parser) keep(out []byte) []byte {
	p.rare.scratch = p.rare.scratch[:len(p.rare.scratch)+len(out)]
	return out[:len(out):len(out)]
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
