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
