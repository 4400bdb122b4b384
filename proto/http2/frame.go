package http2

import (
	"encoding/binary"
	"fmt"
)

// Preface is what a client sends first on an HTTP/2 connection (RFC 9113
// section 3.4), before its SETTINGS frame.
const Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// FrameHeaderLen is the size of every frame's header.
const FrameHeaderLen = 9

// Frame size bounds (RFC 9113 section 4.2 and 6.5.2).
const (
	DefaultMaxFrameSize = 1 << 14   // 16 KiB: every peer accepts it
	MaxAllowedFrameSize = 1<<24 - 1 // the largest SETTINGS_MAX_FRAME_SIZE
	DefaultWindow       = 65535     // initial flow-control window
	MaxWindow           = 1<<31 - 1 // the largest window
)

// FrameType is a frame's type octet.
type FrameType uint8

// The frame types of RFC 9113 section 6.
const (
	FrameData         FrameType = 0x0
	FrameHeaders      FrameType = 0x1
	FramePriority     FrameType = 0x2
	FrameRSTStream    FrameType = 0x3
	FrameSettings     FrameType = 0x4
	FramePushPromise  FrameType = 0x5
	FramePing         FrameType = 0x6
	FrameGoAway       FrameType = 0x7
	FrameWindowUpdate FrameType = 0x8
	FrameContinuation FrameType = 0x9
)

var frameNames = [...]string{"DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS",
	"PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"}

// String returns the type's name as the RFC spells it.
func (t FrameType) String() string {
	if int(t) < len(frameNames) {
		return frameNames[t]
	}
	return fmt.Sprintf("UNKNOWN_FRAME_TYPE_%d", uint8(t))
}

// Flags is a frame's flags octet; which bits mean what depends on the type.
type Flags uint8

// The flags of RFC 9113 section 6.
const (
	FlagEndStream  Flags = 0x1  // DATA, HEADERS
	FlagAck        Flags = 0x1  // SETTINGS, PING
	FlagEndHeaders Flags = 0x4  // HEADERS, CONTINUATION
	FlagPadded     Flags = 0x8  // DATA, HEADERS
	FlagPriority   Flags = 0x20 // HEADERS
)

// Has reports whether all of v's bits are set in f.
func (f Flags) Has(v Flags) bool { return f&v == v }

// FrameHeader is a frame's 9-byte header.
type FrameHeader struct {
	Length   uint32 // payload length, 24 bits
	Type     FrameType
	Flags    Flags
	StreamID uint32 // 31 bits; the reserved bit is dropped when parsing
}

// ParseFrameHeader decodes the frame header at the start of b, which must
// hold at least FrameHeaderLen bytes.
func ParseFrameHeader(b []byte) FrameHeader {
	_ = b[8]
	return FrameHeader{
		Length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:     FrameType(b[3]),
		Flags:    Flags(b[4]),
		StreamID: binary.BigEndian.Uint32(b[5:9]) & (1<<31 - 1),
	}
}

// AppendFrameHeader appends h's 9 bytes to dst. Length must fit in 24 bits
// and StreamID in 31; the caller's bug otherwise, so it panics.
func AppendFrameHeader(dst []byte, h FrameHeader) []byte {
	if h.Length > MaxAllowedFrameSize || h.StreamID > 1<<31-1 {
		panic(fmt.Sprintf("http2: frame length %d or stream id %d out of range", h.Length, h.StreamID))
	}
	return append(dst, byte(h.Length>>16), byte(h.Length>>8), byte(h.Length), byte(h.Type), byte(h.Flags),
		byte(h.StreamID>>24), byte(h.StreamID>>16), byte(h.StreamID>>8), byte(h.StreamID))
}

// ParseFrame returns the first frame in b: its header, its payload (which
// aliases b) and the bytes it took. n is 0, with no error, while b holds
// less than a whole frame. A frame longer than maxFrameSize (the
// SETTINGS_MAX_FRAME_SIZE this side advertised) is a FRAME_SIZE_ERROR
// connection error, found from the header alone so an oversize frame is
// never buffered.
func ParseFrame(b []byte, maxFrameSize uint32) (h FrameHeader, payload []byte, n int, err error) {
	if len(b) < FrameHeaderLen {
		return h, nil, 0, nil
	}
	h = ParseFrameHeader(b)
	if h.Length > maxFrameSize {
		return h, nil, 0, connError(ErrCodeFrameSize, "%v frame of %d bytes is over SETTINGS_MAX_FRAME_SIZE %d", h.Type, h.Length, maxFrameSize)
	}
	end := FrameHeaderLen + int(h.Length)
	if len(b) < end {
		return h, nil, 0, nil
	}
	return h, b[FrameHeaderLen:end:end], end, nil
}

// CheckPreface reports how b starts: complete is true when b begins with
// the whole Preface; ok is false when b cannot begin with it (b's bytes so
// far differ). A b shorter than the preface that matches so far is
// (false, true): wait for more.
func CheckPreface(b []byte) (complete, ok bool) {
	n := min(len(b), len(Preface))
	if string(b[:n]) != Preface[:n] {
		return false, false
	}
	return n == len(Preface), true
}
