package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// Verify checks that every open connection answers correctly before any load: with
// Config.OwnKeys it SETs the connection's key to a value naming the key and GETs it back;
// otherwise it sends PING and wants PONG. A connection that fails is closed, dropped from
// the load and counted by kind ("check: ..."). It returns how many failed.
func (s *Session) Verify(ctx context.Context) int {
	cfg := s.st.cfg
	var next atomic.Int64
	var bad atomic.Int64
	var wg sync.WaitGroup
	for range min(dialParallelism, len(s.conns)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(s.conns) || ctx.Err() != nil {
					return
				}
				c := s.conns[i]
				if c == nil {
					continue
				}
				var err error
				if buf, err = checkConn(c, cfg, uint64(i), buf); err != nil {
					c.Close()
					s.conns[i] = nil
					s.connected.Add(-1)
					s.countFailure("check: " + err.Error())
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return int(bad.Load())
}

// checkConn runs one connection's check; buf is scratch space it returns for reuse.
func checkConn(c net.Conn, cfg *Config, i uint64, buf []byte) ([]byte, error) {
	c.SetDeadline(time.Now().Add(cfg.Timeout))
	defer c.SetDeadline(time.Time{})
	var want []byte
	buf = buf[:0]
	if cfg.OwnKeys {
		key := fmt.Sprintf("key:%0*d", keyDigits, cfg.KeyBase+i)
		val := "owned-by-" + key
		buf = resp.AppendCommand(buf, "SET", key, val)
		buf = resp.AppendCommand(buf, "GET", key)
		want = []byte("+OK\r\n$" + strconv.Itoa(len(val)) + "\r\n" + val + "\r\n")
	} else {
		buf = resp.AppendCommand(buf, "PING")
		want = []byte("+PONG\r\n")
	}
	if _, err := c.Write(buf); err != nil {
		return buf, fmt.Errorf("%s", ioErrorKind(err))
	}
	got := make([]byte, 0, len(want))
	tmp := make([]byte, len(want)+64)
	for len(got) < len(want) {
		n, err := c.Read(tmp)
		got = append(got, tmp[:n]...)
		if err != nil && len(got) < len(want) {
			return buf, fmt.Errorf("%s", ioErrorKind(err))
		}
	}
	if !bytes.Equal(got, want) {
		return buf, errWrongReply
	}
	return buf, nil
}

// errWrongReply is one kind for every mismatch, so the errors table does not list a kind
// per key.
var errWrongReply = errors.New("wrong reply")
