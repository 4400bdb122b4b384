package server_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
)

// TestCloseAtABufferLimitIsLogged: a client whose unparsed input passes the
// query buffer limit is closed, and the operator reads why in the log with
// the client's id, address and name, as Redis logs "closing client that
// reached max query buffer length".
func TestCloseAtABufferLimitIsLogged(t *testing.T) {
	var log logtest.Log
	s := shoaltest.Start(t, shoaltest.Options{KV: kv.Options{Logger: log.Logger()},
		Loop: eventloop.Options{MaxInboundBuffer: 64 << 10}})
	c := shoaltest.Dial(t, s.Addr).C
	if _, err := c.Write([]byte("CLIENT SETNAME bigsender\r\n")); err != nil {
		t.Fatal(err)
	}
	// Its reply is read before the big request goes out: a close at the
	// limit drops replies not yet written, as Redis frees such a client.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	ok := make([]byte, len("+OK\r\n"))
	if _, err := io.ReadFull(c, ok); err != nil || string(ok) != "+OK\r\n" {
		t.Fatalf("CLIENT SETNAME: %q, %v", ok, err)
	}
	// A bulk announced at 1 MiB and sent in part: it never completes, so
	// its bytes stay unconsumed until they pass the 64 KiB limit.
	big := append([]byte("*2\r\n$3\r\nSET\r\n$1048576\r\n"), bytes.Repeat([]byte("x"), 200<<10)...)
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, _ = c.Write(big) // the server may close before it has read it all
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection past the query buffer limit was not closed")
	}
	if len(got) != 0 {
		t.Fatalf("after the limit the server sent %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(log.String(), "client closed at a buffer limit") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	line := log.String()
	for _, want := range []string{"client closed at a buffer limit", "name=bigsender", "addr=" + c.LocalAddr().String(), "MaxInboundBuffer"} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
}
