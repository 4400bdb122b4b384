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
	"github.com/shoalkv/shoal/proto/http2"
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
	_ eventloop.DrainHandler    = (*httpFront)(nil)
)

// httpConn is one HTTP connection's state; its loop goroutine only.
type httpConn struct {
	httpState
	req       http1.Request
	resp      httpResponse
	continued bool // 100 Continue sent for the request at the front
	served    bool // a request has been parsed: no HTTP/2 preface can come now
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
	if st, ok := c.TLSConnectionState(); ok && st.NegotiatedProtocol == "h2" {
		c.SetContext(f.newH2(c))
		return
	}
	c.SetContext(&httpConn{})
}

// maxBody returns the request body limit OnBoot set.
func (f *httpFront) maxBody() int64 {
	if p := f.parser.Load(); p != nil && p.Limits.MaxBodyBytes > 0 {
		return p.Limits.MaxBodyBytes
	}
	return http1.DefaultMaxBodyBytes
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
	if !ok {
		if h2, ok := c.Context().(*h2Conn); ok {
			return f.h2Traffic(c, h2, in)
		}
		return len(in) // refused by protected mode and closing
	}
	if !hc.served && len(in) > 0 && in[0] == 'P' { // h2c with prior knowledge?
		if complete, ok := http2.CheckPreface(in); ok {
			if !complete {
				return 0
			}
			h2 := f.newH2(c)
			c.SetContext(h2)
			return f.h2Traffic(c, h2, in)
		}
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
		hc.continued, hc.served = false, true
		hc.op = kv.NoCommand
		timer := batch.Start()
		req := httpRequest{method: hc.req.Method, target: hc.req.Target, body: hc.req.Body, h1: &hc.req}
		f.serve(&hc.httpState, &req, &hc.resp)
		out = hc.resp.appendHTTP1(out, date, hc.req.ConnHeader())
		timer.Done(hc.op, httpFailed(hc.resp.status))
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

// serve answers one request, in either HTTP version, into r (whose body
// may alias st's buffers until the next request).
func (f *httpFront) serve(st *httpState, req *httpRequest, r *httpResponse) {
	*r = httpResponse{head: isHead(req.method)}
	path, query := splitTarget(req.target)
	if string(path) == "/healthz" {
		if !isGetOrHead(req.method) {
			st.notAllowed(r, req, &allowGetHead)
			return
		}
		st.text(r, 200, "ok")
		return
	}
	if !f.authorized(req) {
		st.text(r, 401, "authentication required")
		r.extra = &authChallenge
		if r.head {
			r.length = 0 // as before the refactor: a HEAD's 401 says Content-Length: 0
		}
		return
	}
	if string(path) == "/metrics" {
		if !isGetOrHead(req.method) {
			st.notAllowed(r, req, &allowGetHead)
			return
		}
		body := f.h.appendMetrics(st.scratch[:0])
		st.keepScratch(body)
		r.set(200, &promContentType, body)
		return
	}
	rawKey, ok := bytes.CutPrefix(path, []byte("/kv/"))
	if !ok {
		st.text(r, 404, "not found: "+quoteTarget(path))
		return
	}
	incr := false
	if k, found := bytes.CutSuffix(rawKey, []byte("/incr")); found {
		rawKey, incr = k, true
	}
	key, ok := percentDecode(st.key[:0], rawKey)
	if !ok {
		st.text(r, 400, "invalid percent-encoding in key "+quoteTarget(rawKey))
		return
	}
	st.key = key
	if op, ok := f.commandOf(req.method, incr); ok {
		if msg := f.kv.FrontDenied(op, key); msg != "" { // the default user's ACL rules
			st.op = op
			st.text(r, 403, msg)
			return
		}
	}
	if incr {
		if string(req.method) != "POST" {
			st.notAllowed(r, req, &allowPost)
			return
		}
		st.op = f.incrID
		f.incr(st, key, query, r)
		return
	}
	switch string(req.method) {
	case "GET", "HEAD":
		st.op = f.getID
		val, found, err := f.kv.Store().Get(st.scratch[:0], key)
		st.keepScratch(val)
		switch {
		case err != nil:
			st.text(r, 409, err.Error())
		case !found:
			st.text(r, 404, "no such key")
		default:
			r.set(200, &octetStream, val)
		}
		return
	case "PUT":
		st.op = f.setID
		if f.kv.Logging() {
			st.text(r, 503, errFrontNotLogged)
			return
		}
		o := store.SetOptions{}
		if ttl, present := queryParam(query, "ttl"); present {
			secs, ok := ascii.ParseInt(ttl)
			if !ok || secs <= 0 || secs > maxTTLSeconds {
				st.text(r, 400, "invalid ttl "+strconv.Quote(string(ttl))+": want whole seconds from 1 to "+strconv.FormatInt(maxTTLSeconds, 10))
				return
			}
			o.ExpireAt = f.kv.Store().Now() + secs*1000
		}
		if _, _, _, err := f.kv.Store().Set(nil, key, req.body, o); err != nil {
			st.text(r, storeErrorStatus(err), err.Error())
			return
		}
		f.kv.Wrote(f.setID, key, o.ExpireAt != 0)
		r.set(204, nil, nil)
		return
	case "DELETE":
		st.op = f.delID
		if f.kv.Logging() {
			st.text(r, 503, errFrontNotLogged)
			return
		}
		one := [1][]byte{key}
		if f.kv.Store().Del(one[:]) == 0 {
			st.text(r, 404, "no such key")
			return
		}
		f.kv.Wrote(f.delID, key, false)
		r.set(204, nil, nil)
		return
	}
	st.notAllowed(r, req, &allowAll)
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
func (f *httpFront) incr(st *httpState, key, query []byte, r *httpResponse) {
	by := int64(1)
	if v, present := queryParam(query, "by"); present {
		n, ok := ascii.ParseInt(v)
		if !ok {
			st.text(r, 400, "invalid by "+strconv.Quote(string(v))+": "+store.ErrNotInteger.Error())
			return
		}
		by = n
	}
	if f.kv.Logging() {
		st.text(r, 503, errFrontNotLogged)
		return
	}
	n, err := f.kv.Store().IncrBy(key, by)
	if err != nil {
		st.text(r, storeErrorStatus(err), err.Error())
		return
	}
	f.kv.Wrote(f.incrID, key, false)
	st.textBuf = strconv.AppendInt(st.textBuf[:0], n, 10)
	r.set(200, &textPlain, st.textBuf)
}

// httpFailed reports whether a response's status is an error as a Redis
// client would see it: 4xx and 5xx, but for 404 (a missing key is a nil
// reply, not an error).
func httpFailed(status int) bool { return status >= 400 && status != 404 }

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

func isHead(m []byte) bool      { return string(m) == "HEAD" }
func isGetOrHead(m []byte) bool { return string(m) == "GET" || string(m) == "HEAD" }
func quoteTarget(b []byte) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "..."
	}
	return strconv.Quote(string(b))
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
func (f *httpFront) authorized(req *httpRequest) bool {
	if !f.kv.AuthRequired() {
		return true
	}
	auth := req.authorization()
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
