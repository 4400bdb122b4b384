package resp

import (
	"errors"
	"fmt"
)

// ErrIncomplete reports that the buffer ends before the command or reply
// does. Call again with the same bytes plus more.
var ErrIncomplete = errors.New("resp: incomplete input")

// ProtocolError is a malformed request. Error returns the exact text Redis 7
// replies with (without the leading '-'), so a server can write
// "-" + err.Error() + "\r\n" and close the connection, as Redis does.
type ProtocolError struct {
	// Msg is Redis's reply text, e.g. "ERR Protocol error: invalid bulk length".
	Msg string
	// Detail says what was wrong for logs: the offending value and the limit.
	// It is never sent to the client, matching Redis.
	Detail string
}

// Error returns Redis's reply text.
func (e *ProtocolError) Error() string { return e.Msg }

// Redis 7's protocol error texts, from src/networking.c.
const (
	msgInvalidMultibulk = "ERR Protocol error: invalid multibulk length"
	msgInvalidBulk      = "ERR Protocol error: invalid bulk length"
	msgUnbalanced       = "ERR Protocol error: unbalanced quotes in request"
	msgBigInline        = "ERR Protocol error: too big inline request"
	msgBigMbulkCount    = "ERR Protocol error: too big mbulk count string"
	msgBigBulkCount     = "ERR Protocol error: too big bulk count string"
	msgUnauthMultibulk  = "ERR Protocol error: unauthenticated multibulk length"
	msgUnauthBulk       = "ERR Protocol error: unauthenticated bulk length"
)

func protoErr(msg, format string, args ...any) *ProtocolError {
	return &ProtocolError{Msg: msg, Detail: fmt.Sprintf(format, args...)}
}

// expectedDollar builds Redis's "expected '$', got '%c'" text. Redis maps CR
// and LF to spaces so the reply stays one line; so do we.
func expectedDollar(got byte) *ProtocolError {
	c := got
	if c == '\r' || c == '\n' {
		c = ' '
	}
	return &ProtocolError{
		Msg:    "ERR Protocol error: expected '$', got '" + string([]byte{c}) + "'",
		Detail: fmt.Sprintf("bulk header starts with byte 0x%02x, want '$'", got),
	}
}

// Limits bounds what a peer may ask the parser to accept. The zero value of a
// field means "use the default".
type Limits struct {
	// MaxBulkLen is proto-max-bulk-len: the largest bulk argument accepted.
	// Default 512 MiB.
	MaxBulkLen int64
	// MaxMultibulkLen is the largest argument count accepted. Default
	// 1024*1024. Redis 7 itself allows up to INT_MAX for authenticated
	// clients; set math.MaxInt32 for that. Memory stays bounded either way:
	// the parser grows its argument slice only as arguments arrive.
	MaxMultibulkLen int64
	// MaxInlineLen bounds an inline command line, and also how far the parser
	// looks for the end of a "*count" or "$length" header line, as Redis's
	// PROTO_INLINE_MAX_SIZE does. Default 64 KiB.
	MaxInlineLen int
}

// Default limits, Redis's defaults.
const (
	DefaultMaxBulkLen      = 512 << 20
	DefaultMaxMultibulkLen = 1024 * 1024
	DefaultMaxInlineLen    = 64 << 10
)

// DefaultLimits are Redis's defaults.
var DefaultLimits = Limits{
	MaxBulkLen:      DefaultMaxBulkLen,
	MaxMultibulkLen: DefaultMaxMultibulkLen,
	MaxInlineLen:    DefaultMaxInlineLen,
}

func (l Limits) withDefaults() Limits {
	if l.MaxBulkLen <= 0 {
		l.MaxBulkLen = DefaultMaxBulkLen
	}
	if l.MaxMultibulkLen <= 0 {
		l.MaxMultibulkLen = DefaultMaxMultibulkLen
	}
	if l.MaxInlineLen <= 0 {
		l.MaxInlineLen = DefaultMaxInlineLen
	}
	return l
}
