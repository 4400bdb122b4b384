// Package ascii holds the byte-string helpers that the protocol, command and
// storage layers share: case folding for ASCII keywords and Redis's strict
// integer syntax. Each is written once here so that "is this SET's EX
// option?" and "is this a valid RESP length?" have one answer everywhere.
//
// Every function works on []byte without allocating (except AppendLower,
// which appends to the caller's slice), because the callers run per request.
package ascii

// Lower returns c lower-cased if it is an ASCII upper-case letter, else c.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// EqualFold reports whether b and s are equal under ASCII case folding:
// "ex", "EX" and "Ex" all equal "EX". Bytes outside A–Z and a–z must match
// exactly (unlike strings.EqualFold, no Unicode folding: the Kelvin sign is
// not 'k').
func EqualFold[B ~[]byte | ~string](b B, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if Lower(b[i]) != Lower(s[i]) {
			return false
		}
	}
	return true
}

// AppendLower appends b lower-cased (ASCII letters only) to dst.
func AppendLower(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, Lower(c))
	}
	return dst
}

// ParseInt parses b with the strictness of Redis's string2ll: an optional
// '-', no '+', no spaces, no leading zeros ("0" itself is fine, "-0" is not),
// at most 20 bytes, and a value that fits in int64. ok is false otherwise.
func ParseInt(b []byte) (v int64, ok bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (1<<64-1-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// Unhex returns the value of the hexadecimal digit c (0-9, a-f, A-F), or -1
// if c is not one.
func Unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
