package loadgen

import (
	"bytes"
	"errors"
	"strings"

	"github.com/shoalkv/shoal/proto/frame"
)

// frameProtocol speaks proto/frame (cmd/shoal --frame-port): GET, SET and PING. Frames
// have no INCR; its template is empty and run refuses a mix that asks for it.
type frameProtocol struct{ dec frame.Decoder }

func (frameProtocol) template(op opKind, valueSize int) requestTemplate {
	digits := "key:" + strings.Repeat("0", keyDigits)
	var b []byte
	switch op {
	case opGet:
		b, _ = frame.AppendGet(nil, []byte(digits))
	case opSet:
		b, _ = frame.AppendSet(nil, []byte(digits), bytes.Repeat([]byte{'x'}, valueSize))
	case opPing:
		b, _ = frame.AppendPing(nil, nil)
		return requestTemplate{bytes: b, keyAt: -1}
	default:
		return requestTemplate{keyAt: -1}
	}
	return requestTemplate{bytes: b, keyAt: frame.RequestHeaderLen + len("key:")}
}

var frameErrorKind = []byte("ERROR")

// readReply decodes one response frame; an ERROR status is an error reply. NOT_FOUND is
// a miss, as RESP's null.
func (p frameProtocol) readReply(buf []byte) (int, []byte, error) {
	var r frame.Response
	n, err := p.dec.DecodeResponse(buf, &r)
	switch {
	case errors.Is(err, frame.ErrIncomplete):
		return 0, nil, errIncomplete
	case err != nil:
		return 0, nil, err
	case r.Status == frame.StatusError:
		return n, frameErrorKind, nil
	}
	return n, nil, nil
}
