package slowconsumer

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/shoalkv/shoal/proto/resp"
)

// value is one whole reply, aggregates with their elements.
type value struct {
	kind  byte
	text  string // '+', '-', '$' and the other string-like kinds
	int   int64  // ':'
	elems []value
}

// respConn is a minimal RESP2 client over a net.Conn: write commands, read
// whole replies. Not safe for concurrent use; each goroutine of Run owns its
// own.
type respConn struct {
	conn       net.Conn
	buf        []byte // buf[start:end] is read but not yet consumed
	start, end int
}

func newRespConn(c net.Conn) *respConn {
	return &respConn{conn: c, buf: make([]byte, 4096)}
}

// do sends one command and returns its reply; an error reply is an error.
func (c *respConn) do(args ...string) (value, error) {
	if _, err := c.conn.Write(resp.AppendCommand(nil, args...)); err != nil {
		return value{}, fmt.Errorf("%s: %w", args[0], err)
	}
	v, err := c.read()
	if err != nil {
		return value{}, fmt.Errorf("%s: reading the reply: %w", args[0], err)
	}
	if v.kind == '-' {
		return v, fmt.Errorf("%s: server replied %q", args[0], v.text)
	}
	return v, nil
}

// read returns the next whole reply, reading from the connection as needed.
func (c *respConn) read() (value, error) {
	for {
		n, err := resp.SkipReply(c.buf[c.start:c.end])
		if err == nil {
			v, _, err := decode(c.buf[c.start : c.start+n])
			c.start += n
			return v, err
		}
		if !errors.Is(err, resp.ErrIncomplete) {
			return value{}, err
		}
		if err := c.fill(); err != nil {
			return value{}, err
		}
	}
}

// fill reads more bytes, first making room at the end of buf.
func (c *respConn) fill() error {
	if c.start > 0 {
		c.end = copy(c.buf, c.buf[c.start:c.end])
		c.start = 0
	}
	if c.end == len(c.buf) {
		c.buf = append(c.buf, make([]byte, len(c.buf))...)
	}
	n, err := c.conn.Read(c.buf[c.end:])
	c.end += n
	if n > 0 {
		return nil
	}
	return err
}

// decode parses the whole reply at the front of b, which SkipReply has
// checked is complete.
func decode(b []byte) (value, int, error) {
	r, n, err := resp.ReadReply(b)
	if err != nil {
		return value{}, 0, err
	}
	v := value{kind: r.Kind, text: string(r.Data), int: r.Int}
	for range r.Elements() {
		e, m, err := decode(b[n:])
		if err != nil {
			return value{}, 0, err
		}
		v.elems = append(v.elems, e)
		n += m
	}
	return v, n, nil
}

// integer returns v as an integer reply, or an error naming what it was.
func (v value) integer(what string) (int64, error) {
	if v.kind != ':' {
		return 0, fmt.Errorf("%s: want an integer reply, got %q %q", what, v.kind, v.text)
	}
	return v.int, nil
}

// numsub asks how many clients subscribe to channel.
func (c *respConn) numsub(channel string) (int, error) {
	v, err := c.do("PUBSUB", "NUMSUB", channel)
	if err != nil {
		return 0, err
	}
	if len(v.elems) != 2 {
		return 0, fmt.Errorf("PUBSUB NUMSUB %s: want [channel count], got %d elements", channel, len(v.elems))
	}
	n, err := v.elems[1].integer("PUBSUB NUMSUB")
	return int(n), err
}

// pubsubHardLimit returns the hard limit of the pubsub class from CONFIG GET
// client-output-buffer-limit ("normal 0 0 0 slave ... pubsub 33554432 ...").
func (c *respConn) pubsubHardLimit() (int64, error) {
	v, err := c.do("CONFIG", "GET", "client-output-buffer-limit")
	if err != nil {
		return 0, err
	}
	if len(v.elems) != 2 {
		return 0, fmt.Errorf("CONFIG GET client-output-buffer-limit: got %d elements, want 2", len(v.elems))
	}
	return parsePubsubHardLimit(v.elems[1].text)
}

func parsePubsubHardLimit(config string) (int64, error) {
	f := strings.Fields(config)
	for i := 0; i+1 < len(f); i += 4 {
		if f[i] == "pubsub" {
			return strconv.ParseInt(f[i+1], 10, 64)
		}
	}
	return 0, fmt.Errorf("client-output-buffer-limit %q has no pubsub class", config)
}
