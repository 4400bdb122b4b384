package http2

import "encoding/binary"

// Each frame type's payload: Parse* checks a received frame as RFC 9113
// section 6 requires and returns its fields (aliasing the payload);
// Append* appends a whole frame, header included.

// ParseData returns a DATA frame's data without its padding.
func ParseData(h FrameHeader, payload []byte) ([]byte, error) {
	if h.StreamID == 0 {
		return nil, connError(ErrCodeProtocol, "DATA frame on stream 0")
	}
	return unpad(h, payload)
}

// unpad strips the Pad Length octet and the padding of a PADDED frame.
func unpad(h FrameHeader, payload []byte) ([]byte, error) {
	if !h.Flags.Has(FlagPadded) {
		return payload, nil
	}
	if len(payload) < 1 {
		return nil, connError(ErrCodeFrameSize, "padded %v frame of 0 bytes has no Pad Length", h.Type)
	}
	pad := int(payload[0])
	if pad >= len(payload) {
		return nil, connError(ErrCodeProtocol, "%v frame's padding %d is not less than its %d-byte payload", h.Type, pad, len(payload))
	}
	return payload[1 : len(payload)-pad], nil
}

// Priority is a HEADERS or PRIORITY frame's (deprecated) priority signal.
type Priority struct {
	StreamDep uint32
	Exclusive bool
	Weight    uint8
}

func parsePriority(b []byte) Priority {
	dep := binary.BigEndian.Uint32(b)
	return Priority{StreamDep: dep & (1<<31 - 1), Exclusive: dep>>31 == 1, Weight: b[4]}
}

// ParseHeaders returns a HEADERS frame's header block fragment, without
// padding and priority. A stream that depends on itself is a stream error.
func ParseHeaders(h FrameHeader, payload []byte) (block []byte, prio Priority, err error) {
	if h.StreamID == 0 {
		return nil, prio, connError(ErrCodeProtocol, "HEADERS frame on stream 0")
	}
	block, err = unpad(h, payload)
	if err != nil {
		return nil, prio, err
	}
	if h.Flags.Has(FlagPriority) {
		if len(block) < 5 {
			return nil, prio, connError(ErrCodeFrameSize, "HEADERS frame with PRIORITY has %d bytes, fewer than 5", len(block))
		}
		prio, block = parsePriority(block), block[5:]
		if prio.StreamDep == h.StreamID {
			return block, prio, streamError(h.StreamID, ErrCodeProtocol, "stream %d depends on itself", h.StreamID)
		}
	}
	return block, prio, nil
}

// ParseContinuation checks a CONTINUATION frame; its payload is the
// block fragment. That it follows HEADERS on the same stream is the
// caller's to check.
func ParseContinuation(h FrameHeader) error {
	if h.StreamID == 0 {
		return connError(ErrCodeProtocol, "CONTINUATION frame on stream 0")
	}
	return nil
}

// ParsePriority returns a PRIORITY frame's fields.
func ParsePriority(h FrameHeader, payload []byte) (Priority, error) {
	if h.StreamID == 0 {
		return Priority{}, connError(ErrCodeProtocol, "PRIORITY frame on stream 0")
	}
	if len(payload) != 5 {
		return Priority{}, streamError(h.StreamID, ErrCodeFrameSize, "PRIORITY frame of %d bytes, not 5", len(payload))
	}
	p := parsePriority(payload)
	if p.StreamDep == h.StreamID {
		return p, streamError(h.StreamID, ErrCodeProtocol, "stream %d depends on itself", h.StreamID)
	}
	return p, nil
}

// ParseRSTStream returns an RST_STREAM frame's error code.
func ParseRSTStream(h FrameHeader, payload []byte) (ErrCode, error) {
	if h.StreamID == 0 {
		return 0, connError(ErrCodeProtocol, "RST_STREAM frame on stream 0")
	}
	if len(payload) != 4 {
		return 0, connError(ErrCodeFrameSize, "RST_STREAM frame of %d bytes, not 4", len(payload))
	}
	return ErrCode(binary.BigEndian.Uint32(payload)), nil
}

// ParsePing returns a PING frame's 8 bytes of opaque data.
func ParsePing(h FrameHeader, payload []byte) ([8]byte, error) {
	var data [8]byte
	if h.StreamID != 0 {
		return data, connError(ErrCodeProtocol, "PING frame on stream %d, not 0", h.StreamID)
	}
	if len(payload) != 8 {
		return data, connError(ErrCodeFrameSize, "PING frame of %d bytes, not 8", len(payload))
	}
	copy(data[:], payload)
	return data, nil
}

// ParseGoAway returns a GOAWAY frame's last stream id, error code and
// debug data.
func ParseGoAway(h FrameHeader, payload []byte) (last uint32, code ErrCode, debug []byte, err error) {
	if h.StreamID != 0 {
		return 0, 0, nil, connError(ErrCodeProtocol, "GOAWAY frame on stream %d, not 0", h.StreamID)
	}
	if len(payload) < 8 {
		return 0, 0, nil, connError(ErrCodeFrameSize, "GOAWAY frame of %d bytes, fewer than 8", len(payload))
	}
	return binary.BigEndian.Uint32(payload) & (1<<31 - 1), ErrCode(binary.BigEndian.Uint32(payload[4:])), payload[8:], nil
}

// ParseWindowUpdate returns a WINDOW_UPDATE frame's increment. An
// increment of 0 is a stream error on a stream, a connection error on
// stream 0.
func ParseWindowUpdate(h FrameHeader, payload []byte) (uint32, error) {
	if len(payload) != 4 {
		return 0, connError(ErrCodeFrameSize, "WINDOW_UPDATE frame of %d bytes, not 4", len(payload))
	}
	inc := binary.BigEndian.Uint32(payload) & (1<<31 - 1)
	if inc == 0 {
		if h.StreamID == 0 {
			return 0, connError(ErrCodeProtocol, "WINDOW_UPDATE with an increment of 0 on the connection")
		}
		return 0, streamError(h.StreamID, ErrCodeProtocol, "WINDOW_UPDATE with an increment of 0")
	}
	return inc, nil
}

// AppendData appends a DATA frame carrying data.
func AppendData(dst []byte, stream uint32, endStream bool, data []byte) []byte {
	var f Flags
	if endStream {
		f = FlagEndStream
	}
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(len(data)), Type: FrameData, Flags: f, StreamID: stream})
	return append(dst, data...)
}

// AppendHeaders appends a HEADERS frame carrying a header block fragment
// (CONTINUATION frames follow unless endHeaders).
func AppendHeaders(dst []byte, stream uint32, endStream, endHeaders bool, block []byte) []byte {
	var f Flags
	if endStream {
		f |= FlagEndStream
	}
	if endHeaders {
		f |= FlagEndHeaders
	}
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(len(block)), Type: FrameHeaders, Flags: f, StreamID: stream})
	return append(dst, block...)
}

// AppendContinuation appends a CONTINUATION frame.
func AppendContinuation(dst []byte, stream uint32, endHeaders bool, block []byte) []byte {
	var f Flags
	if endHeaders {
		f = FlagEndHeaders
	}
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(len(block)), Type: FrameContinuation, Flags: f, StreamID: stream})
	return append(dst, block...)
}

// AppendHeaderBlock appends a whole header block as a HEADERS frame and as
// many CONTINUATION frames as maxFrameSize (the peer's) requires.
func AppendHeaderBlock(dst []byte, stream uint32, endStream bool, block []byte, maxFrameSize uint32) []byte {
	max := int(maxFrameSize)
	first := min(len(block), max)
	dst = AppendHeaders(dst, stream, endStream, first == len(block), block[:first])
	for block = block[first:]; len(block) > 0; {
		n := min(len(block), max)
		dst = AppendContinuation(dst, stream, n == len(block), block[:n])
		block = block[n:]
	}
	return dst
}

// AppendPriority appends a PRIORITY frame.
func AppendPriority(dst []byte, stream uint32, p Priority) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: 5, Type: FramePriority, StreamID: stream})
	dep := p.StreamDep
	if p.Exclusive {
		dep |= 1 << 31
	}
	dst = binary.BigEndian.AppendUint32(dst, dep)
	return append(dst, p.Weight)
}

// AppendRSTStream appends an RST_STREAM frame.
func AppendRSTStream(dst []byte, stream uint32, code ErrCode) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: 4, Type: FrameRSTStream, StreamID: stream})
	return binary.BigEndian.AppendUint32(dst, uint32(code))
}

// AppendPing appends a PING frame, or its acknowledgment.
func AppendPing(dst []byte, ack bool, data [8]byte) []byte {
	var f Flags
	if ack {
		f = FlagAck
	}
	dst = AppendFrameHeader(dst, FrameHeader{Length: 8, Type: FramePing, Flags: f})
	return append(dst, data[:]...)
}

// AppendGoAway appends a GOAWAY frame: the last stream the sender will
// answer, why, and debug text for the peer's logs.
func AppendGoAway(dst []byte, last uint32, code ErrCode, debug []byte) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(8 + len(debug)), Type: FrameGoAway})
	dst = binary.BigEndian.AppendUint32(dst, last&(1<<31-1))
	dst = binary.BigEndian.AppendUint32(dst, uint32(code))
	return append(dst, debug...)
}

// AppendWindowUpdate appends a WINDOW_UPDATE frame (stream 0: the
// connection's window).
func AppendWindowUpdate(dst []byte, stream, increment uint32) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: 4, Type: FrameWindowUpdate, StreamID: stream})
	return binary.BigEndian.AppendUint32(dst, increment)
}
