package server

import (
	"bytes"

	"golang.org/x/net/http2/hpack"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/http2"
)

// HTTP/2 on the HTTP front (RFC 9113), on the loops like HTTP/1.1: a
// connection whose first bytes are the client preface (h2c with prior
// knowledge), or a TLS connection that chose "h2" by ALPN, is an h2Conn;
// its frames are read in OnTraffic, each request is answered by the same
// httpFront.serve as HTTP/1.1's the moment its stream ends, and a response
// the peer's flow-control window cannot take yet waits in its stream until
// a WINDOW_UPDATE arrives. No goroutine per connection or stream.

// The limits this side advertises and enforces (see "HTTP/2" in README).
const (
	h2MaxStreams     = 100                       // SETTINGS_MAX_CONCURRENT_STREAMS
	h2MaxFrameSize   = http2.DefaultMaxFrameSize // SETTINGS_MAX_FRAME_SIZE (the default)
	h2StreamWindow   = 256 << 10                 // SETTINGS_INITIAL_WINDOW_SIZE
	h2ConnWindow     = 1 << 20                   // the connection's receive window
	h2MaxHeaderList  = 16 << 10                  // SETTINGS_MAX_HEADER_LIST_SIZE, decoded (RFC 7541 sizes)
	h2MaxHeaderBlock = h2MaxHeaderList           // compressed bytes of one HEADERS+CONTINUATION block
	h2TableSize      = 4096                      // the HPACK dynamic table the peer may use (the default)
	h2MinResets      = 200                       // RST_STREAMs tolerated before the rapid-reset check
	h2MaxControl     = 10000                     // SETTINGS/PING acks queued while the peer reads none
	h2MaxPending     = 4 << 20                   // response bytes waiting for window before new streams are refused
)

// h2Conn is one HTTP/2 connection's state; its loop goroutine only.
type h2Conn struct {
	httpState
	f     *httpFront
	resp  httpResponse
	out   []byte        // the output buffer while OnTraffic runs
	batch kv.FrontBatch // the current OnTraffic's

	preface bool // the client preface has been read
	settled bool // the client's first SETTINGS has been read
	closing bool // GOAWAY for an error sent: close once written
	goaway  bool // GOAWAY sent: streams above goawayID are ignored

	goawayID uint32

	dec    *hpack.Decoder
	enc    *hpack.Encoder
	encBuf bytes.Buffer
	fields h2Fields // the header block being decoded
	date   h2Date

	peerMaxFrame uint32
	peerWindow   int64 // the peer's SETTINGS_INITIAL_WINDOW_SIZE
	sendWindow   int64 // what the connection may still send
	recvWindow   int64 // what the peer may still send on the connection
	recvUsed     int64 // received and taken, not yet credited back

	streams map[uint32]*h2Stream // open: receiving a body or sending a response
	blocked []*h2Stream          // streams whose response waits for window, in order
	lastID  uint32               // the highest stream the client opened

	cont     uint32       // the stream whose header block CONTINUATIONs are completing
	contEnd  bool         // that block's HEADERS had END_STREAM
	block    []byte       // the header block so far
	blockErr *http2.Error // a stream error its HEADERS carried, answered once it is decoded

	opened, resets int // streams opened and reset by the peer
	control        int // acks queued since the output last drained
	pending        int // response bytes in blocked streams
	bodies         int // request body bytes buffered in streams
}

// h2Stream is a stream still receiving its request body or still sending
// its response.
type h2Stream struct {
	id         uint32
	recvDone   bool // END_STREAM received
	method     []byte
	path       []byte
	auth       []byte
	body       []byte
	recvWindow int64 // what the peer may still send on the stream
	recvUsed   int64
	sendWindow int64
	out        []byte // the response's DATA still to send
}

func newH2Conn(f *httpFront) *h2Conn {
	hc := &h2Conn{f: f, peerMaxFrame: http2.DefaultMaxFrameSize, peerWindow: http2.DefaultWindow,
		sendWindow: http2.DefaultWindow, recvWindow: h2ConnWindow, streams: map[uint32]*h2Stream{}}
	hc.dec = hpack.NewDecoder(h2TableSize, hc.onField)
	hc.dec.SetMaxStringLength(h2MaxHeaderList)
	hc.enc = hpack.NewEncoder(&hc.encBuf)
	return hc
}

// start writes this side's connection preface: SETTINGS, and the
// connection window beyond the default 64 KiB.
func (hc *h2Conn) start() {
	hc.out = http2.AppendSettings(hc.out, false,
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: h2MaxStreams},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: h2MaxHeaderList},
		http2.Setting{ID: http2.SettingEnablePush, Val: 0})
	hc.out = http2.AppendWindowUpdate(hc.out, 0, h2ConnWindow-http2.DefaultWindow)
}

// h2Traffic is OnTraffic for an HTTP/2 connection.
func (f *httpFront) h2Traffic(c *eventloop.Conn, hc *h2Conn, in []byte) int {
	if hc.closing {
		return len(in)
	}
	hc.batch = f.kv.BeginFrontBatch(c.LoopIndex())
	defer hc.batch.End()
	hc.out = c.OutputBuffer()
	if c.OutboundBuffered() == 0 {
		hc.control = 0 // the peer has read every ack
	}
	consumed := 0
	if !hc.preface {
		complete, ok := http2.CheckPreface(in)
		if !ok {
			hc.fail(&http2.Error{Code: http2.ErrCodeProtocol, Msg: "the connection does not start with the HTTP/2 client preface"})
		} else if !complete {
			c.SetOutputBuffer(hc.out)
			return 0
		} else {
			consumed, hc.preface = len(http2.Preface), true
		}
	}
	for !hc.closing {
		h, p, n, err := http2.ParseFrame(in[consumed:], h2MaxFrameSize)
		if err != nil {
			hc.fail(err)
			break
		}
		if n == 0 {
			break
		}
		consumed += n
		if err := hc.frame(h, p); err != nil {
			hc.fail(err)
		}
		if len(hc.out) >= int(f.h.flushBytes.Load()) {
			c.SetOutputBuffer(hc.out)
			if c.Flush() != nil {
				return len(in)
			}
			hc.out = c.OutputBuffer()
			if c.OutputFull() {
				break // the loop presents the rest once the output drains
			}
		}
	}
	c.SetOutputBuffer(hc.out)
	hc.out = nil
	if hc.closing {
		_ = c.Close()
		return len(in)
	}
	return consumed
}

// fail answers a protocol error: RST_STREAM for a stream error, GOAWAY and
// a close for a connection error.
func (hc *h2Conn) fail(err error) {
	e, ok := err.(*http2.Error)
	if !ok {
		e = &http2.Error{Code: http2.ErrCodeInternal, Msg: err.Error()}
	}
	if e.Stream != 0 {
		hc.out = http2.AppendRSTStream(hc.out, e.Stream, e.Code)
		hc.drop(e.Stream)
		return
	}
	last := hc.lastID
	if hc.goaway {
		last = hc.goawayID // a GOAWAY's last stream id may not grow
	}
	hc.out = http2.AppendGoAway(hc.out, last, e.Code, []byte(e.Msg))
	hc.closing, hc.goaway, hc.goawayID = true, true, last
}

// goAway tells the peer no stream above the last one it opened will be
// served (the server is shutting down); the streams up to it are answered.
func (hc *h2Conn) goAway() {
	if hc.goaway {
		return
	}
	hc.goaway, hc.goawayID = true, hc.lastID
	hc.out = http2.AppendGoAway(hc.out, hc.lastID, http2.ErrCodeNo, nil)
}

// OnDrain implements eventloop.DrainHandler: as the server shuts down,
// each HTTP/2 connection gets a GOAWAY naming the last stream it opened;
// those streams are answered, later ones ignored (the client may retry
// them elsewhere), and the connection closes once its input is answered.
func (f *httpFront) OnDrain(c *eventloop.Conn) {
	hc, ok := c.Context().(*h2Conn)
	if !ok || hc.closing || !hc.preface {
		return
	}
	hc.out = c.OutputBuffer()
	hc.goAway()
	c.SetOutputBuffer(hc.out)
	hc.out = nil
}

func connErr(code http2.ErrCode, msg string) *http2.Error {
	return &http2.Error{Code: code, Msg: msg}
}

func streamErr(id uint32, code http2.ErrCode, msg string) *http2.Error {
	return &http2.Error{Code: code, Stream: id, Msg: msg}
}

// frame handles one frame.
func (hc *h2Conn) frame(h http2.FrameHeader, p []byte) error {
	if !hc.settled {
		if h.Type != http2.FrameSettings || h.Flags.Has(http2.FlagAck) {
			return connErr(http2.ErrCodeProtocol, "the client preface must be followed by SETTINGS, not "+h.Type.String())
		}
		hc.settled = true
	}
	if hc.cont != 0 && (h.Type != http2.FrameContinuation || h.StreamID != hc.cont) {
		return connErr(http2.ErrCodeProtocol, h.Type.String()+" frame inside the header block of another stream")
	}
	switch h.Type {
	case http2.FrameData:
		return hc.data(h, p)
	case http2.FrameHeaders:
		return hc.headers(h, p)
	case http2.FrameContinuation:
		if err := http2.ParseContinuation(h); err != nil {
			return err
		}
		if hc.cont == 0 {
			return connErr(http2.ErrCodeProtocol, "CONTINUATION frame without HEADERS")
		}
		return hc.addBlock(h, p)
	case http2.FramePriority:
		_, err := http2.ParsePriority(h, p)
		return err
	case http2.FrameRSTStream:
		return hc.rstStream(h, p)
	case http2.FrameSettings:
		return hc.settings(h, p)
	case http2.FramePing:
		data, err := http2.ParsePing(h, p)
		if err != nil || h.Flags.Has(http2.FlagAck) {
			return err
		}
		if err := hc.ack(); err != nil {
			return err
		}
		hc.out = http2.AppendPing(hc.out, true, data)
	case http2.FrameGoAway:
		_, _, _, err := http2.ParseGoAway(h, p)
		return err // the peer's streams in progress are still answered
	case http2.FrameWindowUpdate:
		return hc.windowUpdate(h, p)
	case http2.FramePushPromise:
		return connErr(http2.ErrCodeProtocol, "PUSH_PROMISE from a client")
	}
	return nil // unknown frame types are ignored (RFC 9113 section 4.1)
}

// ack counts one queued acknowledgment: a peer that sends SETTINGS or
// PING and never reads the acks is cut off rather than buffered for.
func (hc *h2Conn) ack() error {
	hc.control++
	if hc.control > h2MaxControl {
		return connErr(http2.ErrCodeEnhanceYourCalm, "over 10000 SETTINGS and PING acknowledgments queued while the peer reads none")
	}
	return nil
}

// settings applies the peer's SETTINGS and acknowledges them.
func (hc *h2Conn) settings(h http2.FrameHeader, p []byte) error {
	s, err := http2.ParseSettings(h, p)
	if err != nil || h.Flags.Has(http2.FlagAck) {
		return err
	}
	err = s.Each(func(st http2.Setting) error {
		switch st.ID {
		case http2.SettingHeaderTableSize:
			hc.enc.SetMaxDynamicTableSizeLimit(min(st.Val, h2TableSize))
		case http2.SettingMaxFrameSize:
			hc.peerMaxFrame = st.Val
		case http2.SettingInitialWindowSize:
			delta := int64(st.Val) - hc.peerWindow
			hc.peerWindow = int64(st.Val)
			for _, s := range hc.streams {
				s.sendWindow += delta
				if s.sendWindow > http2.MaxWindow {
					return connErr(http2.ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE takes a stream's window over 2^31-1")
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := hc.ack(); err != nil {
		return err
	}
	hc.out = http2.AppendSettings(hc.out, true)
	hc.sendBlocked()
	return nil
}

// windowUpdate opens the connection's or a stream's send window and sends
// what was waiting for it.
func (hc *h2Conn) windowUpdate(h http2.FrameHeader, p []byte) error {
	inc, err := http2.ParseWindowUpdate(h, p)
	if err != nil {
		return err
	}
	if h.StreamID == 0 {
		hc.sendWindow += int64(inc)
		if hc.sendWindow > http2.MaxWindow {
			return connErr(http2.ErrCodeFlowControl, "WINDOW_UPDATE takes the connection's window over 2^31-1")
		}
	} else if s := hc.streams[h.StreamID]; s != nil {
		s.sendWindow += int64(inc)
		if s.sendWindow > http2.MaxWindow {
			return streamErr(h.StreamID, http2.ErrCodeFlowControl, "WINDOW_UPDATE takes the stream's window over 2^31-1")
		}
	} else if h.StreamID > hc.lastID {
		return connErr(http2.ErrCodeProtocol, "WINDOW_UPDATE on an idle stream")
	}
	hc.sendBlocked()
	return nil
}

// rstStream closes a stream at the peer's request, and cuts off a peer
// that resets most of the streams it opens (the rapid-reset attack).
func (hc *h2Conn) rstStream(h http2.FrameHeader, p []byte) error {
	if _, err := http2.ParseRSTStream(h, p); err != nil {
		return err
	}
	if h.StreamID > hc.lastID {
		return connErr(http2.ErrCodeProtocol, "RST_STREAM on an idle stream")
	}
	hc.resets++
	if hc.resets > h2MinResets && hc.resets*2 > hc.opened {
		return connErr(http2.ErrCodeEnhanceYourCalm, "too many streams reset by the client")
	}
	hc.drop(h.StreamID)
	return nil
}

// drop forgets a stream and whatever it holds.
func (hc *h2Conn) drop(id uint32) {
	s := hc.streams[id]
	if s == nil {
		return
	}
	delete(hc.streams, id)
	hc.bodies -= len(s.body)
	if len(s.out) > 0 {
		hc.pending -= len(s.out)
		for i, b := range hc.blocked {
			if b == s {
				hc.blocked = append(hc.blocked[:i], hc.blocked[i+1:]...)
				break
			}
		}
	}
}

// newH2 makes c an HTTP/2 connection and queues this side's preface.
func (f *httpFront) newH2(c *eventloop.Conn) *h2Conn {
	hc := newH2Conn(f)
	hc.out = c.OutputBuffer()
	hc.start()
	c.SetOutputBuffer(hc.out)
	hc.out = nil
	return hc
}
