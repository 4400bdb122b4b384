package loadgen

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// httpProtocol speaks the HTTP front of cmd/shoal (server.Handler.HTTPHandler): GET and PUT
// /kv/{key}, POST /kv/{key}/incr, and GET /healthz for ping, keep-alive and pipelined.
type httpProtocol struct{}

func (httpProtocol) template(op opKind, valueSize int) requestTemplate {
	digits := strings.Repeat("0", keyDigits)
	var s string
	switch op {
	case opGet:
		s = "GET /kv/key:" + digits + " HTTP/1.1\r\nHost: shoal\r\n\r\n"
	case opSet:
		s = "PUT /kv/key:" + digits + " HTTP/1.1\r\nHost: shoal\r\nContent-Length: " +
			strconv.Itoa(valueSize) + "\r\n\r\n" + strings.Repeat("x", valueSize)
	case opPing:
		return requestTemplate{bytes: []byte("GET /healthz HTTP/1.1\r\nHost: shoal\r\n\r\n"), keyAt: -1}
	case opIncr:
		s = "POST /kv/counter:" + digits + "/incr HTTP/1.1\r\nHost: shoal\r\nContent-Length: 0\r\n\r\n"
	}
	return requestTemplate{bytes: []byte(s), keyAt: strings.Index(s, digits)}
}

// maxResponseHead bounds a response's head; the front's are about 100 bytes.
const maxResponseHead = 8 << 10

// readReply parses one response: the status line, the head up to the blank line, and
// Content-Length bytes of body. A status of 400 or more is an error reply, its kind the
// status code, except 404: a missing key is a miss, as RESP's null.
func (httpProtocol) readReply(buf []byte) (int, []byte, error) {
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		if len(buf) > maxResponseHead {
			return 0, nil, fmt.Errorf("http: response head longer than %d bytes", maxResponseHead)
		}
		return 0, nil, errIncomplete
	}
	head := buf[:end]
	if len(head) < 12 || !bytes.HasPrefix(head, []byte("HTTP/1.")) || head[8] != ' ' {
		return 0, nil, fmt.Errorf("http: malformed status line %q", firstLine(head))
	}
	status := head[9:12]
	length := 0
	for _, line := range bytes.Split(head, []byte("\r\n"))[1:] {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(name, []byte("Content-Length")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil || n < 0 {
				return 0, nil, fmt.Errorf("http: bad Content-Length %q", value)
			}
			length = n
		}
	}
	total := end + 4 + length
	if len(buf) < total {
		return 0, nil, errIncomplete
	}
	if status[0] >= '4' && string(status) != "404" {
		return total, status, nil
	}
	return total, nil, nil
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}
