package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// DUMP payloads: a value's type byte and encoding as in a file, then the
// RDB version (2 bytes, little-endian) and the CRC-64 of everything before
// it (8 bytes, little-endian).

// Encoder encodes values, reusing its buffers from call to call. It is not
// safe for concurrent use.
type Encoder struct {
	enc *encoder
}

// NewEncoder returns an Encoder choosing encodings by o.
func NewEncoder(o Options) *Encoder { return &Encoder{enc: newEncoder(o)} }

// AppendDump appends v's DUMP payload to dst. The checksum is always
// computed: RESTORE checks it whatever rdbchecksum says.
func (e *Encoder) AppendDump(dst []byte, v *Value) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0)
	dst, typ, err := e.enc.appendValue(dst, v)
	if err != nil {
		return dst[:start], err
	}
	dst[start] = typ
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, crcUpdate(0, dst[start:])), nil
}

// ErrDumpFooter is returned by DecodeDump for a payload whose RDB version
// is newer than 10 or whose checksum is wrong: RESTORE's "DUMP payload
// version or checksum are wrong".
var ErrDumpFooter = errors.New("rdb: DUMP payload version or checksum are wrong")

// DecodeDump decodes a DUMP payload into v and returns the RDB type it was
// encoded as. v's slices may point into payload. A payload with a wrong
// footer returns ErrDumpFooter; one whose value cannot be read (RESTORE's
// "Bad data format"), a *CorruptError, which an empty collection is too.
// As with Redis, bytes between the value and the footer are ignored.
func DecodeDump(payload []byte, v *Value) (byte, error) {
	if len(payload) < 10 {
		return 0, ErrDumpFooter
	}
	footer := payload[len(payload)-10:]
	if binary.LittleEndian.Uint16(footer) > Version {
		return 0, ErrDumpFooter
	}
	if crcUpdate(0, payload[:len(payload)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return 0, ErrDumpFooter
	}
	d := decoder{src: newBytesSource(payload[:len(payload)-10])}
	t, err := d.src.readByte()
	if err != nil {
		return 0, d.fail(err, "reading the value type")
	}
	d.at = 1
	if err := d.readValue(t, v); err != nil {
		return t, err
	}
	if v.Len() == 0 {
		return t, &CorruptError{Offset: 1, Reason: fmt.Sprintf("empty %s", v.Kind)}
	}
	return t, nil
}
