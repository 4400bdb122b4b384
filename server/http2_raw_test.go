package server_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Raw is a hand-driven HTTP/2 client (x/net's Framer and HPACK
// encoder) for sending what well-behaved clients never send.
type h2Raw struct {
	t    testing.TB
	c    net.Conn
	fr   *http2.Framer
	enc  *hpack.Encoder
	hbuf bytes.Buffer
	dec  *hpack.Decoder    // the responses' header blocks, in order
	stat map[uint32]string // :status by stream, as responses arrive
}

// dialH2 connects with prior knowledge and sends the preface and an empty
// SETTINGS.
func dialH2(t testing.TB, addr string) *h2Raw {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &h2Raw{t: t, c: c, fr: http2.NewFramer(c, c), dec: hpack.NewDecoder(4096, nil), stat: map[uint32]string{}}
	r.fr.MaxHeaderListSize = 1 << 20
	r.enc = hpack.NewEncoder(&r.hbuf)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	r.check(r.fr.WriteSettings())
	return r
}

func (r *h2Raw) check(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

// block encodes a request's header block: GET path with extra fields.
func (r *h2Raw) block(method, path string, extra ...string) []byte {
	r.hbuf.Reset()
	for _, f := range [][2]string{{":method", method}, {":scheme", "http"}, {":path", path}, {":authority", "x"}} {
		r.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	for i := 0; i+1 < len(extra); i += 2 {
		r.enc.WriteField(hpack.HeaderField{Name: extra[i], Value: extra[i+1]})
	}
	return bytes.Clone(r.hbuf.Bytes())
}

// request sends a whole request's HEADERS.
func (r *h2Raw) request(id uint32, method, path string, end bool) {
	r.t.Helper()
	r.check(r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block(method, path), EndStream: end, EndHeaders: true}))
}

func (r *h2Raw) read() (http2.Frame, error) {
	r.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	f, err := r.fr.ReadFrame()
	if h, ok := f.(*http2.HeadersFrame); ok && err == nil {
		fields, err := r.dec.DecodeFull(h.HeaderBlockFragment())
		if err != nil {
			return nil, err
		}
		for _, hf := range fields {
			if hf.Name == ":status" {
				r.stat[h.StreamID] = hf.Value
			}
		}
	}
	return f, err
}

// until reads frames until match returns true, and returns that frame.
func (r *h2Raw) until(what string, match func(http2.Frame) bool) http2.Frame {
	r.t.Helper()
	for {
		f, err := r.read()
		if err != nil {
			r.t.Fatalf("waiting for %s: %v", what, err)
		}
		if match(f) {
			return f
		}
	}
}

// goAway reads until a GOAWAY and then expects the connection to close.
func (r *h2Raw) goAway() *http2.GoAwayFrame {
	r.t.Helper()
	g := r.until("GOAWAY", func(f http2.Frame) bool { _, ok := f.(*http2.GoAwayFrame); return ok }).(*http2.GoAwayFrame)
	for {
		_, err := r.read()
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			r.t.Fatalf("after GOAWAY %v the connection stays open", g.ErrCode)
		}
		return g
	}
}

// rst reads until an RST_STREAM on stream id.
func (r *h2Raw) rst(id uint32) *http2.RSTStreamFrame {
	r.t.Helper()
	return r.until("RST_STREAM", func(f http2.Frame) bool {
		rs, ok := f.(*http2.RSTStreamFrame)
		return ok && rs.StreamID == id
	}).(*http2.RSTStreamFrame)
}

// status reads until the response HEADERS of stream id and returns :status.
func (r *h2Raw) status(id uint32) string {
	r.t.Helper()
	r.until("HEADERS", func(f http2.Frame) bool { h, ok := f.(*http2.HeadersFrame); return ok && h.StreamID == id })
	return r.stat[id]
}
