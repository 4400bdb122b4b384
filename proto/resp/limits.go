package resp

// Limits bounds what a peer may ask the parser to accept. The zero value of a
// field means "use the default".
type Limits struct {
	// MaxBulkLen is proto-max-bulk-len: the largest bulk argument accepted.
	// Default 512 MiB.
	MaxBulkLen int64
	// MaxMultibulkLen is the largest argument count accepted. Default
	// 1024*1024. Redis 7 itself allows up to INT_MAX for authenticated
	// clients; set math.MaxInt32 for that. Memory stays bounded either way:
	// the parser grows its argument slice only as arguments arrive.
	MaxMultibulkLen int64
	// MaxInlineLen bounds an inline command line, and also how far the parser
	// looks for the end of a "*count" or "$length" header line, as Redis's
	// PROTO_INLINE_MAX_SIZE does. Default 64 KiB.
	MaxInlineLen int
}

// Default limits, Redis's defaults.
const (
	DefaultMaxBulkLen      = 512 << 20
	DefaultMaxMultibulkLen = 1024 * 1024
	DefaultMaxInlineLen    = 64 << 10
)

// DefaultLimits are Redis's defaults.
var DefaultLimits = Limits{
	MaxBulkLen:      DefaultMaxBulkLen,
	MaxMultibulkLen: DefaultMaxMultibulkLen,
	MaxInlineLen:    DefaultMaxInlineLen,
}

func (l Limits) withDefaults() Limits {
	if l.MaxBulkLen <= 0 {
		l.MaxBulkLen = DefaultMaxBulkLen
	}
	if l.MaxMultibulkLen <= 0 {
		l.MaxMultibulkLen = DefaultMaxMultibulkLen
	}
	if l.MaxInlineLen <= 0 {
		l.MaxInlineLen = DefaultMaxInlineLen
	}
	return l
}
