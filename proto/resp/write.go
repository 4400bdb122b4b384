package resp

import (
	"math"
	"strconv"
)

// The Append functions encode one RESP value at the end of b and return the
// extended slice, like strconv.Append*. They allocate only when b must grow.

// AppendSimpleString appends "+s\r\n". CR and LF in s would end the line
// early and desynchronise the client, so they are written as spaces.
func AppendSimpleString(b []byte, s string) []byte {
	b = append(b, '+')
	return appendLine(b, s)
}

// AppendError appends "-s\r\n". s carries its own error code, as in
// "ERR syntax error" or "WRONGTYPE ...". CR and LF in s become spaces, as
// Redis does for formatted errors.
func AppendError(b []byte, s string) []byte {
	b = append(b, '-')
	return appendLine(b, s)
}

func appendLine(b []byte, s string) []byte {
	start := len(b)
	b = append(b, s...)
	for i := start; i < len(b); i++ {
		if b[i] == '\r' || b[i] == '\n' {
			b[i] = ' '
		}
	}
	return append(b, '\r', '\n')
}

// AppendInt appends the integer reply ":n\r\n".
func AppendInt(b []byte, n int64) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// AppendBulk appends the bulk string "$len\r\nv\r\n". A nil v is an empty
// bulk, not a null one: use AppendNullBulk for that.
func AppendBulk(b []byte, v []byte) []byte {
	b = appendHeader(b, '$', len(v))
	b = append(b, v...)
	return append(b, '\r', '\n')
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(b []byte, s string) []byte {
	b = appendHeader(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendBulkInt appends n as a bulk string, as Redis does for numbers in
// arrays of strings (CONFIG GET, HRANDFIELD counts).
func AppendBulkInt(b []byte, n int64) []byte {
	var digits [20]byte
	return AppendBulk(b, strconv.AppendInt(digits[:0], n, 10))
}

// AppendNullBulk appends RESP2's null, "$-1\r\n".
func AppendNullBulk(b []byte) []byte { return append(b, "$-1\r\n"...) }

// AppendNullArray appends RESP2's null array, "*-1\r\n".
func AppendNullArray(b []byte) []byte { return append(b, "*-1\r\n"...) }

// AppendNull appends RESP3's null, "_\r\n".
func AppendNull(b []byte) []byte { return append(b, "_\r\n"...) }

// AppendArrayHeader appends "*n\r\n"; n elements must follow.
func AppendArrayHeader(b []byte, n int) []byte { return appendHeader(b, '*', n) }

// AppendMapHeader appends RESP3's "%n\r\n"; n key-value pairs (2n values)
// must follow.
func AppendMapHeader(b []byte, n int) []byte { return appendHeader(b, '%', n) }

// AppendSetHeader appends RESP3's "~n\r\n"; n elements must follow.
func AppendSetHeader(b []byte, n int) []byte { return appendHeader(b, '~', n) }

// AppendPushHeader appends RESP3's ">n\r\n" push header (out-of-band data
// such as pub/sub messages); n elements must follow.
func AppendPushHeader(b []byte, n int) []byte { return appendHeader(b, '>', n) }

// AppendAttributeHeader appends RESP3's "|n\r\n"; n key-value pairs follow,
// then the reply they describe.
func AppendAttributeHeader(b []byte, n int) []byte { return appendHeader(b, '|', n) }

func appendHeader(b []byte, kind byte, n int) []byte {
	b = append(b, kind)
	if n >= 0 && n < 10 {
		b = append(b, byte('0'+n))
	} else {
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, '\r', '\n')
}

// AppendDouble appends RESP3's double ",f\r\n" in Redis 7's format: %.17g,
// and "inf", "-inf" and "nan" for the special values.
func AppendDouble(b []byte, f float64) []byte {
	b = append(b, ',')
	b = appendFloat(b, f)
	return append(b, '\r', '\n')
}

// AppendFloatBulk appends f as a bulk string with the same text as
// AppendDouble: how Redis 7 sends a double to a RESP2 client.
func AppendFloatBulk(b []byte, f float64) []byte {
	var text [32]byte
	return AppendBulk(b, appendFloat(text[:0], f))
}

// appendFloat writes C's %.17g, which Go's 'g' with precision 17 matches
// digit for digit (trailing zeros dropped, two-digit exponents), apart from
// the spellings of the special values.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// AppendBool appends RESP3's "#t\r\n" or "#f\r\n".
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "#t\r\n"...)
	}
	return append(b, "#f\r\n"...)
}

// AppendBigNumber appends RESP3's big number "(s\r\n"; s is the decimal text.
func AppendBigNumber(b []byte, s string) []byte {
	b = append(b, '(')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendVerbatim appends RESP3's verbatim string "=len\r\nfmt:v\r\n". format
// is a three-byte type such as "txt" or "mkd"; as in Redis, a shorter one is
// padded with spaces and a longer one cut to three bytes.
func AppendVerbatim(b []byte, format string, v []byte) []byte {
	b = appendHeader(b, '=', len(v)+4)
	for i := 0; i < 3; i++ {
		if i < len(format) {
			b = append(b, format[i])
		} else {
			b = append(b, ' ')
		}
	}
	b = append(b, ':')
	b = append(b, v...)
	return append(b, '\r', '\n')
}

// AppendBlobError appends RESP3's bulk error "!len\r\ns\r\n", for error texts
// that may hold CR or LF.
func AppendBlobError(b []byte, s string) []byte {
	start := len(b)
	b = AppendBulkString(b, s)
	b[start] = '!' // a bulk string but for its type byte
	return b
}

// AppendCommand appends args as a RESP multibulk command, the form clients
// send: "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".
func AppendCommand(b []byte, args ...string) []byte {
	b = appendHeader(b, '*', len(args))
	for _, a := range args {
		b = AppendBulkString(b, a)
	}
	return b
}

// AppendCommandBytes is AppendCommand for byte-slice arguments.
func AppendCommandBytes(b []byte, args ...[]byte) []byte {
	b = appendHeader(b, '*', len(args))
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}
