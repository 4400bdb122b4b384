package kv

import (
	"encoding/binary"
	"hash/crc64"
	"strconv"

	"github.com/shoalkv/shoal/internal/ascii"
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

// crcJones is the table of Redis's CRC64 (Jones polynomial, reflected):
// hash/crc64 takes the reversed polynomial.
var crcJones = crc64.MakeTable(0x95ac9329ac4bc9b5)

// crc64Jones is Redis's crc64(0, p): no initial or final inversion, which
// crc64.Update applies, so they are undone around it.
func crc64Jones(p []byte) uint64 {
	return ^crc64.Update(^uint64(0), crcJones, p)
}

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
	return binary.LittleEndian.AppendUint64(p, crc64Jones(p))
}

// appendRDBString appends s as Redis's rdbSaveRawString does with
// rdbcompression on. (A library's code starts with "#!", so it never
// takes the integer encoding.)
func appendRDBString(dst, s []byte) []byte {
	if len(s) > rdbCompressAbove {
		if c := lzfCompress(s, len(s)-4); c != nil {
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
		if !ok || ulen > uint64(len(c))*(lzfMaxRef+2)/2 { // no more than a back reference per two octets can make
			return nil, false
		}
		return lzfDecompress(c, int(ulen))
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
	return binary.LittleEndian.Uint64(footer[2:]) == crc64Jones(p[:len(p)-8])
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

// LZF, the compression of RDB strings (liblzf 3.6's format, as
// redis-server builds it: a 2^16-slot hash table, "very fast" mode).
//
//	000LLLLL <L+1 octets>        a literal run of L+1 (1..32) octets
//	LLLooooo oooooooo            a back reference of L+2 (3..8) octets, o+1 back
//	111ooooo LLLLLLLL oooooooo   a back reference of L+9 octets
const (
	lzfHashLog = 16
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
)

func lzfIndex(h uint32) uint32 {
	return ((h >> (3*8 - lzfHashLog)) - h*5) & (1<<lzfHashLog - 1)
}

// lzfCompress compresses in into at most outLen bytes the way liblzf's
// lzf_compress does (so the output is redis-server's byte for byte), or
// returns nil if it does not fit.
func lzfCompress(in []byte, outLen int) []byte {
	if len(in) < 3 || outLen <= 0 {
		return nil
	}
	table := make([]int32, 1<<lzfHashLog) // position+1 of the last 3 octets that hashed here
	out := make([]byte, outLen+8)         // slack: the checks below are liblzf's, which may step past the end before failing
	end := len(in)
	ip, op, lit := 0, 1, 0 // op 0 is the first literal run's header
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < end-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := lzfIndex(hval)
		ref := int(table[slot]) - 1
		table[slot] = int32(ip + 1)
		if ref > 0 && ref < ip && ip-ref-1 < lzfMaxOff &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			maxLen := min(end-ip-2, lzfMaxRef)
			if op+3+1 >= outLen && op-oneIf(lit == 0)+3+1 >= outLen {
				return nil
			}
			out[op-lit-1] = byte(lit - 1) // close the literal run
			op -= oneIf(lit == 0)         // or drop its empty header
			n := lzfMatch(in, ref, ip, maxLen)
			n -= 2
			ip++
			if n < 7 {
				out[op] = byte(off>>8) + byte(n<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(n - 7)
				op += 2
			}
			out[op] = byte(off)
			op += 2 // and the next literal run's header
			lit = 0
			ip += n + 1
			if ip >= end-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			for range 2 {
				hval = hval<<8 | uint32(in[ip+2])
				table[lzfIndex(hval)] = int32(ip + 1)
				ip++
			}
			continue
		}
		if op >= outLen {
			return nil
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outLen {
		return nil
	}
	for ip < end {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	op -= oneIf(lit == 0)
	return out[:op]
}

// lzfMatch is how many octets match at ref and ip, counted as liblzf
// counts them: 16 at a time without the limit while more than 16 may
// match, then one at a time up to maxLen.
func lzfMatch(in []byte, ref, ip, maxLen int) int {
	n := 2
	if maxLen > 16 {
		for range 16 {
			n++
			if in[ref+n] != in[ip+n] {
				return n
			}
		}
	}
	for {
		n++
		if n >= maxLen || in[ref+n] != in[ip+n] {
			return n
		}
	}
}

func oneIf(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lzfDecompress expands c into exactly n octets.
func lzfDecompress(c []byte, n int) ([]byte, bool) {
	out := make([]byte, 0, n)
	for i := 0; i < len(c); {
		ctrl := int(c[i])
		i++
		if ctrl < 1<<5 {
			run := ctrl + 1
			if i+run > len(c) || len(out)+run > n {
				return nil, false
			}
			out = append(out, c[i:i+run]...)
			i += run
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(c) {
				return nil, false
			}
			length += int(c[i])
			i++
		}
		if i >= len(c) {
			return nil, false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(c[i]) - 1
		i++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, false
		}
		for k := 0; k < length; k++ { // may overlap what it appends
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == n
}
