package loadgen

import (
	"bytes"
	"errors"
	"strings"

	"github.com/shoalkv/shoal/proto/resp"
)

// respProtocol speaks RESP2 through proto/resp. It is the only file that touches the codec.
type respProtocol struct{}

func (respProtocol) template(op opKind, valueSize int) requestTemplate {
	args, keyArg := respArgs(op, strings.Repeat("x", valueSize))
	if args == nil {
		return requestTemplate{keyAt: -1}
	}
	b := resp.AppendArrayHeader(nil, len(args))
	keyAt := -1
	for i, arg := range args {
		if i != keyArg {
			b = resp.AppendBulkString(b, arg)
			continue
		}
		b = resp.AppendBulkString(b, arg+strings.Repeat("0", keyDigits))
		keyAt = len(b) - 2 - keyDigits // the digits end just before the bulk's CRLF
	}
	return requestTemplate{bytes: b, keyAt: keyAt}
}

// respArgs is the command op sends, value standing for the value. The argument
// at keyArg (-1 when none) is a key prefix: each request appends keyDigits
// digits of its own key to it.
func respArgs(op opKind, value string) (args []string, keyArg int) {
	switch op {
	case opGet:
		return []string{"GET", "key:"}, 1
	case opSet:
		return []string{"SET", "key:", value}, 1
	case opPing:
		return []string{"PING"}, -1
	case opIncr:
		return []string{"INCR", "counter:"}, 1
	case opLPush, opRPush:
		return []string{strings.ToUpper(op.String()), "mylist", value}, -1
	case opLPop, opRPop:
		return []string{strings.ToUpper(op.String()), "mylist"}, -1
	case opSAdd:
		return []string{"SADD", "myset", "element:"}, 2
	case opSPop:
		return []string{"SPOP", "myset"}, -1
	case opHSet:
		return []string{"HSET", "myhash", "element:", value}, 2
	case opZAdd:
		return []string{"ZADD", "myzset", "0", "element:"}, 3
	case opZPopMin:
		return []string{"ZPOPMIN", "myzset"}, -1
	}
	return nil, -1
}

func (respProtocol) readReply(buf []byte) (int, []byte, error) {
	if len(buf) > 0 && buf[0] == '-' {
		r, n, err := resp.ReadReply(buf)
		if err != nil {
			return 0, nil, respErr(err)
		}
		kind := r.Data
		if i := bytes.IndexByte(kind, ' '); i >= 0 {
			kind = kind[:i]
		}
		if len(kind) == 0 {
			kind = []byte("-")
		}
		return n, kind, nil
	}
	n, err := resp.SkipReply(buf)
	if err != nil {
		return 0, nil, respErr(err)
	}
	return n, nil, nil
}

func respErr(err error) error {
	if errors.Is(err, resp.ErrIncomplete) {
		return errIncomplete
	}
	return err
}
