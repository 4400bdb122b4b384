package server_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// FuzzH2Front sends the HTTP/2 preface, a SETTINGS frame and then
// arbitrary bytes to a live HTTP front: every answer must read as HTTP/2
// frames (x/net's Framer), the connection must end, and the server must
// keep serving, with no handler panic.
func FuzzH2Front(f *testing.F) {
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, kv := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":path", "/kv/a"}, {":authority", "h"}} {
		enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	get := hb.Bytes()
	var seeds [][]byte
	add := func(write func(*http2.Framer)) {
		var b bytes.Buffer
		write(http2.NewFramer(&b, nil))
		seeds = append(seeds, b.Bytes())
	}
	add(func(fr *http2.Framer) {
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: get, EndStream: true, EndHeaders: true})
	})
	add(func(fr *http2.Framer) {
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: get[:3], EndHeaders: false})
		fr.WriteContinuation(1, true, get[3:])
		fr.WriteRSTStream(1, http2.ErrCodeCancel)
		fr.WritePing(false, [8]byte{1})
		fr.WriteWindowUpdate(0, 100)
	})
	add(func(fr *http2.Framer) {
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: get, EndHeaders: true})
		fr.WriteData(3, false, []byte("body"))
		fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
		fr.WriteData(3, true, nil)
		fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	})
	seeds = append(seeds, []byte{0, 0, 0, 1, 5, 0, 0, 0, 2}, []byte{0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0}, []byte("\x00\x00\x01\x01\x05\x00\x00\x00\x01\xff"))
	for _, s := range seeds {
		f.Add(s)
	}
	srv := startFronts(f, kv.Options{}, eventloop.Options{Loops: 2}, "")
	var settings bytes.Buffer
	http2.NewFramer(&settings, nil).WriteSettings()
	f.Fuzz(func(t *testing.T, input []byte) {
		c := sendAndHalfClose(t, srv.http, append([]byte(http2.ClientPreface+settings.String()), input...))
		fr := http2.NewFramer(nil, c)
		fr.MaxHeaderListSize = 1 << 20
		for {
			_, err := fr.ReadFrame()
			if errors.Is(err, io.EOF) {
				break
			}
			var ce http2.ConnectionError
			var se http2.StreamError
			if errors.As(err, &ce) || errors.As(err, &se) {
				continue // x/net's own rules for what it reads; the framing held
			}
			if err != nil {
				t.Fatalf("the server's answer is not HTTP/2 frames: %v", err)
			}
		}
		if n := srv.srv.HandlerPanics(); n != 0 {
			t.Fatalf("%d handler panics", n)
		}
		probe := rawHTTP(t, srv.http, "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", 1)
		if probe[0].code != 200 {
			t.Fatalf("server unhealthy after input: /healthz %d", probe[0].code)
		}
	})
}
