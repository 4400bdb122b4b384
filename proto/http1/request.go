package http1

import "github.com/shoalkv/shoal/internal/ascii"

// Header is one header field: Name as sent (any case) and Value with surrounding
// whitespace trimmed. Both alias the parsed buffer.
type Header struct {
	Name  []byte
	Value []byte
}

// Request is one parsed request. All slices alias the buffer given to Parse.
type Request struct {
	Method []byte
	Target []byte // request-target exactly as sent: "/path?q", "*", "host:443", "http://h/p"
	Major  int    // 1
	Minor  int    // 0 or 1
	// Headers lists every field in order. Its backing array is reused by the next Parse
	// into this Request, so a Request kept per connection parses without allocating.
	Headers []Header
	Host    []byte // the Host header's value, nil if absent
	// ContentLength is the Content-Length header's value, 0 when absent and -1 when the
	// body is chunked.
	ContentLength int64
	Chunked       bool
	Body          []byte // decoded body; empty when the request has none
	// Close reports whether the connection must close after the response, from the
	// version and the Connection header.
	Close bool
	// Expect100 reports "Expect: 100-continue". A server that wants the body should send
	// "HTTP/1.1 100 Continue\r\n\r\n" once ParseHead succeeds and Parse returns
	// ErrIncomplete.
	Expect100 bool
}

func (r *Request) reset() {
	headers := r.Headers[:0]
	*r = Request{Headers: headers}
}

// Header returns the value of the first header named name (case-insensitive), or nil.
func (r *Request) Header(name string) []byte {
	for i := range r.Headers {
		if ascii.EqualFold(r.Headers[i].Name, name) {
			return r.Headers[i].Value
		}
	}
	return nil
}

// Proto returns "HTTP/1.1" or "HTTP/1.0".
func (r *Request) Proto() string {
	if r.Minor == 0 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// ConnHeader returns the connection handling the response to r should announce.
func (r *Request) ConnHeader() ConnHeader {
	switch {
	case r.Close:
		return Close
	case r.Minor == 0:
		return KeepAliveHTTP10
	}
	return KeepAlive
}

// tokenChars marks tchar from RFC 9110 section 5.6.2.
var tokenChars = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// valueChars marks bytes allowed in a field value: HTAB, SP, VCHAR and obs-text.
var valueChars = func() (t [256]bool) {
	t['\t'] = true
	for c := 0x20; c < 0x100; c++ {
		t[c] = c != 0x7f
	}
	return t
}()

// ValidFieldName reports whether name is a valid header field name (a non-empty token).
// AppendResponse does not check the headers it is given; use this for untrusted names.
func ValidFieldName(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if !tokenChars[c] {
			return false
		}
	}
	return true
}

// ValidFieldValue reports whether value may be sent as a header value: no CR, LF or
// other control bytes except HTAB. Use it for untrusted values before AppendResponse.
func ValidFieldValue(value []byte) bool {
	for _, c := range value {
		if !valueChars[c] {
			return false
		}
	}
	return true
}
