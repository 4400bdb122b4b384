package http2

import (
	"bytes"
	"errors"
	"testing"

	xhttp2 "golang.org/x/net/http2"
)

// TestAppendedFramesReadByXNet: every frame this package writes is read
// back by golang.org/x/net/http2's Framer with the same fields.
func TestAppendedFramesReadByXNet(t *testing.T) {
	var b []byte
	b = AppendSettings(b, false, Setting{SettingMaxConcurrentStreams, 100}, Setting{SettingInitialWindowSize, 1 << 20})
	b = AppendSettings(b, true)
	b = AppendHeaders(b, 1, true, true, []byte{0x88})
	b = AppendData(b, 3, true, []byte("hello"))
	b = AppendPing(b, true, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	b = AppendRSTStream(b, 5, ErrCodeRefusedStream)
	b = AppendWindowUpdate(b, 0, 1000)
	b = AppendPriority(b, 7, Priority{StreamDep: 3, Exclusive: true, Weight: 15})
	b = AppendGoAway(b, 9, ErrCodeEnhanceYourCalm, []byte("calm"))
	fr := xhttp2.NewFramer(nil, bytes.NewReader(b))
	next := func() xhttp2.Frame {
		t.Helper()
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if s := next().(*xhttp2.SettingsFrame); s.NumSettings() != 2 || s.Setting(0).Val != 100 || s.Setting(1).ID != xhttp2.SettingInitialWindowSize {
		t.Fatalf("settings %v", s)
	}
	if s := next().(*xhttp2.SettingsFrame); !s.IsAck() {
		t.Fatal("no ack")
	}
	if h := next().(*xhttp2.HeadersFrame); h.StreamID != 1 || !h.StreamEnded() || !h.HeadersEnded() || !bytes.Equal(h.HeaderBlockFragment(), []byte{0x88}) {
		t.Fatalf("headers %v", h)
	}
	if d := next().(*xhttp2.DataFrame); d.StreamID != 3 || string(d.Data()) != "hello" || !d.StreamEnded() {
		t.Fatalf("data %v", d)
	}
	if p := next().(*xhttp2.PingFrame); !p.IsAck() || p.Data != [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
		t.Fatalf("ping %v", p)
	}
	if r := next().(*xhttp2.RSTStreamFrame); r.StreamID != 5 || r.ErrCode != xhttp2.ErrCodeRefusedStream {
		t.Fatalf("rst %v", r)
	}
	if w := next().(*xhttp2.WindowUpdateFrame); w.StreamID != 0 || w.Increment != 1000 {
		t.Fatalf("window %v", w)
	}
	if p := next().(*xhttp2.PriorityFrame); p.StreamDep != 3 || !p.Exclusive || p.Weight != 15 {
		t.Fatalf("priority %v", p)
	}
	if g := next().(*xhttp2.GoAwayFrame); g.LastStreamID != 9 || g.ErrCode != xhttp2.ErrCodeEnhanceYourCalm || string(g.DebugData()) != "calm" {
		t.Fatalf("goaway %v", g)
	}
}

// TestParseFramesWrittenByXNet: frames x/net's Framer writes, padding and
// priority included, parse to the same fields here.
func TestParseFramesWrittenByXNet(t *testing.T) {
	var buf bytes.Buffer
	fw := xhttp2.NewFramer(&buf, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(fw.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte("abc"), EndHeaders: false, PadLength: 4,
		Priority: xhttp2.PriorityParam{StreamDep: 0, Weight: 7}}))
	must(fw.WriteContinuation(1, true, []byte("def")))
	must(fw.WriteDataPadded(1, true, []byte("body"), []byte{0, 0, 0}))
	must(fw.WriteSettings(xhttp2.Setting{ID: xhttp2.SettingMaxFrameSize, Val: 1 << 20}))
	must(fw.WriteGoAway(3, xhttp2.ErrCodeProtocol, []byte("x")))
	b := buf.Bytes()
	frame := func() (FrameHeader, []byte) {
		t.Helper()
		h, p, n, err := ParseFrame(b, MaxAllowedFrameSize)
		if err != nil || n == 0 {
			t.Fatalf("ParseFrame: n=%d %v", n, err)
		}
		b = b[n:]
		return h, p
	}
	h, p := frame()
	block, prio, err := ParseHeaders(h, p)
	if err != nil || string(block) != "abc" || prio.Weight != 7 || h.Flags.Has(FlagEndHeaders) {
		t.Fatalf("headers %q %v %v %v", block, prio, err, h)
	}
	h, p = frame()
	if h.Type != FrameContinuation || string(p) != "def" || !h.Flags.Has(FlagEndHeaders) || ParseContinuation(h) != nil {
		t.Fatalf("continuation %v %q", h, p)
	}
	h, p = frame()
	if d, err := ParseData(h, p); err != nil || string(d) != "body" || !h.Flags.Has(FlagEndStream) {
		t.Fatalf("data %q %v", d, err)
	}
	h, p = frame()
	s, err := ParseSettings(h, p)
	if err != nil || s.Len() != 1 || s.At(0) != (Setting{SettingMaxFrameSize, 1 << 20}) {
		t.Fatalf("settings %v %v", s, err)
	}
	h, p = frame()
	if last, code, debug, err := ParseGoAway(h, p); err != nil || last != 3 || code != ErrCodeProtocol || string(debug) != "x" {
		t.Fatalf("goaway %d %v %q %v", last, code, debug, err)
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes left", len(b))
	}
}

// TestBadFrames: each malformed frame is refused with the RFC's code and
// the right scope, and an oversize frame is refused from its header alone.
func TestBadFrames(t *testing.T) {
	code := func(err error) (ErrCode, uint32) {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v is not an *Error", err)
		}
		return e.Code, e.Stream
	}
	hdr := AppendFrameHeader(nil, FrameHeader{Length: 20000, Type: FrameData, StreamID: 1})
	if _, _, n, err := ParseFrame(hdr, DefaultMaxFrameSize); n != 0 || err == nil {
		t.Fatal("oversize frame accepted")
	} else if c, _ := code(err); c != ErrCodeFrameSize {
		t.Fatalf("oversize: %v", err)
	}
	if _, _, n, err := ParseFrame(hdr[:5], DefaultMaxFrameSize); n != 0 || err != nil {
		t.Fatal("short header not incomplete")
	}
	cases := []struct {
		name   string
		err    error
		code   ErrCode
		stream uint32
	}{
		{"data on 0", func() error { _, err := ParseData(FrameHeader{Type: FrameData}, nil); return err }(), ErrCodeProtocol, 0},
		{"pad too long", func() error {
			_, err := ParseData(FrameHeader{Type: FrameData, StreamID: 1, Flags: FlagPadded}, []byte{5, 1, 2})
			return err
		}(), ErrCodeProtocol, 0},
		{"self dependency", func() error {
			_, _, err := ParseHeaders(FrameHeader{Type: FrameHeaders, StreamID: 3, Flags: FlagPriority}, []byte{0, 0, 0, 3, 1})
			return err
		}(), ErrCodeProtocol, 3},
		{"ping size", func() error { _, err := ParsePing(FrameHeader{Type: FramePing}, make([]byte, 7)); return err }(), ErrCodeFrameSize, 0},
		{"ping stream", func() error {
			_, err := ParsePing(FrameHeader{Type: FramePing, StreamID: 1}, make([]byte, 8))
			return err
		}(), ErrCodeProtocol, 0},
		{"settings ack body", func() error {
			_, err := ParseSettings(FrameHeader{Type: FrameSettings, Flags: FlagAck}, make([]byte, 6))
			return err
		}(), ErrCodeFrameSize, 0},
		{"settings size", func() error { _, err := ParseSettings(FrameHeader{Type: FrameSettings}, make([]byte, 5)); return err }(), ErrCodeFrameSize, 0},
		{"window 0 stream", func() error {
			_, err := ParseWindowUpdate(FrameHeader{Type: FrameWindowUpdate, StreamID: 7}, make([]byte, 4))
			return err
		}(), ErrCodeProtocol, 7},
		{"window 0 conn", func() error {
			_, err := ParseWindowUpdate(FrameHeader{Type: FrameWindowUpdate}, make([]byte, 4))
			return err
		}(), ErrCodeProtocol, 0},
		{"rst size", func() error {
			_, err := ParseRSTStream(FrameHeader{Type: FrameRSTStream, StreamID: 1}, make([]byte, 3))
			return err
		}(), ErrCodeFrameSize, 0},
		{"priority size", func() error {
			_, err := ParsePriority(FrameHeader{Type: FramePriority, StreamID: 1}, make([]byte, 4))
			return err
		}(), ErrCodeFrameSize, 1},
		{"goaway short", func() error { _, _, _, err := ParseGoAway(FrameHeader{Type: FrameGoAway}, make([]byte, 7)); return err }(), ErrCodeFrameSize, 0},
		{"window too big", Setting{SettingInitialWindowSize, 1 << 31}.Valid(), ErrCodeFlowControl, 0},
		{"frame size small", Setting{SettingMaxFrameSize, 100}.Valid(), ErrCodeProtocol, 0},
		{"push 2", Setting{SettingEnablePush, 2}.Valid(), ErrCodeProtocol, 0},
	}
	for _, tc := range cases {
		if c, s := code(tc.err); c != tc.code || s != tc.stream {
			t.Errorf("%s: got %v on stream %d (%v), want %v on %d", tc.name, c, s, tc.err, tc.code, tc.stream)
		}
	}
}

// TestCheckPreface: the whole preface, a prefix of it, and anything else.
func TestCheckPreface(t *testing.T) {
	for _, tc := range []struct {
		in           string
		complete, ok bool
	}{{Preface + "x", true, true}, {Preface, true, true}, {"PRI * HT", false, true}, {"", false, true}, {"GET / HTTP/1.1\r\n", false, false}, {"PRI * HTTP/1.1", false, false}} {
		if c, ok := CheckPreface([]byte(tc.in)); c != tc.complete || ok != tc.ok {
			t.Errorf("%q: got %v %v", tc.in, c, ok)
		}
	}
}

// TestAppendHeaderBlockSplits: a block over the peer's frame size goes out
// as HEADERS and CONTINUATIONs that x/net reassembles.
func TestAppendHeaderBlockSplits(t *testing.T) {
	block := bytes.Repeat([]byte{0x88}, 40000) // ":status: 200" many times
	b := AppendHeaderBlock(nil, 1, true, block, DefaultMaxFrameSize)
	fr := xhttp2.NewFramer(nil, bytes.NewReader(b))
	var got []byte
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		switch f := f.(type) {
		case *xhttp2.HeadersFrame:
			got = append(got, f.HeaderBlockFragment()...)
		case *xhttp2.ContinuationFrame:
			got = append(got, f.HeaderBlockFragment()...)
		}
	}
	if !bytes.Equal(got, block) {
		t.Fatalf("reassembled %d bytes of %d", len(got), len(block))
	}
}
