package frame

import (
	"encoding/binary"
	"fmt"
)

// AppendRequest appends one request frame to dst. It checks the opcode's shape (no value
// on GET or DEL, no key on PING) and the field widths, returning dst unchanged and an
// *Error instead of writing a frame the peer would misread.
func AppendRequest(dst []byte, op Op, key, value []byte) ([]byte, error) {
	switch op {
	case OpGet, OpDel:
		if len(value) != 0 {
			return dst, &Error{Msg: fmt.Sprintf("%v request carries a %d-byte value; it takes none", op, len(value))}
		}
	case OpPing:
		if len(key) != 0 {
			return dst, &Error{Msg: fmt.Sprintf("PING request carries a %d-byte key; it takes none", len(key))}
		}
	case OpSet:
	default:
		return dst, &Error{Msg: fmt.Sprintf("unknown opcode %d", uint8(op))}
	}
	if len(key) > MaxKeyLen {
		return dst, keyTooLong(int64(len(key)), MaxKeyLen)
	}
	if int64(len(value)) > MaxValueLen {
		return dst, valueTooLong(int64(len(value)), MaxValueLen)
	}
	dst = append(dst, byte(op))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(key)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(value)))
	dst = append(dst, key...)
	return append(dst, value...), nil
}

// AppendGet appends a GET request for key.
func AppendGet(dst, key []byte) ([]byte, error) { return AppendRequest(dst, OpGet, key, nil) }

// AppendSet appends a SET request storing value under key.
func AppendSet(dst, key, value []byte) ([]byte, error) {
	return AppendRequest(dst, OpSet, key, value)
}

// AppendDel appends a DEL request for key.
func AppendDel(dst, key []byte) ([]byte, error) { return AppendRequest(dst, OpDel, key, nil) }

// AppendPing appends a PING request whose payload the server echoes.
func AppendPing(dst, payload []byte) ([]byte, error) {
	return AppendRequest(dst, OpPing, nil, payload)
}

// AppendResponse appends one response frame to dst. A NOT_FOUND response carries no
// value; an oversize value or unknown status returns dst unchanged and an *Error.
func AppendResponse(dst []byte, status Status, value []byte) ([]byte, error) {
	switch status {
	case StatusOK, StatusError:
	case StatusNotFound:
		if len(value) != 0 {
			return dst, &Error{Msg: fmt.Sprintf("NOT_FOUND response carries a %d-byte value; it takes none", len(value))}
		}
	default:
		return dst, &Error{Msg: fmt.Sprintf("unknown status %d", uint8(status))}
	}
	if int64(len(value)) > MaxValueLen {
		return dst, valueTooLong(int64(len(value)), MaxValueLen)
	}
	dst = append(dst, byte(status))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...), nil
}

// AppendErrorResponse appends an ERROR response carrying msg, truncated to
// DefaultMaxValueLen so that it always encodes and any Decoder accepts it.
func AppendErrorResponse(dst []byte, msg string) []byte {
	if len(msg) > DefaultMaxValueLen {
		msg = msg[:DefaultMaxValueLen]
	}
	dst = append(dst, byte(StatusError))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}
