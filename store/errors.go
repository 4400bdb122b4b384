package store

import (
	"errors"
)

// Errors returned by Store methods. Their text is Redis's exact error reply without the
// leading '-', so the command layer can write "-"+err.Error().
var (
	// ErrWrongType is returned when a string command meets a key of another type.
	ErrWrongType = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	// ErrOOM is returned by writes that would exceed MaxMemory under NoEviction, or when
	// no key can be evicted under the configured policy.
	//lint:ignore ST1005 the text is Redis's reply, byte for byte
	ErrOOM = errors.New("OOM command not allowed when used memory > 'maxmemory'.")
	// ErrNotInteger is returned by IncrBy when the value is not a 64-bit integer.
	ErrNotInteger = errors.New("ERR value is not an integer or out of range")
	// ErrOverflow is returned by IncrBy when the result would not fit in 64 bits.
	ErrOverflow = errors.New("ERR increment or decrement would overflow")
	// ErrNotFloat is returned by IncrByFloat when the value is not a valid float.
	ErrNotFloat = errors.New("ERR value is not a valid float")
	// ErrNaNOrInf is returned by IncrByFloat when the result is not finite.
	ErrNaNOrInf = errors.New("ERR increment would produce NaN or Infinity")
	// ErrNoSuchKey is returned by Rename and RenameNX when the source is missing.
	ErrNoSuchKey = errors.New("ERR no such key")
	// ErrTooLong is returned when a write would make a string longer than MaxStringLen.
	ErrTooLong = errors.New("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	// ErrOffsetRange is returned by SetRange for a negative offset.
	ErrOffsetRange = errors.New("ERR offset is out of range")
)

// MaxStringLen is the largest string value Append and SetRange may build (Redis's
// proto-max-bulk-len default, 512 MiB).
const MaxStringLen = 512 << 20
