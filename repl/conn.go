package repl

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// Conn is a replica's connection to its primary: the handshake's
// request-reply exchanges, the snapshot, then the command stream and the
// acknowledgements. Every wait on the primary is bounded by Timeout
// (repl-timeout), renewed by each byte that arrives. A Conn is used by one
// goroutine; Close may be called from any.
type Conn struct {
	c       net.Conn
	r       *bufio.Reader
	Timeout time.Duration
}

// Addr is host:port as Dial takes it (IPv6 hosts in brackets).
func Addr(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// Dial connects to the primary at addr within timeout.
func Dial(addr string, timeout time.Duration) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 1<<20), Timeout: timeout}, nil
}

// Close closes the connection; a goroutine blocked in a read or write
// returns with an error.
func (c *Conn) Close() error { return c.c.Close() }

// send writes one command as a RESP array of bulk strings.
func (c *Conn) send(args ...string) error {
	var b []byte
	b = resp.AppendArrayHeader(b, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	_ = c.c.SetWriteDeadline(time.Now().Add(c.Timeout))
	_, err := c.c.Write(b)
	return err
}

// Ask sends a command of the handshake and returns the primary's one-line
// reply. alive is called for every byte of life from the primary (the
// newlines it sends while it prepares a snapshot, and the reply).
func (c *Conn) Ask(alive func(), args ...string) (string, error) {
	if err := c.send(args...); err != nil {
		return "", err
	}
	return c.line(alive)
}

// line reads one line, skipping keepalive newlines, each of which renews
// the timeout.
func (c *Conn) line(alive func()) (string, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(c.Timeout))
	line, err := ReadLine(c.r, func() {
		_ = c.c.SetReadDeadline(time.Now().Add(c.Timeout))
		if alive != nil {
			alive()
		}
	})
	if err == nil && alive != nil {
		alive()
	}
	return line, err
}

// ReadPayload reads the snapshot that follows +FULLRESYNC into w and
// reports its size, as CopyPayload; progress and the timeout's renewal
// follow each chunk that arrives.
func (c *Conn) ReadPayload(w io.Writer, alive func(), progress func(n int64, p Payload)) (int64, error) {
	header, err := c.line(alive)
	if err != nil {
		return 0, err
	}
	p, err := ParsePayloadHeader(header)
	if err != nil {
		return 0, err
	}
	progress(0, p)
	return CopyPayload(w, c.r, p, func(n int64) {
		_ = c.c.SetReadDeadline(time.Now().Add(c.Timeout))
		progress(n, p)
	})
}

// ErrNoData is Read's error when nothing arrived within its wait.
var ErrNoData = errors.New("no data from the primary")

// Read reads what the primary sent of the stream into buf, waiting at
// most wait: ErrNoData then, with n 0.
func (c *Conn) Read(buf []byte, wait time.Duration) (int, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(wait))
	n, err := c.r.Read(buf)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = ErrNoData
	}
	return n, err
}

// Ack sends REPLCONF ACK offset: how much of the stream the replica
// processed.
func (c *Conn) Ack(offset int64) error {
	return c.send("REPLCONF", "ACK", strconv.FormatInt(offset, 10))
}
