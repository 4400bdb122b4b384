package server

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/http1"
	"github.com/shoalkv/shoal/store"
)

// The HTTP front: the keyspace as a small REST API, on the same loops and
// store as RESP (see HTTPHandler).

// maxHTTPBody bounds a PUT body as proto-max-bulk-len bounds a RESP value.
const maxHTTPBody = store.MaxStringLen

// HTTPHandler returns an eventloop.Handler serving h's keyspace over
// HTTP/1.1 (keep-alive and pipelined), for an eventloop.Listener beside the
// RESP address:
//
//	GET    /kv/{key}          200 with the value, 404 if missing (HEAD: the same without body)
//	PUT    /kv/{key}[?ttl=N]  the body becomes the value, expiring in N seconds; 204
//	DELETE /kv/{key}          204, or 404 if missing
//	POST   /kv/{key}/incr[?by=N]  INCRBY: 200 with the new integer as text;
//	                          400 for a bad N, 409 if the value is not an integer or would overflow
//	GET    /healthz           200 "ok"
//	GET    /metrics           Prometheus text format
//
// Keys are percent-decoded, so any byte string can be a key ("/kv/a%2Fincr"
// is the key "a/incr"; "/kv/a/b" is "a/b"). Other methods get 405 with
// Allow, other paths 404, and requests the codec refuses its 400, 413, 431,
// 501 or 505 with a short text body, and the connection closes.
//
// Authentication follows the RESP side: with requirepass set, every request
// except /healthz needs "Authorization: Bearer <password>" or Basic with
// any user name and the password, or gets 401. Protected mode refuses
// connections from other hosts (403, then close) as RESP's does. Bodies are
// limited to the server's MaxInboundBuffer less 8 KiB of headers, at most
// 512 MiB.
//
// The handler owns the clock its Date headers come from: it starts it in
// OnBoot and stops it in OnShutdown.
func (h *Handler) HTTPHandler() eventloop.Handler {
	return &httpFront{h: h, kv: h.kv,
		getID: kv.FrontCommandOf("get"), setID: kv.FrontCommandOf("set"), delID: kv.FrontCommandOf("del"), incrID: kv.FrontCommandOf("incrby")}
}

// httpFront is the HTTP front's Handler. One serves every connection of
// its listener, concurrently from all loops.
type httpFront struct {
	h      *Handler
	kv     *kv.Handler
	date   atomic.Pointer[http1.DateClock]
	parser atomic.Pointer[http1.Parser] // limits set in OnBoot from the Server's

	getID, setID, delID, incrID kv.FrontCommand // the commands requests are counted as
}

var (
	_ eventloop.OpenHandler     = (*httpFront)(nil)
	_ eventloop.BootHandler     = (*httpFront)(nil)
	_ eventloop.ShutdownHandler = (*httpFront)(nil)
)

// httpConn is one HTTP connection's state; its loop goroutine only.
type httpConn struct {
	req       http1.Request
	key       []byte          // the decoded key of the current request
	scratch   []byte          // a GET's value before its head is written
	continued bool            // 100 Continue sent for the request at the front
	op        kv.FrontCommand // the command the request ran, or kv.NoCommand
}

// OnBoot implements eventloop.BootHandler: it starts the Date clock and
// sizes the body limit from the Server's inbound limit.
func (f *httpFront) OnBoot(s *eventloop.Server) {
	body := int64(s.Options().MaxInboundBuffer) - http1.DefaultMaxHeaderBytes
	if body > maxHTTPBody {
		body = maxHTTPBody
	}
	if body < 1 {
		body = 1
	}
	f.parser.Store(&http1.Parser{Limits: http1.Limits{MaxBodyBytes: body}})
	if old := f.date.Swap(http1.NewDateClock()); old != nil {
		old.Stop()
	}
}

// OnShutdown implements eventloop.ShutdownHandler: it stops the Date clock.
func (f *httpFront) OnShutdown() {
	if d := f.date.Load(); d != nil {
		d.Stop()
	}
}

// OnOpen implements eventloop.OpenHandler: protected mode, then the state.
func (f *httpFront) OnOpen(c *eventloop.Conn) {
	if f.h.refused(c) {
		msg := []byte(protectedModeText)
		c.SetOutputBuffer(http1.AppendResponse(c.OutputBuffer(), f.date.Load(), 403, http1.Close, msg, textPlain))
		_ = c.Close()
		return
	}
	c.SetContext(&httpConn{})
}

var (
	textPlain     = http1.Header{Name: []byte("Content-Type"), Value: []byte("text/plain; charset=utf-8")}
	octetStream   = http1.Header{Name: []byte("Content-Type"), Value: []byte("application/octet-stream")}
	authChallenge = http1.Header{Name: []byte("WWW-Authenticate"), Value: []byte(`Basic realm="shoal", charset="UTF-8"`)}
)

// OnTraffic implements eventloop.Handler: it answers every complete
// request in `in`, in order, and leaves a partial one for the next call.
func (f *httpFront) OnTraffic(c *eventloop.Conn, in []byte) int {
	hc, ok := c.Context().(*httpConn)
	if !ok { // refused by protected mode and closing
		return len(in)
	}
	p := f.parser.Load()
	if p == nil {
		p = &http1.Parser{}
	}
	date := f.date.Load()
	batch := f.kv.BeginFrontBatch(c.LoopIndex()) // as RESP batches: no EXEC runs meanwhile
	defer batch.End()
	out := c.OutputBuffer()
	consumed := 0
	for consumed < len(in) {
		n, err := p.Parse(in[consumed:], &hc.req)
		if err == http1.ErrIncomplete {
			out = hc.maybeContinue(p, in[consumed:], out)
			break
		}
		if err != nil {
			out = http1.AppendErrorResponse(out, date, err)
			c.SetOutputBuffer(out)
			_ = c.Close()
			return len(in)
		}
		consumed += n
		hc.continued = false
		hc.op = kv.NoCommand
		start, timer := len(out), batch.Start()
		out = f.serve(hc, &hc.req, date, out)
		timer.Done(hc.op, httpFailed(out[start:]))
		if hc.req.Close {
			c.SetOutputBuffer(out)
			_ = c.Close()
			return len(in)
		}
		if len(out) >= int(f.h.flushBytes.Load()) {
			c.SetOutputBuffer(out)
			if c.Flush() != nil {
				return len(in)
			}
			if c.OutputFull() {
				return consumed // the loop presents the rest once the output drains
			}
			out = c.OutputBuffer()
		}
	}
	c.SetOutputBuffer(out)
	return consumed
}

// maybeContinue sends "100 Continue" once for a request whose head asked
// for it (curl does for bodies over 1 KiB) and whose body has not arrived.
func (hc *httpConn) maybeContinue(p *http1.Parser, in, out []byte) []byte {
	if hc.continued {
		return out
	}
	if _, err := p.ParseHead(in, &hc.req); err == nil && hc.req.Expect100 {
		hc.continued = true
		out = append(out, "HTTP/1.1 100 Continue\r\n\r\n"...)
	}
	return out
}

// serve answers one parsed request.
func (f *httpFront) serve(hc *httpConn, req *http1.Request, date *http1.DateClock, out []byte) []byte {
	path, query := splitTarget(req.Target)
	conn := req.ConnHeader()
	reply := func(status int, msg string) []byte {
		return appendHTTPText(out, date, status, conn, req, msg)
	}
	if string(path) == "/healthz" {
		if !isGetOrHead(req.Method) {
			return appendNotAllowed(out, date, conn, req, "GET, HEAD")
		}
		return reply(200, "ok")
	}
	if !f.authorized(req) {
		return http1.AppendResponse(out, date, 401, conn, headBody(req, "authentication required\n"), textPlain, authChallenge)
	}
	if string(path) == "/metrics" {
		if !isGetOrHead(req.Method) {
			return appendNotAllowed(out, date, conn, req, "GET, HEAD")
		}
		body := f.h.appendMetrics(hc.scratch[:0])
		out = http1.AppendResponseHead(out, date, 200, conn, int64(len(body)), promContentType)
		if !isHead(req.Method) {
			out = append(out, body...)
		}
		hc.keepScratch(body)
		return out
	}
	rawKey, ok := bytes.CutPrefix(path, []byte("/kv/"))
	if !ok {
		return reply(404, "not found: "+quoteTarget(path))
	}
	incr := false
	if k, found := bytes.CutSuffix(rawKey, []byte("/incr")); found {
		rawKey, incr = k, true
	}
	key, ok := percentDecode(hc.key[:0], rawKey)
	if !ok {
		return reply(400, "invalid percent-encoding in key "+quoteTarget(rawKey))
	}
	hc.key = key
	if op, ok := f.commandOf(req.Method, incr); ok {
		if msg := f.kv.FrontDenied(op, key); msg != "" { // the default user's ACL rules
			hc.op = op
			return reply(403, msg)
		}
	}
	if incr {
		if string(req.Method) != "POST" {
			return appendNotAllowed(out, date, conn, req, "POST")
		}
		hc.op = f.incrID
		return f.incr(key, query, req, date, out)
	}
	switch string(req.Method) {
	case "GET", "HEAD":
		hc.op = f.getID
		val, found, err := f.kv.Store().Get(hc.scratch[:0], key)
		hc.keepScratch(val)
		switch {
		case err != nil:
			return reply(409, err.Error())
		case !found:
			return reply(404, "no such key")
		}
		out = http1.AppendResponseHead(out, date, 200, conn, int64(len(val)), octetStream)
		if !isHead(req.Method) {
			out = append(out, val...)
		}
		return out
	case "PUT":
		hc.op = f.setID
		if f.kv.Logging() {
			return reply(503, errFrontNotLogged)
		}
		o := store.SetOptions{}
		if ttl, present := queryParam(query, "ttl"); present {
			secs, ok := ascii.ParseInt(ttl)
			if !ok || secs <= 0 || secs > maxTTLSeconds {
				return reply(400, "invalid ttl "+strconv.Quote(string(ttl))+": want whole seconds from 1 to "+strconv.FormatInt(maxTTLSeconds, 10))
			}
			o.ExpireAt = f.kv.Store().Now() + secs*1000
		}
		if _, _, _, err := f.kv.Store().Set(nil, key, req.Body, o); err != nil {
			return reply(storeErrorStatus(err), err.Error())
		}
		f.kv.Wrote(f.setID, key, o.ExpireAt != 0)
		return http1.AppendResponse(out, date, 204, conn, nil)
	case "DELETE":
		hc.op = f.delID
		if f.kv.Logging() {
			return reply(503, errFrontNotLogged)
		}
		one := [1][]byte{key}
		if f.kv.Store().Del(one[:]) == 0 {
			return reply(404, "no such key")
		}
		f.kv.Wrote(f.delID, key, false)
		return http1.AppendResponse(out, date, 204, conn, nil)
	}
	return appendNotAllowed(out, date, conn, req, "GET, HEAD, PUT, DELETE")
}

// commandOf returns the command a /kv request runs as, if its method has one.
func (f *httpFront) commandOf(method []byte, incr bool) (kv.FrontCommand, bool) {
	switch {
	case incr:
		return f.incrID, string(method) == "POST"
	case isGetOrHead(method):
		return f.getID, true
	case string(method) == "PUT":
		return f.setID, true
	case string(method) == "DELETE":
		return f.delID, true
	}
	return kv.NoCommand, false
}

// errFrontNotLogged answers a write over the HTTP or frame front while the
// append-only file is on: those writes bypass the command path that logs
// them, so they are refused rather than acknowledged and lost on restart.
const errFrontNotLogged = "writes over this front are not logged to the append-only file; with appendonly yes write over RESP"

// maxTTLSeconds keeps now+ttl in milliseconds far from overflowing.
const maxTTLSeconds = 1 << 40

// incr is POST /kv/{key}/incr: INCRBY with ?by= (default 1).
func (f *httpFront) incr(key, query []byte, req *http1.Request, date *http1.DateClock, out []byte) []byte {
	conn := req.ConnHeader()
	by := int64(1)
	if v, present := queryParam(query, "by"); present {
		n, ok := ascii.ParseInt(v)
		if !ok {
			return appendHTTPText(out, date, 400, conn, req, "invalid by "+strconv.Quote(string(v))+": "+store.ErrNotInteger.Error())
		}
		by = n
	}
	if f.kv.Logging() {
		return appendHTTPText(out, date, 503, conn, req, errFrontNotLogged)
	}
	n, err := f.kv.Store().IncrBy(key, by)
	if err != nil {
		return appendHTTPText(out, date, storeErrorStatus(err), conn, req, err.Error())
	}
	f.kv.Wrote(f.incrID, key, false)
	var num [20]byte
	return http1.AppendResponse(out, date, 200, conn, strconv.AppendInt(num[:0], n, 10), textPlain)
}

// httpFailed reports whether resp, one response, is an error as a Redis
// client would see it: 4xx and 5xx, but for 404 (a missing key is a nil
// reply, not an error).
func httpFailed(resp []byte) bool {
	if len(resp) < 12 {
		return false
	}
	status := resp[9:12]
	return status[0] >= '4' && string(status) != "404"
}

// storeErrorStatus maps a store error to an HTTP status: 409 when the
// key's current value is in the way, 507 when memory is.
func storeErrorStatus(err error) int {
	switch {
	case errors.Is(err, store.ErrOOM):
		return 507
	case errors.Is(err, store.ErrTooLong):
		return 413
	}
	return 409 // WRONGTYPE, not an integer, overflow
}

// appendHTTPText appends a response with a one-line text body (msg and a
// newline); for HEAD only the head.
func appendHTTPText(out []byte, date *http1.DateClock, status int, conn http1.ConnHeader, req *http1.Request, msg string) []byte {
	body := len(msg) + 1
	out = http1.AppendResponseHead(out, date, status, conn, int64(body), textPlain)
	if isHead(req.Method) {
		return out
	}
	out = append(out, msg...)
	return append(out, '\n')
}

func appendNotAllowed(out []byte, date *http1.DateClock, conn http1.ConnHeader, req *http1.Request, allow string) []byte {
	msg := "method " + strconv.Quote(string(req.Method)) + " not allowed; allowed: " + allow + "\n"
	return http1.AppendResponse(out, date, 405, conn, headBody(req, msg), textPlain,
		http1.Header{Name: []byte("Allow"), Value: []byte(allow)})
}

// headBody returns msg as a body, or nil for HEAD (whose Content-Length
// then says 0 rather than the GET's length: acceptable for errors).
func headBody(req *http1.Request, msg string) []byte {
	if isHead(req.Method) {
		return nil
	}
	return []byte(msg)
}

func isHead(m []byte) bool      { return string(m) == "HEAD" }
func isGetOrHead(m []byte) bool { return string(m) == "GET" || string(m) == "HEAD" }
func quoteTarget(b []byte) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "..."
	}
	return strconv.Quote(string(b))
}

// keepScratch keeps b's array for the next request unless it grew large.
func (hc *httpConn) keepScratch(b []byte) {
	if cap(b) <= 64<<10 {
		hc.scratch = b[:0]
	} else {
		hc.scratch = nil
	}
}

// splitTarget returns the path and query of an origin-form target
// ("/p?q") or an absolute-form one ("http://host/p?q").
func splitTarget(t []byte) (path, query []byte) {
	if len(t) > 0 && t[0] != '/' {
		if i := bytes.Index(t, []byte("://")); i >= 0 {
			rest := t[i+3:]
			if j := bytes.IndexByte(rest, '/'); j >= 0 {
				t = rest[j:]
			} else {
				t = []byte("/")
			}
		}
	}
	path, query, _ = bytes.Cut(t, []byte("?"))
	return path, query
}

// queryParam returns the raw value of the first name=value in query.
func queryParam(query []byte, name string) (value []byte, present bool) {
	for len(query) > 0 {
		var pair []byte
		pair, query, _ = bytes.Cut(query, []byte("&"))
		k, v, _ := bytes.Cut(pair, []byte("="))
		if string(k) == name {
			return v, true
		}
	}
	return nil, false
}

// percentDecode appends s with %XX escapes decoded to dst. '+' is kept:
// in a path it is a plus sign. It reports false for a malformed escape.
func percentDecode(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			dst = append(dst, s[i])
			continue
		}
		if i+2 >= len(s) {
			return dst, false
		}
		hi, lo := ascii.Unhex(s[i+1]), ascii.Unhex(s[i+2])
		if hi < 0 || lo < 0 {
			return dst, false
		}
		dst = append(dst, byte(hi<<4|lo))
		i += 2
	}
	return dst, true
}

// authorized reports whether req may use the keyspace: no password is
// required, or its Authorization header carries the password as a Bearer
// token or as the password of Basic credentials (any user name, as AUTH
// with a single argument). Checked per request: CONFIG SET requirepass on
// the RESP side applies at once.
func (f *httpFront) authorized(req *http1.Request) bool {
	if !f.kv.AuthRequired() {
		return true
	}
	auth := req.Header("authorization")
	scheme, cred, _ := bytes.Cut(auth, []byte(" "))
	cred = bytes.TrimLeft(cred, " ")
	switch {
	case ascii.EqualFold(scheme, "bearer"):
		return f.kv.PasswordMatches(cred)
	case ascii.EqualFold(scheme, "basic"):
		var buf [512]byte
		if base64.StdEncoding.DecodedLen(len(cred)) > len(buf) {
			return false
		}
		n, err := base64.StdEncoding.Decode(buf[:], cred)
		if err != nil {
			return false
		}
		_, pass, ok := bytes.Cut(buf[:n], []byte(":"))
		return ok && f.kv.PasswordMatches(pass)
	}
	return false
}
