package http1

import (
	"errors"
	"fmt"
)

// ErrIncomplete reports that buf ends inside a request; call Parse again with more bytes.
var ErrIncomplete = errors.New("http1: incomplete request")

// Error is a request the server must refuse. Status is the response code to send
// (400, 413, 431, 501 or 505) and Msg says what was wrong, with the offending value
// and the limit where there is one.
type Error struct {
	Status int
	Msg    string
}

// Error returns the message prefixed with "http1: " and the status code.
func (e *Error) Error() string { return fmt.Sprintf("http1: %d %s", e.Status, e.Msg) }

func errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *Error { return errorf(400, format, args...) }

// quote shows at most 64 bytes of an offending value, so that an error about a huge
// field does not itself become huge.
func quote(b []byte) string {
	const max = 64
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
