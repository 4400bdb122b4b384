package server_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// TestH2GoAwayOnShutdown: Shutdown sends each HTTP/2 connection a GOAWAY
// (NO_ERROR) naming the last stream it opened, after answering it, and
// closes the connection.
func TestH2GoAwayOnShutdown(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialH2(t, f.http)
	r.request(1, "GET", "/healthz", true)
	r.request(3, "PUT", "/kv/x", false)
	r.check(r.fr.WriteData(3, true, []byte("v")))
	r.check(r.fr.WritePing(false, [8]byte{7}))
	r.until("PING ack", func(fr http2.Frame) bool { p, ok := fr.(*http2.PingFrame); return ok && p.IsAck() })
	shut := make(chan error, 1)
	go func() { shut <- f.srv.Shutdown(t.Context()) }()
	g := r.goAway()
	if g.ErrCode != http2.ErrCodeNo || g.LastStreamID != 3 {
		t.Fatalf("GOAWAY %v last stream %d, want NO_ERROR and 3", g.ErrCode, g.LastStreamID)
	}
	if r.stat[1] != "200" || r.stat[3] != "204" {
		t.Fatalf("responses before the GOAWAY: %v", r.stat)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

// TestH2GarbageAfterPreface: a preface followed by anything but SETTINGS
// is a PROTOCOL_ERROR GOAWAY and a close; so is a bad preface over h2.
func TestH2GarbageAfterPreface(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialH2(t, f.http) // preface + SETTINGS
	r.c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	if g := r.goAway(); g.ErrCode != http2.ErrCodeFrameSize { // "GET" read as a 4.6 MB length
		t.Fatalf("GOAWAY %v", g.ErrCode)
	}
	r = dialRawH2(t, f.http, []byte(http2.ClientPreface+"\x00\x00\x00\x01\x05\x00\x00\x00\x01")) // HEADERS first
	if g := r.goAway(); g.ErrCode != http2.ErrCodeProtocol || !bytes.Contains(g.DebugData(), []byte("SETTINGS")) {
		t.Fatalf("GOAWAY %v %q", g.ErrCode, g.DebugData())
	}
}

// dialRawH2 connects and sends first exactly the bytes given.
func dialRawH2(t *testing.T, addr string, first []byte) *h2Raw {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(first); err != nil {
		t.Fatal(err)
	}
	return &h2Raw{t: t, c: c, fr: http2.NewFramer(c, c), dec: hpack.NewDecoder(4096, nil), stat: map[uint32]string{}}
}

// TestH2FrameOverMaxFrameSize: a frame over the 16 KiB this side
// advertises is a FRAME_SIZE_ERROR, refused from its header.
func TestH2FrameOverMaxFrameSize(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialH2(t, f.http)
	r.request(1, "PUT", "/kv/x", false)
	hdr := []byte{0x00, 0x40, 0x01, 0x0, 0x0, 0, 0, 0, 1} // DATA of 16385 bytes on stream 1
	r.c.Write(hdr)
	if g := r.goAway(); g.ErrCode != http2.ErrCodeFrameSize {
		t.Fatalf("GOAWAY %v, want FRAME_SIZE_ERROR", g.ErrCode)
	}
}

// TestH2StreamsBeyondTheLimit: the 101st stream open at once is refused
// with REFUSED_STREAM; the first 100 are answered.
func TestH2StreamsBeyondTheLimit(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialH2(t, f.http)
	for i := uint32(0); i < 101; i++ {
		r.request(2*i+1, "PUT", "/kv/s", false) // open: the body has not come
	}
	if rs := r.rst(201); rs.ErrCode != http2.ErrCodeRefusedStream {
		t.Fatalf("stream 201: %v", rs.ErrCode)
	}
	for i := uint32(0); i < 100; i++ {
		r.check(r.fr.WriteData(2*i+1, true, []byte("v")))
	}
	for i := uint32(0); i < 100; i++ {
		if st := r.status(2*i + 1); st != "204" {
			t.Fatalf("stream %d: %s", 2*i+1, st)
		}
	}
}

// TestH2RapidReset: a client that opens streams and resets them at once
// (CVE-2023-44487) gets GOAWAY ENHANCE_YOUR_CALM once it has reset over
// 200 and more than half of its streams.
func TestH2RapidReset(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialH2(t, f.http)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for id := uint32(1); id < 20000; id += 2 {
			if r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block("GET", "/kv/x"), EndHeaders: true}) != nil ||
				r.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
				return
			}
		}
	}()
	if g := r.goAway(); g.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", g.ErrCode)
	}
	<-done
}

// TestH2ContinuationFlood: a header block that never ends (CONTINUATION
// after CONTINUATION) is cut off at 16 KiB with ENHANCE_YOUR_CALM rather
// than buffered.
func TestH2ContinuationFlood(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialH2(t, f.http)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: r.block("GET", "/kv/x"), EndHeaders: false}) != nil {
			return
		}
		junk := bytes.Repeat([]byte{0x40, 0x01, 'a', 0x01, 'b'}, 200) // literal a: b, 1000 bytes
		for i := 0; i < 10000; i++ {
			if r.fr.WriteContinuation(1, false, junk) != nil {
				return
			}
		}
	}()
	if g := r.goAway(); g.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", g.ErrCode)
	}
	<-done
}

// TestH2HPACKBomb: a small block that decodes to a huge header list (one
// 4 KiB table entry referenced over and over) gets 431 on its stream;
// the connection carries on. A string longer than the limit is a
// COMPRESSION_ERROR.
func TestH2HPACKBomb(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialH2(t, f.http)
	big := string(bytes.Repeat([]byte("b"), 4000))
	blk := r.block("GET", "/kv/x", "x-big", big) // adds x-big to the dynamic table (index 62)
	for i := 0; i < 2000; i++ {
		blk = append(blk, 0x80|62) // indexed field 62 again: 4 KiB decoded per byte
	}
	r.check(r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk, EndStream: true, EndHeaders: true}))
	if st := r.status(1); st != "431" {
		t.Fatalf("bomb: %s, want 431", st)
	}
	r.request(3, "GET", "/healthz", true)
	if st := r.status(3); st != "200" {
		t.Fatalf("after the bomb: %s", st)
	}
}

// TestH2AckFloods: a client that sends PINGs (or SETTINGS) and never
// reads the acks gets GOAWAY ENHANCE_YOUR_CALM once 10,000 wait unread,
// rather than buffered for without bound.
func TestH2AckFloods(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	for _, frame := range [][]byte{
		{0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, // PING
		{0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 9},       // SETTINGS MAX_CONCURRENT_STREAMS 9
	} {
		r := dialH2(t, f.http)
		batch := bytes.Repeat(frame, 1000)
		for i := 0; i < 2000; i++ { // up to 2M frames; the server stops reading long before
			r.c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			if _, err := r.c.Write(batch); err != nil {
				break
			}
		}
		if g := r.goAway(); g.ErrCode != http2.ErrCodeEnhanceYourCalm {
			t.Fatalf("frame type %d: GOAWAY %v, want ENHANCE_YOUR_CALM", frame[3], g.ErrCode)
		}
	}
}

// TestH2ZeroWindowStall: a client that sets its window to 0 and never
// opens it gets the heads of its responses but no DATA; once over 4 MiB
// of responses wait for it, new streams are refused (REFUSED_STREAM), and
// the idle timeout closes the connection.
func TestH2ZeroWindowStall(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{IdleTimeout: 2 * time.Second}, "")
	val := bytes.Repeat([]byte("z"), 1<<20)
	if _, _, _, err := f.store.Set(nil, []byte("big"), val, store.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	r := dialH2(t, f.http)
	r.check(r.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}))
	for i := uint32(0); i < 5; i++ {
		r.request(2*i+1, "GET", "/kv/big", true)
		if st := r.status(2*i + 1); st != "200" {
			t.Fatalf("stream %d: %s", 2*i+1, st)
		}
	}
	r.request(11, "GET", "/kv/big", true)
	if rs := r.rst(11); rs.ErrCode != http2.ErrCodeRefusedStream {
		t.Fatalf("stream 11 with 5 MiB waiting: %v", rs.ErrCode)
	}
	for {
		fr, err := r.read()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the idle timeout did not close the stalled connection")
			}
			return // closed
		}
		if d, ok := fr.(*http2.DataFrame); ok && len(d.Data()) > 0 {
			t.Fatalf("DATA on stream %d with a zero window", d.StreamID)
		}
	}
}

// TestH2BodyLimit: a request body over the limit (the server's
// MaxInboundBuffer less 8 KiB, as over HTTP/1.1) gets 413 on its stream,
// which is reset; the connection carries on.
func TestH2BodyLimit(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{MaxInboundBuffer: 64 << 10}, "")
	limit := 64<<10 - 8<<10
	r := dialH2(t, f.http)
	r.request(1, "PUT", "/kv/a", false)
	chunk := bytes.Repeat([]byte("v"), 16<<10)
	for sent := 0; sent <= limit; sent += len(chunk) {
		r.check(r.fr.WriteData(1, false, chunk))
	}
	if st := r.status(1); st != "413" {
		t.Fatalf("body over %d: %s", limit, st)
	}
	r.rst(1)
	r.request(3, "PUT", "/kv/a", false)
	r.check(r.fr.WriteData(3, true, chunk))
	if st := r.status(3); st != "204" {
		t.Fatalf("a body under the limit after: %s", st)
	}
}

// TestH2SelfDependentStream: HEADERS whose priority names its own stream
// is a stream error (RST_STREAM PROTOCOL_ERROR), and its header block is
// still decoded, so the next request on the connection (which refers to
// the dynamic table entries it made) is served.
func TestH2SelfDependentStream(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialH2(t, f.http)
	blk := r.block("GET", "/healthz", "x-custom", "entered into the dynamic table")
	r.check(r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk, EndStream: true, EndHeaders: true,
		Priority: http2.PriorityParam{StreamDep: 1, Weight: 1}}))
	if rs := r.rst(1); rs.ErrCode != http2.ErrCodeProtocol {
		t.Fatalf("self-dependent stream: %v", rs.ErrCode)
	}
	r.check(r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: r.block("GET", "/healthz", "x-custom", "entered into the dynamic table"),
		EndStream: true, EndHeaders: true}))
	if st := r.status(3); st != "200" {
		t.Fatalf("the next request: %s", st)
	}
}

// TestH2SettingsAndWindowUpdate: the server's first frame is its SETTINGS
// (100 streams, a 256 KiB stream window), it acknowledges the client's,
// and a response larger than the client's window waits for the client's
// WINDOW_UPDATEs, then arrives whole, in frames no larger than the
// client's SETTINGS_MAX_FRAME_SIZE, while other streams are served.
func TestH2SettingsAndWindowUpdate(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	val := bytes.Repeat([]byte("0123456789abcdef"), 100<<10) // 1.6 MB
	if _, _, _, err := f.store.Set(nil, []byte("big"), val, store.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	r := dialH2(t, f.http)
	first := r.until("SETTINGS", func(fr http2.Frame) bool { return true })
	s, ok := first.(*http2.SettingsFrame)
	if !ok || s.IsAck() {
		t.Fatalf("first frame %v, want SETTINGS", first)
	}
	if v, _ := s.Value(http2.SettingMaxConcurrentStreams); v != 100 {
		t.Fatalf("MAX_CONCURRENT_STREAMS %d", v)
	}
	if v, _ := s.Value(http2.SettingInitialWindowSize); v != 256<<10 {
		t.Fatalf("INITIAL_WINDOW_SIZE %d", v)
	}
	r.until("SETTINGS ack", func(fr http2.Frame) bool { s, ok := fr.(*http2.SettingsFrame); return ok && s.IsAck() })
	const window = 1000
	r.check(r.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window}))
	r.request(1, "GET", "/kv/big", true)
	got := 0
	r.until("the first window's DATA", func(fr http2.Frame) bool {
		if d, ok := fr.(*http2.DataFrame); ok && d.StreamID == 1 {
			got += len(d.Data())
		}
		return got >= window
	})
	if got != window {
		t.Fatalf("%d bytes in a %d-byte window", got, window)
	}
	r.request(3, "GET", "/healthz", true) // the stalled stream holds up nothing else
	if st := r.status(3); st != "200" {
		t.Fatalf("stream 3 while 1 waits: %s", st)
	}
	r.check(r.fr.WriteWindowUpdate(0, uint32(len(val))))
	r.check(r.fr.WriteWindowUpdate(1, uint32(len(val))))
	r.until("the rest of the value", func(fr http2.Frame) bool {
		d, ok := fr.(*http2.DataFrame)
		if !ok || d.StreamID != 1 {
			return false
		}
		if len(d.Data()) > 16<<10 {
			t.Fatalf("a DATA frame of %d bytes, over the default max frame size", len(d.Data()))
		}
		got += len(d.Data())
		return d.StreamEnded()
	})
	if got != len(val) {
		t.Fatalf("%d bytes of %d", got, len(val))
	}
}
