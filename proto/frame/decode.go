package frame

import (
	"encoding/binary"
	"fmt"
)

// Decoder decodes frames under its Limits. The zero value uses the defaults. A Decoder
// holds no state between calls, so one value may serve many connections concurrently.
type Decoder struct {
	Limits Limits
}

// DecodeRequest decodes the request at the front of buf into req and returns the number
// of bytes it used. req.Key and req.Value alias buf. It returns ErrIncomplete when buf
// holds only part of the frame, and an *Error for a malformed frame; an oversize length
// is reported as soon as the 7-byte header has arrived. On error req is unchanged.
func (d *Decoder) DecodeRequest(buf []byte, req *Request) (n int, err error) {
	if len(buf) < RequestHeaderLen {
		if len(buf) > 0 && !validOp(Op(buf[0])) {
			return 0, &Error{Msg: fmt.Sprintf("unknown opcode %d", buf[0])}
		}
		return 0, ErrIncomplete
	}
	op := Op(buf[0])
	keyLen := int64(binary.BigEndian.Uint16(buf[1:3]))
	valueLen := int64(binary.BigEndian.Uint32(buf[3:7]))
	switch op {
	case OpGet, OpDel:
		if valueLen != 0 {
			return 0, &Error{Msg: fmt.Sprintf("%v request carries a %d-byte value; it takes none", op, valueLen)}
		}
	case OpPing:
		if keyLen != 0 {
			return 0, &Error{Msg: fmt.Sprintf("PING request carries a %d-byte key; it takes none", keyLen)}
		}
	case OpSet:
	default:
		return 0, &Error{Msg: fmt.Sprintf("unknown opcode %d", buf[0])}
	}
	if limit := int64(d.Limits.keyLimit()); keyLen > limit {
		return 0, keyTooLong(keyLen, limit)
	}
	if limit := d.Limits.valueLimit(); valueLen > limit {
		return 0, valueTooLong(valueLen, limit)
	}
	// Both lengths are bounded by the limits above, so the sum cannot overflow int.
	total := RequestHeaderLen + keyLen + valueLen
	if int64(len(buf)) < total {
		return 0, ErrIncomplete
	}
	keyEnd := RequestHeaderLen + int(keyLen)
	req.Op = op
	req.Key = buf[RequestHeaderLen:keyEnd:keyEnd]
	req.Value = buf[keyEnd:total:total]
	return int(total), nil
}

// DecodeResponse decodes the response at the front of buf into resp and returns the
// number of bytes it used. resp.Value aliases buf. Errors are as for DecodeRequest.
func (d *Decoder) DecodeResponse(buf []byte, resp *Response) (n int, err error) {
	if len(buf) < ResponseHeaderLen {
		if len(buf) > 0 && !validStatus(Status(buf[0])) {
			return 0, &Error{Msg: fmt.Sprintf("unknown status %d", buf[0])}
		}
		return 0, ErrIncomplete
	}
	status := Status(buf[0])
	if !validStatus(status) {
		return 0, &Error{Msg: fmt.Sprintf("unknown status %d", buf[0])}
	}
	valueLen := int64(binary.BigEndian.Uint32(buf[1:5]))
	if status == StatusNotFound && valueLen != 0 {
		return 0, &Error{Msg: fmt.Sprintf("NOT_FOUND response carries a %d-byte value; it takes none", valueLen)}
	}
	if limit := d.Limits.valueLimit(); valueLen > limit {
		return 0, valueTooLong(valueLen, limit)
	}
	total := ResponseHeaderLen + valueLen
	if int64(len(buf)) < total {
		return 0, ErrIncomplete
	}
	resp.Status = status
	resp.Value = buf[ResponseHeaderLen:total:total]
	return int(total), nil
}

func validOp(o Op) bool { return o >= OpGet && o <= OpPing }

func validStatus(s Status) bool { return s <= StatusError }
