package client

import (
	"errors"
	"fmt"
)

// ErrNil is returned when the server answers with a null: a missing key for
// Get, a null reply for Do. Test for it with errors.Is(err, client.ErrNil).
var ErrNil = errors.New("client: nil reply")

// ErrClosed is returned by calls made after Close, and by calls still
// waiting for their reply when Close was called.
var ErrClosed = errors.New("client: closed")

// Error is an error reply from the server, such as "ERR syntax error" or
// "WRONGTYPE Operation against a key holding the wrong kind of value". The
// connection stays usable after one.
type Error string

func (e Error) Error() string { return string(e) }

// ConnError reports that a call could not be answered because its
// connection failed, or because no connection is up while the client
// reconnects. Err is the cause (io.EOF, a dial error, a timeout, a protocol
// violation); errors.Is and errors.As see through to it.
//
// A call that failed with a ConnError after being written may or may not
// have been executed by the server.
type ConnError struct {
	// Addr is the server's address.
	Addr string
	// Reconnecting is true when the call was refused because the connection
	// was already down, false when the call was lost with the connection.
	Reconnecting bool
	// Err is the cause.
	Err error
}

func (e *ConnError) Error() string {
	if e.Reconnecting {
		return fmt.Sprintf("client: not connected to %s (reconnecting): %v", e.Addr, e.Err)
	}
	return fmt.Sprintf("client: connection to %s lost: %v", e.Addr, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }
