package http1

import "github.com/shoalkv/shoal/internal/ascii"

import "bytes"

// Default limits; a zero field in Limits means the default.
const (
	DefaultMaxHeaderBytes = 8 << 10
	DefaultMaxHeaders     = 100
	DefaultMaxBodyBytes   = 4 << 20
)

// Limits bounds what a Parser accepts. A zero or negative field means the default.
type Limits struct {
	// MaxHeaderBytes bounds the request line and header section, final CRLF included
	// (431). Chunked trailers are bounded by it separately.
	MaxHeaderBytes int
	MaxHeaders     int   // header fields per request (431)
	MaxBodyBytes   int64 // decoded body bytes (413)
}

func (l *Limits) headerBytes() int {
	if l.MaxHeaderBytes <= 0 {
		return DefaultMaxHeaderBytes
	}
	return l.MaxHeaderBytes
}

func (l *Limits) headers() int {
	if l.MaxHeaders <= 0 {
		return DefaultMaxHeaders
	}
	return l.MaxHeaders
}

func (l *Limits) bodyBytes() int64 {
	if l.MaxBodyBytes <= 0 {
		return DefaultMaxBodyBytes
	}
	return l.MaxBodyBytes
}

// Parser parses requests under its Limits. It holds no per-request state, so one
// Parser may serve many connections, concurrently; the zero value uses the defaults.
type Parser struct {
	Limits Limits
}

// Parse parses the request at the front of buf into req and returns the bytes it used,
// body included. It returns ErrIncomplete (n == 0) when more bytes are needed, or an
// *Error. req is meaningful only when err is nil. For a chunked body Parse rewrites
// buf[:n] in place; it never writes to buf otherwise.
func (p *Parser) Parse(buf []byte, req *Request) (n int, err error) {
	head, err := p.ParseHead(buf, req)
	if err != nil {
		return 0, err
	}
	if req.Chunked {
		bodyLen, used, err := decodeChunked(buf[head:], &p.Limits, false)
		if err != nil {
			return 0, err
		}
		decodeChunked(buf[head:], &p.Limits, true)
		req.Body = buf[head : head+bodyLen : head+bodyLen]
		return head + used, nil
	}
	if int64(len(buf)-head) < req.ContentLength {
		return 0, ErrIncomplete
	}
	end := head + int(req.ContentLength)
	req.Body = buf[head:end:end]
	return end, nil
}

// ParseHead parses only the request line and header section at the front of buf and
// returns their length. It fills req except Body, so a server can act on
// Expect100, ContentLength or Chunked before the body arrives, and it enforces every
// header-level rule and the Content-Length limit.
func (p *Parser) ParseHead(buf []byte, req *Request) (n int, err error) {
	req.reset()
	limit := p.Limits.headerBytes()
	window := buf
	if len(window) > limit {
		window = window[:limit]
	}
	// more reports why the head is not complete within window.
	more := func() error {
		if len(buf) >= limit {
			return errorf(431, "request header section exceeds %d bytes", limit)
		}
		return ErrIncomplete
	}

	pos := 0
	for len(window)-pos >= 2 && window[pos] == '\r' && window[pos+1] == '\n' {
		pos += 2
	}
	i := bytes.IndexByte(window[pos:], '\n')
	if i < 0 {
		if err := checkPartialRequestLine(window[pos:]); err != nil {
			return 0, err
		}
		return 0, more()
	}
	if i == 0 || window[pos+i-1] != '\r' {
		return 0, badRequest("request line ends in a bare LF")
	}
	if err := parseRequestLine(window[pos:pos+i-1], req); err != nil {
		return 0, err
	}
	pos += i + 1

	var f framing
	maxHeaders := p.Limits.headers()
	for {
		i := bytes.IndexByte(window[pos:], '\n')
		if i < 0 {
			return 0, more()
		}
		if i == 0 || window[pos+i-1] != '\r' {
			return 0, badRequest("header line ends in a bare LF")
		}
		line := window[pos : pos+i-1 : pos+i-1]
		pos += i + 1
		if len(line) == 0 {
			break
		}
		h, err := parseHeaderLine(line)
		if err != nil {
			return 0, err
		}
		if len(req.Headers) == maxHeaders {
			return 0, errorf(431, "more than %d header fields", maxHeaders)
		}
		req.Headers = append(req.Headers, h)
		if err := f.note(h, req, &p.Limits); err != nil {
			return 0, err
		}
	}
	if err := f.finish(req); err != nil {
		return 0, err
	}
	return pos, nil
}

// checkPartialRequestLine rejects a request line whose method is already invalid, so
// that a client speaking another protocol is refused at once instead of after 8 KiB.
func checkPartialRequestLine(line []byte) error {
	if len(line) == 1 && line[0] == '\r' {
		return nil // the first half of an empty line's CRLF
	}
	for _, c := range line {
		if c == ' ' {
			return nil
		}
		if !tokenChars[c] {
			return badRequest("invalid byte 0x%02x in method", c)
		}
	}
	return nil
}

func parseRequestLine(line []byte, req *Request) error {
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return badRequest("malformed request line %s", quote(line))
	}
	method := line[:sp:sp]
	for _, c := range method {
		if !tokenChars[c] {
			return badRequest("invalid byte 0x%02x in method %s", c, quote(method))
		}
	}
	rest := line[sp+1:]
	sp = bytes.IndexByte(rest, ' ')
	if sp <= 0 {
		return badRequest("malformed request line %s", quote(line))
	}
	target := rest[:sp:sp]
	for _, c := range target {
		if c <= ' ' || c >= 0x7f {
			return badRequest("invalid byte 0x%02x in request target %s", c, quote(target))
		}
	}
	if !validTargetForm(method, target) {
		return badRequest("request target %s is not in origin, absolute, authority or asterisk form", quote(target))
	}
	version := rest[sp+1:]
	if len(version) != 8 || string(version[:5]) != "HTTP/" || version[6] != '.' ||
		!isDigit(version[5]) || !isDigit(version[7]) {
		return badRequest("malformed HTTP version %s", quote(version))
	}
	major, minor := int(version[5]-'0'), int(version[7]-'0')
	if major != 1 || minor > 1 {
		return errorf(505, "HTTP version %s is not supported; use HTTP/1.1 or HTTP/1.0", version)
	}
	req.Method, req.Target, req.Major, req.Minor = method, target, major, minor
	return nil
}

// validTargetForm checks the target's form (RFC 9112 section 3.2), not its contents:
// "/path" for any method, "*" (asterisk-form), "host:port" for CONNECT, or an absolute
// URI starting with a scheme. Everything else is a 400, as net/http refuses it too.
func validTargetForm(method, target []byte) bool {
	switch {
	case target[0] == '/':
		return true
	case len(target) == 1 && target[0] == '*':
		return true
	case string(method) == "CONNECT":
		return bytes.IndexByte(target, ':') > 0
	}
	// scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":"
	for i, c := range target {
		switch {
		case 'a' <= ascii.Lower(c) && ascii.Lower(c) <= 'z':
		case i > 0 && (isDigit(c) || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func parseHeaderLine(line []byte) (Header, error) {
	if line[0] == ' ' || line[0] == '\t' {
		return Header{}, badRequest("header line %s starts with whitespace (obsolete line folding is not accepted)", quote(line))
	}
	colon := bytes.IndexByte(line, ':')
	if colon < 0 {
		return Header{}, badRequest("header line %s has no colon", quote(line))
	}
	name := line[:colon:colon]
	for _, c := range name {
		if !tokenChars[c] {
			if c == ' ' || c == '\t' {
				return Header{}, badRequest("whitespace before the colon in header name %s", quote(name))
			}
			return Header{}, badRequest("invalid byte 0x%02x in header name %s", c, quote(name))
		}
	}
	if len(name) == 0 {
		return Header{}, badRequest("header line %s has an empty name", quote(line))
	}
	value := line[colon+1:]
	for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
		value = value[1:]
	}
	for len(value) > 0 && (value[len(value)-1] == ' ' || value[len(value)-1] == '\t') {
		value = value[:len(value)-1]
	}
	if i := invalidValueByte(value); i >= 0 {
		return Header{}, badRequest("invalid byte 0x%02x in value of header %s", value[i], quote(name))
	}
	return Header{Name: name, Value: value}, nil
}
