package server

import (
	"strconv"

	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/http1"
)

// One path for both HTTP versions: each turns its request into an
// httpRequest, httpFront.serve answers it into an httpResponse, and each
// encodes that in its own framing (appendHTTP1 here, h2Conn.respond for
// HTTP/2), so the API, the auth rules and the status codes cannot drift
// apart.

// httpState is a connection's buffers for serve; its loop goroutine only.
type httpState struct {
	key     []byte          // the decoded key of the current request
	scratch []byte          // a GET's value or /metrics until its response is written
	textBuf []byte          // a text response's body
	op      kv.FrontCommand // the command the request ran, or kv.NoCommand
}

// httpRequest is one request as serve sees it.
type httpRequest struct {
	method, target, body []byte
	auth                 []byte         // the Authorization value (HTTP/2)
	h1                   *http1.Request // HTTP/1: headers are looked up when needed
}

// authorization returns the request's Authorization header, or nil.
func (r *httpRequest) authorization() []byte {
	if r.h1 != nil {
		return r.h1.Header("authorization")
	}
	return r.auth
}

// httpResponse is serve's answer, before either version frames it. body
// may alias the connection's httpState until its next request.
type httpResponse struct {
	status int
	ctype  *http1.Header // Content-Type, or nil
	extra  *http1.Header // Allow or WWW-Authenticate, or nil
	body   []byte
	length int64 // the Content-Length to announce: len(body), but see serve's 401
	head   bool  // a HEAD request: the head only
}

var (
	allowGetHead = http1.Header{Name: []byte("Allow"), Value: []byte("GET, HEAD")}
	allowPost    = http1.Header{Name: []byte("Allow"), Value: []byte("POST")}
	allowAll     = http1.Header{Name: []byte("Allow"), Value: []byte("GET, HEAD, PUT, DELETE")}
)

// set fills r with a status, a content type and a body.
func (r *httpResponse) set(status int, ctype *http1.Header, body []byte) {
	r.status, r.ctype, r.body, r.length = status, ctype, body, int64(len(body))
}

// text answers with a one-line text body: msg and a newline.
func (st *httpState) text(r *httpResponse, status int, msg string) {
	st.textBuf = append(append(st.textBuf[:0], msg...), '\n')
	r.set(status, &textPlain, st.textBuf)
}

// notAllowed answers 405 with the methods the path allows. A HEAD's
// Content-Length says 0, not the GET's length: acceptable for errors.
func (st *httpState) notAllowed(r *httpResponse, req *httpRequest, allow *http1.Header) {
	msg := "method " + strconv.Quote(string(req.method)) + " not allowed; allowed: " + string(allow.Value)
	st.text(r, 405, msg)
	r.extra = allow
	if r.head {
		r.length = 0
	}
}

// keepScratch keeps b's array for the next request unless it grew large.
func (st *httpState) keepScratch(b []byte) {
	if cap(b) <= 64<<10 {
		st.scratch = b[:0]
	} else {
		st.scratch = nil
	}
}

// appendHTTP1 appends r as an HTTP/1.1 response.
func (r *httpResponse) appendHTTP1(out []byte, date *http1.DateClock, conn http1.ConnHeader) []byte {
	var hs [2]http1.Header
	n := 0
	if r.ctype != nil {
		hs[n], n = *r.ctype, n+1
	}
	if r.extra != nil {
		hs[n], n = *r.extra, n+1
	}
	if r.head {
		return http1.AppendResponseHead(out, date, r.status, conn, r.length, hs[:n]...)
	}
	return http1.AppendResponse(out, date, r.status, conn, r.body, hs[:n]...)
}
