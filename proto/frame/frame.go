package frame

import (
	"errors"
	"fmt"
)

// Op is a request opcode.
type Op uint8

// Request opcodes. Zero is not an opcode, so a zeroed header is rejected.
const (
	OpGet  Op = 1
	OpSet  Op = 2
	OpDel  Op = 3
	OpPing Op = 4
)

var opNames = [...]string{OpGet: "GET", OpSet: "SET", OpDel: "DEL", OpPing: "PING"}

// String returns the opcode's name, or "Op(n)" for an unknown one.
func (o Op) String() string { return nameOf(opNames[:], uint8(o), "Op") }

// Status is a response status.
type Status uint8

// Response statuses.
const (
	StatusOK       Status = 0
	StatusNotFound Status = 1
	StatusError    Status = 2
)

var statusNames = [...]string{StatusOK: "OK", StatusNotFound: "NOT_FOUND", StatusError: "ERROR"}

// String returns the status's name, or "Status(n)" for an unknown one.
func (s Status) String() string { return nameOf(statusNames[:], uint8(s), "Status") }

// nameOf returns names[v], or typ(v) when v has no name.
func nameOf(names []string, v uint8, typ string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// Header sizes and the largest lengths the fields can carry.
const (
	RequestHeaderLen  = 7
	ResponseHeaderLen = 5
	MaxKeyLen         = 1<<16 - 1
	MaxValueLen       = 1<<32 - 1
)

// DefaultMaxValueLen is the value limit a zero Limits means. It is far below the field
// maximum so that a stress client cannot make a server buffer gigabytes for one frame.
const DefaultMaxValueLen = 16 << 20

// ErrIncomplete reports that the input ends inside a frame; call again with more bytes.
var ErrIncomplete = errors.New("frame: incomplete frame")

// Error is a malformed or oversize frame, or a request that cannot be encoded. Msg names
// the offending value and, for lengths, the limit.
type Error struct {
	Msg string
}

// Error returns the message prefixed with "frame: ".
func (e *Error) Error() string { return "frame: " + e.Msg }

// Limits bounds what a Decoder accepts. A zero field means the default: MaxKeyLen for
// keys and DefaultMaxValueLen for values. Limits above the field maxima are clamped.
type Limits struct {
	MaxKeyLen   int
	MaxValueLen int64
}

func (l Limits) keyLimit() int {
	if l.MaxKeyLen <= 0 || l.MaxKeyLen > MaxKeyLen {
		return MaxKeyLen
	}
	return l.MaxKeyLen
}

func (l Limits) valueLimit() int64 {
	if l.MaxValueLen <= 0 {
		return DefaultMaxValueLen
	}
	if l.MaxValueLen > MaxValueLen {
		return MaxValueLen
	}
	return l.MaxValueLen
}

// Request is one decoded request. Key and Value are sub-slices of the decoded input.
type Request struct {
	Op    Op
	Key   []byte
	Value []byte
}

// Response is one decoded response. Value is a sub-slice of the decoded input.
type Response struct {
	Status Status
	Value  []byte
}

func keyTooLong(n, limit int64) *Error {
	return &Error{Msg: fmt.Sprintf("key length %d exceeds limit %d", n, limit)}
}

func valueTooLong(n, limit int64) *Error {
	return &Error{Msg: fmt.Sprintf("value length %d exceeds limit %d", n, limit)}
}
