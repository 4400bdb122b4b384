package server_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/frame"
	"github.com/shoalkv/shoal/proto/http1"
	"github.com/shoalkv/shoal/proto/http2"
)

// sendAndHalfClose dials addr, writes input, half-closes, and returns the
// connection for reading the answers.
func sendAndHalfClose(t *testing.T, addr string, input []byte) net.Conn {
	t.Helper()
	c := shoaltest.Dial(t, addr).C
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		_, _ = c.Write(input)
		_ = c.(*net.TCPConn).CloseWrite()
	}()
	return c
}

// requestMethods returns the methods of the complete requests at the front
// of input, as the server's parser sees them, so the client knows which
// responses are to HEAD (no body despite Content-Length).
func requestMethods(input []byte) []string {
	buf := append([]byte(nil), input...) // Parse rewrites chunked bodies in place
	var p http1.Parser
	var req http1.Request
	var methods []string
	for len(buf) > 0 {
		n, err := p.Parse(buf, &req)
		if err != nil {
			break
		}
		methods = append(methods, string(req.Method))
		if req.Close {
			break
		}
		buf = buf[n:]
	}
	return methods
}

// FuzzHTTPFront sends arbitrary bytes to a live HTTP front: every answer
// must be a well-formed HTTP/1.1 response, the connection must end, and
// the server must keep serving.
func FuzzHTTPFront(f *testing.F) {
	for _, s := range []string{
		"GET /kv/a HTTP/1.1\r\nHost: h\r\n\r\n",
		"PUT /kv/a?ttl=5 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcHEAD /kv/a HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST /kv/n/incr?by=-9223372036854775808 HTTP/1.1\r\nHost: h\r\n\r\nPOST /kv/n/incr?by=-1 HTTP/1.1\r\nHost: h\r\n\r\n",
		"PUT /kv/c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /kv/c HTTP/1.1\r\nHost: h\r\n\r\n",
		"PUT /kv/e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\nabc",
		"GET /kv/%zz HTTP/1.1\r\nHost: h\r\n\r\n", "DELETE /kv/%00%ff HTTP/1.0\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: h\r\n\r\nGET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
		"GET http://h/kv/a HTTP/1.1\r\nHost: h\r\n\r\n", "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/2.0\r\n\r\n", "\r\n\r\nGET /kv/a HTTP/1.1\nHost: h\n\n", "*1\r\n$4\r\nPING\r\n",
	} {
		f.Add([]byte(s))
	}
	srv := startFronts(f, kv.Options{}, eventloop.Options{Loops: 2}, "")
	f.Fuzz(func(t *testing.T, input []byte) {
		if bytes.HasPrefix(input, []byte(http2.Preface)) {
			t.Skip("the HTTP/2 preface switches the connection to HTTP/2: FuzzH2Front's input")
		}
		c := sendAndHalfClose(t, srv.http, input)
		methods := requestMethods(input)
		rd := bufio.NewReader(c)
		for i := 0; ; {
			if _, err := rd.Peek(1); errors.Is(err, io.EOF) {
				break
			}
			req := &http.Request{Method: "GET"}
			if i < len(methods) {
				req.Method = methods[i]
			}
			resp, err := http.ReadResponse(rd, req)
			if err != nil {
				t.Fatalf("response %d is malformed: %v", i, err)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatalf("response %d body: %v", i, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 100 {
				i++
			}
		}
		probe := rawHTTP(t, srv.http, "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", 1)
		if probe[0].code != 200 {
			t.Fatalf("server unhealthy after input: /healthz %d", probe[0].code)
		}
	})
}

// FuzzFrameFront sends arbitrary bytes to a live frame front: every answer
// must decode as a response frame, the connection must end, and the
// server must keep serving.
func FuzzFrameFront(f *testing.F) {
	ping, _ := frame.AppendPing(nil, []byte("p"))
	set, _ := frame.AppendSet(nil, []byte("k"), []byte("v"))
	get, _ := frame.AppendGet(nil, []byte("k"))
	del, _ := frame.AppendDel(nil, []byte("k"))
	for _, s := range [][]byte{ping, append(append(set, get...), del...), get[:4], {9, 0, 0}, {1, 0, 1, 0, 0, 0, 1, 'k', 'v'},
		{2, 0, 0, 0xff, 0xff, 0xff, 0xff}, {4, 0, 1, 0, 0, 0, 0, 'x'}, append(ping, 0)} {
		f.Add(s)
	}
	srv := startFronts(f, kv.Options{}, eventloop.Options{Loops: 2}, "")
	f.Fuzz(func(t *testing.T, input []byte) {
		c := sendAndHalfClose(t, srv.frame, input)
		fc := &frameConn{c: c, rd: bufio.NewReader(c)}
		for {
			if _, err := fc.rd.Peek(1); errors.Is(err, io.EOF) {
				break
			}
			if _, _, err := fc.read(t); err != nil {
				t.Fatalf("malformed response stream: %v", err)
			}
		}
		probe := dialFrame(t, srv.frame)
		if st, v := probe.do(t, ping); st != frame.StatusOK || v != "p" {
			t.Fatalf("server unhealthy after input: PING = %v %q", st, v)
		}
	})
}
