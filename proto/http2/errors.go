package http2

import "fmt"

// ErrCode is an error code of RFC 9113 section 7, carried by RST_STREAM
// and GOAWAY.
type ErrCode uint32

// The error codes of RFC 9113 section 7.
const (
	ErrCodeNo                 ErrCode = 0x0
	ErrCodeProtocol           ErrCode = 0x1
	ErrCodeInternal           ErrCode = 0x2
	ErrCodeFlowControl        ErrCode = 0x3
	ErrCodeSettingsTimeout    ErrCode = 0x4
	ErrCodeStreamClosed       ErrCode = 0x5
	ErrCodeFrameSize          ErrCode = 0x6
	ErrCodeRefusedStream      ErrCode = 0x7
	ErrCodeCancel             ErrCode = 0x8
	ErrCodeCompression        ErrCode = 0x9
	ErrCodeConnect            ErrCode = 0xa
	ErrCodeEnhanceYourCalm    ErrCode = 0xb
	ErrCodeInadequateSecurity ErrCode = 0xc
	ErrCodeHTTP11Required     ErrCode = 0xd
)

var errCodeNames = [...]string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
	"SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
	"COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}

// String returns the code's name as the RFC spells it.
func (c ErrCode) String() string {
	if int(c) < len(errCodeNames) {
		return errCodeNames[c]
	}
	return fmt.Sprintf("UNKNOWN_ERROR_CODE_%d", uint32(c))
}

// Error is a frame the receiver must refuse: a connection error (send
// GOAWAY with Code and close) or, when Stream is set, a stream error (send
// RST_STREAM with Code on that stream and carry on).
type Error struct {
	Code   ErrCode
	Stream uint32 // 0: a connection error
	Msg    string
}

// Error returns the message with the code and, for a stream error, the stream.
func (e *Error) Error() string {
	if e.Stream != 0 {
		return fmt.Sprintf("http2: stream %d: %v: %s", e.Stream, e.Code, e.Msg)
	}
	return fmt.Sprintf("http2: %v: %s", e.Code, e.Msg)
}

func connError(code ErrCode, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func streamError(id uint32, code ErrCode, format string, args ...any) *Error {
	return &Error{Code: code, Stream: id, Msg: fmt.Sprintf(format, args...)}
}
