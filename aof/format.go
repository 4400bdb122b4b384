package aof

import "github.com/shoalkv/shoal/proto/resp"

// The file's records are RESP multibulk commands, the form clients send and
// Redis writes to its append-only file; these name proto/resp's encoders
// for the writers of records, so there is one encoder of the format.

// AppendCommand appends args to dst as one RESP multibulk command
// (resp.AppendCommandBytes) and returns the extended slice.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	return resp.AppendCommandBytes(dst, args...)
}

// AppendHeader appends the multibulk header of a command of n arguments;
// follow it with n AppendArg calls.
func AppendHeader(dst []byte, n int) []byte { return resp.AppendArrayHeader(dst, n) }

// AppendArg appends one bulk-string argument.
func AppendArg(dst, a []byte) []byte { return resp.AppendBulk(dst, a) }

// AppendIntArg appends an integer argument as its decimal text.
func AppendIntArg(dst []byte, n int64) []byte { return resp.AppendBulkInt(dst, n) }
