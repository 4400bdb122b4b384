package loadgen

import (
	"errors"
	"fmt"
	"strings"
)

// opKind is one command of the workload mix.
type opKind int

const (
	opGet opKind = iota
	opSet
	opPing
	opIncr
	// The data-type commands of redis-benchmark's default suite, as it sends them: one
	// list, set, hash and sorted set (mylist, myset, myhash, myzset) and, where the
	// command takes one, a member element:<key index> (RESP only).
	opLPush
	opRPush
	opLPop
	opRPop
	opSAdd
	opSPop
	opHSet
	opZAdd
	opZPopMin
	numOps
)

var opNames = [numOps]string{"get", "set", "ping", "incr",
	"lpush", "rpush", "lpop", "rpop", "sadd", "spop", "hset", "zadd", "zpopmin"}

func (o opKind) String() string { return opNames[o] }

func parseOp(s string) (opKind, error) {
	for i, n := range opNames {
		if n == s {
			return opKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown command %q (want one of %s)", s, strings.Join(opNames[:], ", "))
}

// keyDigits is the width of the decimal key index patched into every template, as
// redis-benchmark does with key:__rand_int__ (key:000000001234).
const keyDigits = 12

// requestTemplate is one fully encoded request. Only the keyDigits digits at keyAt change
// from one request to the next, so sending is a copy plus a few byte stores.
type requestTemplate struct {
	bytes []byte
	keyAt int // offset of the key digits; -1 when the command has no key
}

// errIncomplete means the read buffer does not hold a whole reply yet.
var errIncomplete = errors.New("incomplete reply")

// protocol is the seam between the load engine and a wire format: RESP, the HTTP front's
// HTTP/1.1, and the binary frames of proto/frame.
type protocol interface {
	// template encodes op on a key of keyDigits zero digits; empty bytes if the protocol
	// cannot express op.
	template(op opKind, valueSize int) requestTemplate
	// readReply parses one reply from the front of buf and returns its length. errKind is
	// non-nil for an error reply: its first word, a sub-slice of buf. err is errIncomplete
	// when buf holds only part of a reply, or a protocol violation.
	readReply(buf []byte) (n int, errKind []byte, err error)
}

func newProtocol(name string) (protocol, error) {
	switch name {
	case "resp":
		return respProtocol{}, nil
	case "http":
		return httpProtocol{}, nil
	case "frame":
		return frameProtocol{}, nil
	}
	return nil, fmt.Errorf("unsupported protocol %q (supported: resp, http, frame)", name)
}

// putKey writes k as keyDigits decimal digits at t.keyAt in req, a copy of t.bytes.
func putKey(req []byte, keyAt int, k uint64) {
	if keyAt < 0 {
		return
	}
	d := req[keyAt : keyAt+keyDigits]
	for i := keyDigits - 1; i >= 0; i-- {
		d[i] = byte('0' + k%10)
		k /= 10
	}
}
