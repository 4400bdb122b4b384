package http1

import "strconv"

// AppendRequest appends an HTTP/1.1 request to dst, as a load generator or test client
// sends it: request line, Host, headers, Content-Length when body is non-nil, and body.
// Inputs must be valid (a token method, a target without spaces or controls, valid
// header names and values); it does not check them.
func AppendRequest(dst []byte, method, target, host string, body []byte, headers ...Header) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, target...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, host...)
	dst = append(dst, "\r\n"...)
	for _, h := range headers {
		dst = append(dst, h.Name...)
		dst = append(dst, ": "...)
		dst = append(dst, h.Value...)
		dst = append(dst, "\r\n"...)
	}
	if body != nil {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, body...)
}
