package aof

import "strconv"

// AppendCommand appends args to dst as one RESP multibulk command, the form
// Redis writes to its append-only file, and returns the extended slice.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = AppendArg(dst, a)
	}
	return dst
}

// AppendHeader appends the multibulk header of a command of n arguments;
// follow it with n AppendArg calls.
func AppendHeader(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendArg appends one bulk-string argument.
func AppendArg(dst, a []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(a)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, a...)
	return append(dst, '\r', '\n')
}

// AppendIntArg appends an integer argument as its decimal text.
func AppendIntArg(dst []byte, n int64) []byte {
	var tmp [20]byte
	return AppendArg(dst, strconv.AppendInt(tmp[:0], n, 10))
}
