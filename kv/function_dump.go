package kv

import (
	"encoding/binary"
	"strconv"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/rdb"
)

// FUNCTION DUMP and RESTORE, in Redis 7.0's payload format: for each
// library the RDB opcode FUNCTION2 and its code as an RDB string (LZF
// compressed as redis-server compresses it, when that saves space), then
// the RDB version (10) and a CRC64 (Jones) of all that, both little
// endian. A payload of either server restores on the other; Shoal's is
// byte for byte redis-server's for the same libraries in the same order.

const (
	rdbVersion          = 10
	rdbOpcodeFunction2  = 245 // RDB_OPCODE_FUNCTION2: a library's code
	rdbOpcodeFunction   = 246 // RDB_OPCODE_FUNCTION: 7.0 rc1 and rc2's name, engine, description, body
	rdbEncInt8          = 0xC0
	rdbEncInt16         = 0xC1
	rdbEncInt32         = 0xC2
	rdbEncLZF           = 0xC3
	rdbCompressAbove    = 20 // Redis does not try to compress shorter strings
	dumpFooterLen       = 10 // the version and the CRC
	errDumpPayload      = "ERR DUMP payload version or checksum are wrong"
	errPayloadNotString = "ERR Failed loading library payload"
)

func cmdFunctionDump(h *Handler, cl *client, _ [][]byte) {
	e := h.scripts()
	e.mu.Lock()
	codes := e.functions.codes()
	e.mu.Unlock()
	cl.writeBulk(dumpFunctions(codes))
}

// dumpFunctions makes the payload of libraries whose codes are codes.
func dumpFunctions(codes []string) []byte {
	var p []byte
	for _, code := range codes {
		p = append(p, rdbOpcodeFunction2)
		p = appendRDBString(p, []byte(code))
	}
	p = binary.LittleEndian.AppendUint16(p, rdbVersion)
	return binary.LittleEndian.AppendUint64(p, rdb.CRC64(p))
}

// appendRDBString appends s as Redis's rdbSaveRawString does with
// rdbcompression on. (A library's code starts with "#!", so it never
// takes the integer encoding.)
func appendRDBString(dst, s []byte) []byte {
	if len(s) > rdbCompressAbove {
		if c, ok := rdb.CompressLZF(nil, s, len(s)-4); ok {
			dst = append(dst, rdbEncLZF)
			dst = appendRDBLen(dst, uint64(len(c)))
			dst = appendRDBLen(dst, uint64(len(s)))
			return append(dst, c...)
		}
	}
	dst = appendRDBLen(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendRDBLen appends an RDB length: 6 bits, 14 bits, 32 or 64 bits big
// endian.
func appendRDBLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, byte(n>>8)|0x40, byte(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(dst, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0x81), n)
}

// rdbReader reads an RDB payload.
type rdbReader struct {
	p   []byte
	pos int
}

func (r *rdbReader) byte() (byte, bool) {
	if r.pos >= len(r.p) {
		return 0, false
	}
	r.pos++
	return r.p[r.pos-1], true
}

func (r *rdbReader) take(n uint64) ([]byte, bool) {
	if n > uint64(len(r.p)-r.pos) {
		return nil, false
	}
	b := r.p[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, true
}

// length reads an RDB length, or the special encoding of a string
// (encoded: n is its kind).
func (r *rdbReader) length() (n uint64, encoded, ok bool) {
	b, ok := r.byte()
	if !ok {
		return 0, false, false
	}
	switch {
	case b>>6 == 3:
		return uint64(b & 0x3f), true, true
	case b>>6 == 0:
		return uint64(b & 0x3f), false, true
	case b>>6 == 1:
		lo, ok := r.byte()
		return uint64(b&0x3f)<<8 | uint64(lo), false, ok
	case b == 0x80:
		v, ok := r.take(4)
		if !ok {
			return 0, false, false
		}
		return uint64(binary.BigEndian.Uint32(v)), false, true
	case b == 0x81:
		v, ok := r.take(8)
		if !ok {
			return 0, false, false
		}
		return binary.BigEndian.Uint64(v), false, true
	}
	return 0, false, false
}

// string reads an RDB string in any of its encodings.
func (r *rdbReader) string() ([]byte, bool) {
	n, encoded, ok := r.length()
	if !ok {
		return nil, false
	}
	if !encoded {
		return r.take(n)
	}
	switch n | 0xC0 {
	case rdbEncInt8:
		v, ok := r.take(1)
		if !ok {
			return nil, false
		}
		return strconv.AppendInt(nil, int64(int8(v[0])), 10), true
	case rdbEncInt16:
		v, ok := r.take(2)
		if !ok {
			return nil, false
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(v))), 10), true
	case rdbEncInt32:
		v, ok := r.take(4)
		if !ok {
			return nil, false
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(v))), 10), true
	case rdbEncLZF:
		clen, enc1, ok1 := r.length()
		ulen, enc2, ok2 := r.length()
		if !ok1 || !ok2 || enc1 || enc2 || ulen > 512<<20 {
			return nil, false
		}
		c, ok := r.take(clen)
		if !ok || ulen > uint64(len(c))*rdb.MaxLZFRatio {
			return nil, false
		}
		out := make([]byte, ulen)
		return out, rdb.DecompressLZF(out, c) == nil
	}
	return nil, false
}

// verifyDumpPayload checks a payload's footer as Redis does: a version not
// above Shoal's and the CRC.
func verifyDumpPayload(p []byte) bool {
	if len(p) < dumpFooterLen {
		return false
	}
	footer := p[len(p)-dumpFooterLen:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion {
		return false
	}
	return binary.LittleEndian.Uint64(footer[2:]) == rdb.CRC64(p[:len(p)-8])
}

// readFunctionPayload returns the library codes of a payload, or Redis's
// error text.
func readFunctionPayload(p []byte) ([]string, string) {
	if !verifyDumpPayload(p) {
		return nil, errDumpPayload
	}
	r := &rdbReader{p: p}
	var codes []string
	for len(p)-r.pos > dumpFooterLen {
		op, _ := r.byte()
		switch op {
		case rdbOpcodeFunction2:
			code, ok := r.string()
			if !ok {
				return nil, errPayloadNotString
			}
			codes = append(codes, string(code))
		case rdbOpcodeFunction:
			code, errText := r.oldFunction()
			if errText != "" {
				return nil, errText
			}
			codes = append(codes, code)
		default:
			return nil, "ERR given type is not a function"
		}
	}
	return codes, ""
}

// oldFunction reads a library in 7.0 rc1 and rc2's format and returns it
// as the code 7.0 keeps.
func (r *rdbReader) oldFunction() (string, string) {
	name, ok := r.string()
	if !ok {
		return "", "ERR Failed loading library name"
	}
	engine, ok := r.string()
	if !ok {
		return "", "ERR Failed loading engine name"
	}
	hasDesc, encoded, ok := r.length()
	if !ok || encoded {
		return "", "ERR Failed loading library description indicator"
	}
	if hasDesc != 0 {
		if _, ok := r.string(); !ok {
			return "", "ERR Failed loading library description"
		}
	}
	body, ok := r.string()
	if !ok {
		return "", "ERR Failed loading library blob"
	}
	return "#!" + string(engine) + " name=" + string(name) + "\n" + string(body), ""
}

// cmdFunctionRestore: FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func cmdFunctionRestore(h *Handler, cl *client, args [][]byte) {
	if len(args) > 4 {
		cl.writeError(subcommandSyntaxError(args[1]))
		return
	}
	policy := "append"
	if len(args) == 4 {
		switch {
		case ascii.EqualFold(args[3], "append"), ascii.EqualFold(args[3], "replace"), ascii.EqualFold(args[3], "flush"):
			policy = string(ascii.AppendLower(nil, args[3]))
		default:
			cl.writeError("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	codes, errText := readFunctionPayload(args[2])
	if errText != "" {
		cl.writeError(errText)
		return
	}
	e := h.scripts()
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.publishCounts()
	e.repairFunctions(h)
	restored := newFunctionSet()
	for _, code := range codes {
		lib, errText := e.loadLibrary(h, code, &restored, false, loadTimeout(cl))
		if errText != "" {
			cl.writeError(errText)
			return
		}
		restored.link(lib)
	}
	if policy == "flush" {
		e.functions = restored
	} else if errText := e.functions.join(&restored, policy == "replace"); errText != "" {
		cl.writeError(errText)
		return
	}
	cl.writeOK()
}
