package kv

import (
	"slices"
	"strconv"

	"github.com/shoalkv/shoal/proto/resp"
)

// Reply helpers append to cl.out in the client's protocol version. They
// allocate nothing; the Conn's output buffer grows as needed.

func (cl *client) writeOK()             { cl.out = append(cl.out, "+OK\r\n"...) }
func (cl *client) writeStatus(s string) { cl.out = resp.AppendSimpleString(cl.out, s) }
func (cl *client) writeError(s string) {
	cl.out = resp.AppendError(cl.out, s)
	cl.failed = true
	if cl.h != nil {
		cl.h.errors.count(s)
	}
}
func (cl *client) writeInt(n int64)      { cl.out = resp.AppendInt(cl.out, n) }
func (cl *client) writeBulk(b []byte)    { cl.out = resp.AppendBulk(cl.out, b) }
func (cl *client) writeBulkStr(s string) { cl.out = resp.AppendBulkString(cl.out, s) }
func (cl *client) writeArray(n int)      { cl.out = resp.AppendArrayHeader(cl.out, n) }

// writeNull is Redis's addReplyNull: $-1 in RESP2, _ in RESP3.
func (cl *client) writeNull() {
	if cl.proto >= 3 {
		cl.out = resp.AppendNull(cl.out)
	} else {
		cl.out = resp.AppendNullBulk(cl.out)
	}
}

// writeMap writes a map header in RESP3, or a flat array of 2n in RESP2.
func (cl *client) writeMap(n int) {
	if cl.proto >= 3 {
		cl.out = resp.AppendMapHeader(cl.out, n)
	} else {
		cl.out = resp.AppendArrayHeader(cl.out, 2*n)
	}
}

// writeSet writes a set header in RESP3, or an array in RESP2.
func (cl *client) writeSet(n int) {
	if cl.proto >= 3 {
		cl.out = resp.AppendSetHeader(cl.out, n)
	} else {
		cl.out = resp.AppendArrayHeader(cl.out, n)
	}
}

// writeVerbatim writes text as a RESP3 verbatim string ("txt"), or as a bulk
// string in RESP2, as Redis does for INFO and CLIENT LIST.
func (cl *client) writeVerbatim(text []byte) {
	if cl.proto >= 3 {
		cl.out = resp.AppendVerbatim(cl.out, "txt", text)
	} else {
		cl.out = resp.AppendBulk(cl.out, text)
	}
}

// finishBulk frames the bytes appended to out after start as a bulk string:
// the store appends a value straight into the output buffer (no scratch
// copy), and this inserts the "$len\r\n" header in front of it by moving the
// value right, then adds the trailing CRLF.
func finishBulk(out []byte, start int) []byte {
	return finishReservedBulk(out, start, start)
}

// reserveBulkHeader appends a placeholder "$" header for a value of a
// digits-digit length and returns out and where the value will start. If
// the guess is right, finishReservedBulk writes the header in place and the
// value is never moved; GET uses the previous value's length as the guess,
// which is right for the fixed-size values of most workloads.
func reserveBulkHeader(out []byte, digits int) ([]byte, int) {
	n := 1 + digits + 2
	out = slices.Grow(out, n)[:len(out)+n]
	return out, len(out)
}

// finishReservedBulk frames out[valueStart:] as a bulk string whose header
// goes at hdrStart, where reserveBulkHeader left room (or none, if
// hdrStart == valueStart). It moves the value only when the header's size
// differs from the room.
func finishReservedBulk(out []byte, hdrStart, valueStart int) []byte {
	n := len(out) - valueStart
	var hdr [24]byte
	h := append(hdr[:0], '$')
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	if shift := len(h) - (valueStart - hdrStart); shift != 0 {
		if shift > 0 {
			out = slices.Grow(out, shift)
		}
		out = out[:len(out)+shift]
		copy(out[hdrStart+len(h):], out[valueStart:valueStart+n])
	}
	copy(out[hdrStart:], h)
	return append(out, '\r', '\n')
}

// digitCount returns how many decimal digits n >= 0 has.
func digitCount(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}
