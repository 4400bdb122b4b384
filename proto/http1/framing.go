package http1

import "github.com/shoalkv/shoal/internal/ascii"

// framing collects, while headers are parsed, what decides the body's length and the
// connection's fate, so each header is classified once.
type framing struct {
	hosts          int
	contentLength  bool
	transferCoding bool
	connClose      bool
	connKeepAlive  bool
}

func (f *framing) note(h Header, req *Request, limits *Limits) error {
	switch len(h.Name) {
	case 4:
		if ascii.EqualFold(h.Name, "host") {
			f.hosts++
			if f.hosts > 1 {
				return badRequest("more than one Host header")
			}
			req.Host = h.Value
		}
	case 6:
		// RFC 9110 10.1.1: a 100-continue expectation in HTTP/1.0 is ignored.
		if ascii.EqualFold(h.Name, "expect") && ascii.EqualFold(h.Value, "100-continue") && req.Minor == 1 {
			req.Expect100 = true
		}
	case 10:
		if ascii.EqualFold(h.Name, "connection") {
			forEachToken(h.Value, func(tok []byte) {
				if ascii.EqualFold(tok, "close") {
					f.connClose = true
				} else if ascii.EqualFold(tok, "keep-alive") {
					f.connKeepAlive = true
				}
			})
		}
	case 14:
		if ascii.EqualFold(h.Name, "content-length") {
			if f.contentLength {
				return badRequest("more than one Content-Length header")
			}
			f.contentLength = true
			n, err := parseContentLength(h.Value, limits.bodyBytes())
			if err != nil {
				return err
			}
			req.ContentLength = n
		}
	case 17:
		if ascii.EqualFold(h.Name, "transfer-encoding") {
			return f.noteTransferEncoding(h.Value, req)
		}
	}
	return nil
}

func (f *framing) noteTransferEncoding(value []byte, req *Request) error {
	f.transferCoding = true
	var err *Error
	codings := 0
	forEachToken(value, func(tok []byte) {
		codings++
		if err != nil {
			return
		}
		switch {
		case !ascii.EqualFold(tok, "chunked"):
			err = errorf(501, "transfer coding %s is not supported; only chunked is", quote(tok))
		case req.Chunked:
			err = badRequest("transfer coding chunked applied more than once")
		default:
			req.Chunked = true
		}
	})
	if err != nil {
		return err
	}
	if codings == 0 {
		return badRequest("empty Transfer-Encoding header")
	}
	return nil
}

func (f *framing) finish(req *Request) error {
	if f.transferCoding {
		if f.contentLength {
			return badRequest("request has both Content-Length and Transfer-Encoding")
		}
		if req.Minor == 0 {
			return badRequest("HTTP/1.0 request with Transfer-Encoding")
		}
		req.ContentLength = -1
	}
	if f.hosts == 0 && req.Minor == 1 {
		return badRequest("HTTP/1.1 request without a Host header")
	}
	if req.Minor == 0 {
		req.Close = f.connClose || !f.connKeepAlive
	} else {
		req.Close = f.connClose
	}
	return nil
}

// parseContentLength accepts 1*DIGIT only: no sign, no spaces, no list of values.
func parseContentLength(v []byte, limit int64) (int64, error) {
	if len(v) == 0 {
		return 0, badRequest("empty Content-Length")
	}
	var n int64
	tooBig := false
	for _, c := range v {
		if !isDigit(c) {
			return 0, badRequest("invalid Content-Length %s", quote(v))
		}
		// n*10+d <= limit, written so that it cannot overflow; once too big, keep
		// validating the syntax so a malformed value is still a 400.
		if d := int64(c - '0'); !tooBig && limit-d >= 0 && n <= (limit-d)/10 {
			n = n*10 + d
		} else {
			tooBig = true
		}
	}
	if tooBig {
		return 0, errorf(413, "Content-Length %s exceeds the body limit of %d bytes", quote(v), limit)
	}
	return n, nil
}

// forEachToken calls fn with each non-empty element of a comma-separated list, trimmed
// of surrounding whitespace.
func forEachToken(list []byte, fn func(tok []byte)) {
	for len(list) > 0 {
		end := 0
		for end < len(list) && list[end] != ',' {
			end++
		}
		tok := list[:end]
		for len(tok) > 0 && (tok[0] == ' ' || tok[0] == '\t') {
			tok = tok[1:]
		}
		for len(tok) > 0 && (tok[len(tok)-1] == ' ' || tok[len(tok)-1] == '\t') {
			tok = tok[:len(tok)-1]
		}
		if len(tok) > 0 {
			fn(tok)
		}
		if end == len(list) {
			break
		}
		list = list[end+1:]
	}
}
