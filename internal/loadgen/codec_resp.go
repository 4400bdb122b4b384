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
	var b []byte
	keyAt := -1
	key := func(prefix string) {
		b = resp.AppendBulkString(b, prefix+strings.Repeat("0", keyDigits))
		keyAt = len(b) - 2 - keyDigits // the digits end just before the bulk's CRLF
	}
	switch op {
	case opGet:
		b = resp.AppendArrayHeader(b, 2)
		b = resp.AppendBulkString(b, "GET")
		key("key:")
	case opSet:
		b = resp.AppendArrayHeader(b, 3)
		b = resp.AppendBulkString(b, "SET")
		key("key:")
		b = resp.AppendBulk(b, bytes.Repeat([]byte{'x'}, valueSize))
	case opPing:
		b = resp.AppendArrayHeader(b, 1)
		b = resp.AppendBulkString(b, "PING")
	case opIncr:
		b = resp.AppendArrayHeader(b, 2)
		b = resp.AppendBulkString(b, "INCR")
		key("counter:")
	case opLPush, opRPush:
		b = resp.AppendArrayHeader(b, 3)
		b = resp.AppendBulkString(b, strings.ToUpper(op.String()))
		b = resp.AppendBulkString(b, "mylist")
		b = resp.AppendBulk(b, bytes.Repeat([]byte{'x'}, valueSize))
	case opLPop, opRPop:
		b = resp.AppendArrayHeader(b, 2)
		b = resp.AppendBulkString(b, strings.ToUpper(op.String()))
		b = resp.AppendBulkString(b, "mylist")
	case opSAdd:
		b = resp.AppendArrayHeader(b, 3)
		b = resp.AppendBulkString(b, "SADD")
		b = resp.AppendBulkString(b, "myset")
		key("element:")
	case opSPop:
		b = resp.AppendArrayHeader(b, 2)
		b = resp.AppendBulkString(b, "SPOP")
		b = resp.AppendBulkString(b, "myset")
	case opHSet:
		b = resp.AppendArrayHeader(b, 4)
		b = resp.AppendBulkString(b, "HSET")
		b = resp.AppendBulkString(b, "myhash")
		key("element:")
		b = resp.AppendBulk(b, bytes.Repeat([]byte{'x'}, valueSize))
	case opZAdd:
		b = resp.AppendArrayHeader(b, 4)
		b = resp.AppendBulkString(b, "ZADD")
		b = resp.AppendBulkString(b, "myzset")
		b = resp.AppendBulkString(b, "0")
		key("element:")
	case opZPopMin:
		b = resp.AppendArrayHeader(b, 2)
		b = resp.AppendBulkString(b, "ZPOPMIN")
		b = resp.AppendBulkString(b, "myzset")
	}
	return requestTemplate{bytes: b, keyAt: keyAt}
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
