package shoaltest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// RawConn is a test client that sends RESP and returns each reply's raw
// bytes, so replies can be compared byte for byte with redis-server's.
type RawConn struct {
	T  testing.TB
	C  net.Conn
	Rd *bufio.Reader
}

// ReadTimeout bounds each raw read and write: long enough for a reply that
// builds a 512 MiB string on a loaded machine under -race (5 s was not),
// short enough that a hang fails the test instead of the whole run.
const ReadTimeout = 30 * time.Second

// Dial connects to addr; the connection closes when the test ends.
func Dial(t testing.TB, addr string) *RawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &RawConn{T: t, C: c, Rd: bufio.NewReader(c)}
}

// EncodeCommand returns args as a RESP multibulk command.
func EncodeCommand(args []string) []byte { return resp.AppendCommand(nil, args...) }

// Send writes p, failing the test if it cannot.
func (r *RawConn) Send(p []byte) {
	r.T.Helper()
	_ = r.C.SetWriteDeadline(time.Now().Add(ReadTimeout))
	if _, err := r.C.Write(p); err != nil {
		r.T.Fatalf("write: %v", err)
	}
}

// Do sends one command and returns its raw reply.
func (r *RawConn) Do(args ...string) string {
	r.T.Helper()
	r.Send(EncodeCommand(args))
	reply, err := r.Read()
	if err != nil {
		r.T.Fatalf("%q: reading reply: %v", args, err)
	}
	return reply
}

// Read returns one complete raw reply.
func (r *RawConn) Read() (string, error) {
	_ = r.C.SetReadDeadline(time.Now().Add(ReadTimeout))
	var sb strings.Builder
	err := ReadReply(r.Rd, &sb)
	return sb.String(), err
}

// ReadUntilClose returns everything the server sends until it closes.
func (r *RawConn) ReadUntilClose() (string, error) {
	_ = r.C.SetReadDeadline(time.Now().Add(ReadTimeout))
	b, err := io.ReadAll(r.Rd)
	return string(b), err
}

// ReadReply copies one (possibly nested) RESP2/RESP3 reply from rd to sb.
// It is independent of proto/resp so the tests do not trust the code under
// test to read its own output.
func ReadReply(rd *bufio.Reader, sb *strings.Builder) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("malformed reply line %q", line)
	}
	sb.WriteString(line)
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return fmt.Errorf("bad length in %q", line)
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return err
		}
		sb.Write(buf)
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return fmt.Errorf("bad length in %q", line)
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := ReadReply(rd, sb); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply type in %q", line)
}
