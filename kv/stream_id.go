package kv

import (
	"bytes"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Stream IDs as Redis 7.0 parses them (streamGenericParseIDOrReply):
// <ms>-<seq>, or <ms> alone with a sequence the command supplies, "-" and
// "+" for the least and greatest IDs unless strict, and <ms>-* for XADD.
// Each part is read as string2ull reads it: a canonical integer, or what
// strtoull takes whole (leading blanks, a sign, leading zeros; a minus
// negates modulo 2^64), 0 to 2^64-1.

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

// streamIDParse is how an ID argument is read.
type streamIDParse struct {
	missingSeq uint64 // the sequence of an ID given as <ms>
	strict     bool   // "-" and "+" are invalid
	seqStar    bool   // <ms>-* is taken (XADD): seqGiven reports it
}

// parse reads b; seqGiven is false only for <ms>-* with seqStar.
func (p streamIDParse) parse(b []byte) (id store.StreamID, seqGiven, ok bool) {
	if len(b) > 127 {
		return id, false, false
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i] // Redis reads the argument as a C string
	}
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		if p.strict {
			return id, false, false
		}
		if b[0] == '+' {
			return store.MaxStreamID, true, true
		}
		return id, true, true
	}
	msPart, seqPart, dash := bytes.Cut(b, []byte("-"))
	ms, ok := string2ull(msPart)
	if !ok {
		return id, false, false
	}
	id.Ms = ms
	if !dash {
		id.Seq = p.missingSeq
		return id, true, true
	}
	if p.seqStar && len(seqPart) == 1 && seqPart[0] == '*' {
		return id, false, true
	}
	if id.Seq, ok = string2ull(seqPart); !ok {
		return id, false, false
	}
	return id, true, true
}

// string2ull is Redis's: string2ll's canonical integers (not negative),
// else strtoull's reading, which must take all of b.
func string2ull(b []byte) (uint64, bool) {
	if v, ok := ascii.ParseInt(b); ok {
		return uint64(v), v >= 0
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var u uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (1<<64-1)/10 || u*10 > 1<<64-1-d {
			return 0, false // ERANGE
		}
		u = u*10 + d
	}
	if neg {
		u = -u
	}
	return u, true
}
