package server

import (
	"bytes"
	"strconv"

	"golang.org/x/net/http2/hpack"

	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/http1"
	"github.com/shoalkv/shoal/proto/http2"
)

// HTTP/2 requests and responses: header blocks in, the shared serve, and
// HEADERS and flow-controlled DATA out.

// h2Fields is the request a header block decodes to.
type h2Fields struct {
	method, path, auth []byte
	hasMethod, hasPath bool
	hasScheme, regular bool
	size               int    // RFC 7541 size of the fields so far
	tooBig             bool   // over SETTINGS_MAX_HEADER_LIST_SIZE
	malformed          string // why the request is malformed, or ""
}

func (d *h2Fields) reset() {
	*d = h2Fields{method: d.method[:0], path: d.path[:0], auth: d.auth[:0]}
}

// onField is the HPACK decoder's emit function.
func (hc *h2Conn) onField(f hpack.HeaderField) {
	d := &hc.fields
	d.size += int(f.Size())
	if d.size > h2MaxHeaderList {
		d.tooBig = true
		hc.dec.SetEmitEnabled(false) // decode the rest for the table's sake, keep nothing
		return
	}
	if d.malformed != "" {
		return
	}
	if f.IsPseudo() {
		if d.regular {
			d.malformed = "pseudo-header " + f.Name + " after a regular header"
			return
		}
		switch f.Name {
		case ":method":
			if d.hasMethod {
				d.malformed = "two :method pseudo-headers"
			}
			d.method, d.hasMethod = append(d.method[:0], f.Value...), true
		case ":path":
			if d.hasPath {
				d.malformed = "two :path pseudo-headers"
			}
			d.path, d.hasPath = append(d.path[:0], f.Value...), true
		case ":scheme":
			d.hasScheme = true
		case ":authority":
		default:
			d.malformed = "unknown pseudo-header " + f.Name
		}
		return
	}
	d.regular = true
	for i := 0; i < len(f.Name); i++ {
		if c := f.Name[i]; 'A' <= c && c <= 'Z' {
			d.malformed = "upper-case header name " + strconv.Quote(f.Name)
			return
		}
	}
	switch f.Name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		d.malformed = "connection-specific header " + f.Name
	case "te":
		if f.Value != "trailers" {
			d.malformed = "te header other than trailers"
		}
	case "authorization":
		d.auth = append(d.auth[:0], f.Value...)
	}
}

// headers starts a header block.
func (hc *h2Conn) headers(h http2.FrameHeader, p []byte) error {
	block, _, err := http2.ParseHeaders(h, p)
	hc.blockErr = nil
	if e, ok := err.(*http2.Error); ok && e.Stream != 0 {
		hc.blockErr, err = e, nil // decode the block all the same: HPACK's state is the connection's
	}
	if err != nil {
		return err
	}
	if s := hc.streams[h.StreamID]; s == nil { // a new stream
		if h.StreamID%2 == 0 || h.StreamID <= hc.lastID {
			return connErr(http2.ErrCodeProtocol, "HEADERS on stream "+strconv.FormatUint(uint64(h.StreamID), 10)+
				", which is not a new odd stream above "+strconv.FormatUint(uint64(hc.lastID), 10))
		}
	} else if s.recvDone || !h.Flags.Has(http2.FlagEndStream) {
		return streamErr(h.StreamID, http2.ErrCodeProtocol, "HEADERS after the request's end, or trailers without END_STREAM")
	}
	hc.cont, hc.contEnd, hc.block = h.StreamID, h.Flags.Has(http2.FlagEndStream), hc.block[:0]
	return hc.addBlock(h, block)
}

// addBlock adds a fragment to the header block, bounded (the
// CONTINUATION flood), and decodes the block once it ends.
func (hc *h2Conn) addBlock(h http2.FrameHeader, frag []byte) error {
	if len(hc.block)+len(frag) > h2MaxHeaderBlock {
		return connErr(http2.ErrCodeEnhanceYourCalm, "header block over "+strconv.Itoa(h2MaxHeaderBlock)+" bytes")
	}
	hc.block = append(hc.block, frag...)
	if !h.Flags.Has(http2.FlagEndHeaders) {
		return nil
	}
	id := hc.cont
	hc.cont = 0
	return hc.endBlock(id, hc.contEnd)
}

// endBlock decodes a whole header block and opens, answers or refuses its
// stream.
func (hc *h2Conn) endBlock(id uint32, endStream bool) error {
	hc.fields.reset()
	hc.dec.SetEmitEnabled(true)
	_, err := hc.dec.Write(hc.block)
	if err == nil {
		err = hc.dec.Close()
	}
	if cap(hc.block) > 4<<10 {
		hc.block = nil
	}
	if err != nil {
		return connErr(http2.ErrCodeCompression, "HPACK: "+err.Error())
	}
	if hc.blockErr != nil {
		if hc.streams[id] == nil {
			hc.lastID = max(hc.lastID, id)
		}
		return hc.blockErr
	}
	if s := hc.streams[id]; s != nil { // trailers: the request is complete
		s.recvDone = true
		hc.bodies -= len(s.body)
		hc.serveStream(s, &httpRequest{method: s.method, target: s.path, auth: s.auth, body: s.body})
		return nil
	}
	hc.lastID = id
	hc.opened++
	d := &hc.fields
	switch {
	case hc.goaway:
		return nil // above the last stream GOAWAY announced: ignored
	case len(hc.streams) >= h2MaxStreams:
		return streamErr(id, http2.ErrCodeRefusedStream, "over SETTINGS_MAX_CONCURRENT_STREAMS 100")
	case hc.pending > h2MaxPending:
		return streamErr(id, http2.ErrCodeRefusedStream, "responses wait for the client's flow-control window")
	case d.tooBig:
		hc.text(id, 431, "header list over "+strconv.Itoa(h2MaxHeaderList)+" bytes", !endStream)
		return nil
	case d.malformed == "" && (!d.hasMethod || !d.hasScheme || !d.hasPath || len(d.path) == 0):
		d.malformed = "missing :method, :scheme or :path"
	}
	if d.malformed != "" {
		return streamErr(id, http2.ErrCodeProtocol, "malformed request: "+d.malformed)
	}
	if endStream {
		hc.serveStream(nil, &httpRequest{method: d.method, target: d.path, auth: d.auth})
		hc.respondTo(id, nil)
		return nil
	}
	hc.streams[id] = &h2Stream{id: id, method: bytes.Clone(d.method), path: bytes.Clone(d.path), auth: bytes.Clone(d.auth),
		recvWindow: h2StreamWindow, sendWindow: hc.peerWindow}
	return nil
}

// text answers a stream with a text response outside serve (a request
// refused before it is parsed), resetting it if the peer is still sending.
func (hc *h2Conn) text(id uint32, status int, msg string, reset bool) {
	hc.drop(id) // whatever the request brought so far
	hc.httpState.text(&hc.resp, status, msg)
	hc.respondTo(id, nil)
	if reset && hc.streams[id] == nil { // (a response still waiting for window is not cut)
		hc.out = http2.AppendRSTStream(hc.out, id, http2.ErrCodeNo)
	}
}

// data takes a DATA frame into its stream's body, crediting the windows
// back as the loop takes the bytes.
func (hc *h2Conn) data(h http2.FrameHeader, p []byte) error {
	data, err := http2.ParseData(h, p)
	if err != nil {
		return err
	}
	n := int64(h.Length)
	hc.recvWindow -= n
	if hc.recvWindow < 0 {
		return connErr(http2.ErrCodeFlowControl, "DATA beyond the connection's flow-control window")
	}
	hc.recvUsed += n
	if hc.recvUsed >= h2ConnWindow/2 {
		hc.out = http2.AppendWindowUpdate(hc.out, 0, uint32(hc.recvUsed))
		hc.recvWindow += hc.recvUsed
		hc.recvUsed = 0
	}
	s := hc.streams[h.StreamID]
	switch {
	case s == nil && h.StreamID > hc.lastID:
		return connErr(http2.ErrCodeProtocol, "DATA on an idle stream")
	case s == nil || s.recvDone:
		return streamErr(h.StreamID, http2.ErrCodeStreamClosed, "DATA after the request's end")
	}
	s.recvWindow -= n
	if s.recvWindow < 0 {
		return streamErr(h.StreamID, http2.ErrCodeFlowControl, "DATA beyond the stream's flow-control window")
	}
	limit := int(hc.f.maxBody())
	if len(s.body)+len(data) > limit {
		hc.text(s.id, 413, "body over "+strconv.Itoa(limit)+" bytes", !h.Flags.Has(http2.FlagEndStream))
		return nil
	}
	if hc.bodies+len(data) > limit {
		return connErr(http2.ErrCodeEnhanceYourCalm, "request bodies in progress over "+strconv.Itoa(limit)+" bytes")
	}
	s.body = append(s.body, data...)
	hc.bodies += len(data)
	if h.Flags.Has(http2.FlagEndStream) {
		s.recvDone = true
		hc.bodies -= len(s.body)
		hc.serveStream(s, &httpRequest{method: s.method, target: s.path, auth: s.auth, body: s.body})
		return nil
	}
	s.recvUsed += n
	if s.recvUsed >= h2StreamWindow/2 {
		hc.out = http2.AppendWindowUpdate(hc.out, s.id, uint32(s.recvUsed))
		s.recvWindow += s.recvUsed
		s.recvUsed = 0
	}
	return nil
}

// serveStream answers a complete request: s is its stream, or nil when
// its HEADERS ended it.
func (hc *h2Conn) serveStream(s *h2Stream, req *httpRequest) {
	hc.op = kv.NoCommand
	timer := hc.batch.Start()
	hc.f.serve(&hc.httpState, req, &hc.resp)
	timer.Done(hc.op, httpFailed(hc.resp.status))
	if s != nil {
		s.body, s.method, s.path, s.auth = nil, nil, nil, nil
		hc.respondTo(s.id, s)
	}
}

// respondTo writes hc.resp on stream id: HEADERS, and the body as DATA as
// far as the windows allow; the rest waits in the stream.
func (hc *h2Conn) respondTo(id uint32, s *h2Stream) {
	r := &hc.resp
	hc.encBuf.Reset()
	hc.field(":status", h2Status(r.status))
	hc.field("date", hc.date.value(hc.f.date.Load()))
	if r.ctype != nil {
		hc.field("content-type", h2Value(r.ctype))
	}
	if r.extra != nil {
		name := "allow"
		if r.extra == &authChallenge {
			name = "www-authenticate"
		}
		hc.field(name, h2Value(r.extra))
	}
	bodied := r.status >= 200 && r.status != 204 && r.status != 304
	if bodied {
		hc.field("content-length", strconv.FormatInt(r.length, 10))
	}
	body := r.body
	if r.head || !bodied {
		body = nil
	}
	hc.out = http2.AppendHeaderBlock(hc.out, id, len(body) == 0, hc.encBuf.Bytes(), hc.peerMaxFrame)
	if hc.encBuf.Cap() > 16<<10 {
		hc.encBuf = bytes.Buffer{}
	}
	if len(body) == 0 {
		if s != nil {
			hc.drop(id)
		}
		return
	}
	if s == nil {
		s = &h2Stream{id: id, recvDone: true, sendWindow: hc.peerWindow}
	}
	rest := hc.sendData(s, body)
	if len(rest) == 0 {
		hc.drop(id)
		return
	}
	s.out = append(s.out[:0], rest...) // body aliases scratch: keep a copy
	hc.streams[id] = s
	hc.pending += len(s.out)
	hc.blocked = append(hc.blocked, s)
}

func (hc *h2Conn) field(name, value string) {
	_ = hc.enc.WriteField(hpack.HeaderField{Name: name, Value: value})
}

// sendData writes as much of b as the windows and the peer's frame size
// allow, ending the stream with the last byte, and returns the rest.
func (hc *h2Conn) sendData(s *h2Stream, b []byte) []byte {
	for len(b) > 0 {
		n := min(int64(len(b)), hc.sendWindow, s.sendWindow, int64(hc.peerMaxFrame))
		if n <= 0 {
			break
		}
		hc.out = http2.AppendData(hc.out, s.id, int(n) == len(b), b[:n])
		b = b[n:]
		hc.sendWindow -= n
		s.sendWindow -= n
	}
	return b
}

// sendBlocked sends what the windows now allow of the responses waiting,
// in the order they were answered.
func (hc *h2Conn) sendBlocked() {
	if len(hc.blocked) == 0 || hc.sendWindow <= 0 {
		return
	}
	kept := hc.blocked[:0]
	for _, s := range hc.blocked {
		before := len(s.out)
		s.out = hc.sendData(s, s.out)
		hc.pending -= before - len(s.out)
		if len(s.out) == 0 {
			delete(hc.streams, s.id)
			continue
		}
		kept = append(kept, s)
	}
	for i := len(kept); i < len(hc.blocked); i++ {
		hc.blocked[i] = nil
	}
	hc.blocked = kept
}

// h2Status returns a status code as :status's value.
func h2Status(code int) string {
	switch code {
	case 200:
		return "200"
	case 204:
		return "204"
	case 404:
		return "404"
	}
	return strconv.Itoa(code)
}

// h2Value returns a fixed header's value as a string without copying it
// for the common ones.
func h2Value(h *http1.Header) string {
	switch h {
	case &octetStream:
		return "application/octet-stream"
	case &textPlain:
		return "text/plain; charset=utf-8"
	}
	return string(h.Value)
}

// h2Date keeps the Date header's value as a string, re-made once a second.
type h2Date struct {
	line []byte
	val  string
}

func (d *h2Date) value(clock *http1.DateClock) string {
	var buf [64]byte
	line := clock.AppendDate(buf[:0])
	if !bytes.Equal(line, d.line) {
		d.line = append(d.line[:0], line...)
		d.val = string(bytes.TrimSuffix(bytes.TrimPrefix(line, []byte("Date: ")), []byte("\r\n")))
	}
	return d.val
}
