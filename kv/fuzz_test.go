package kv_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// FuzzServer sends arbitrary bytes to a live server. Whatever arrives, the
// server must answer with well-formed RESP, close the connection when the
// client half-closes, and keep serving other clients.
func FuzzServer(f *testing.F) {
	for _, steps := range diffCases {
		var seed []byte
		for _, st := range steps {
			seed = append(seed, encodeCommand(st.args)...)
		}
		f.Add(seed)
	}
	for _, s := range []string{"PING\r\n", "*1\r\n$abc\r\n", "SET \"a b\r\n", "*2\r\n$3\r\nGET\r\n$100\r\nab",
		"HELLO 3\r\nGET x\r\nCLIENT LIST\r\n", "*0\r\n*-1\r\n", "\r\n\r\n", "ECHO \"\\x41\\n\"\r\n"} {
		f.Add([]byte(s))
	}
	srv := startShoal(f, kv.Options{}, eventloop.Options{Loops: 2})
	f.Fuzz(func(t *testing.T, input []byte) {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		go func() {
			_, _ = c.Write(input)
			_ = c.(*net.TCPConn).CloseWrite()
		}()
		rd := bufio.NewReader(c)
		for {
			var sb strings.Builder
			err := readReply(rd, &sb)
			if errors.Is(err, io.EOF) && sb.Len() == 0 {
				break
			}
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("server neither answered nor closed: %v", err)
				}
				t.Fatalf("malformed reply stream after %q: %v", sb.String(), err)
			}
		}
		probe := dialRaw(t, srv.addr)
		if r := probe.do("PING"); r == "" || (r[0] != '+' && r[0] != '-') {
			t.Fatalf("server unhealthy after input: PING = %q", r)
		}
	})
}
