package http1

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
)

func mustParse(t *testing.T, p *Parser, in string) (*Request, int) {
	t.Helper()
	var req Request
	n, err := p.Parse([]byte(in), &req)
	if err != nil {
		t.Fatalf("Parse(%q): %v", in, err)
	}
	return &req, n
}

func TestParseSimpleGet(t *testing.T) {
	in := "GET /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\nACCEPT:  */*  \r\n\r\n"
	req, n := mustParse(t, &Parser{}, in+"GET /next")
	if n != len(in) {
		t.Fatalf("n = %d, want %d", n, len(in))
	}
	if string(req.Method) != "GET" || string(req.Target) != "/index.html?q=1" || req.Proto() != "HTTP/1.1" {
		t.Fatalf("request line = %q %q %s", req.Method, req.Target, req.Proto())
	}
	if string(req.Host) != "example.com" || len(req.Headers) != 3 {
		t.Fatalf("host %q, %d headers", req.Host, len(req.Headers))
	}
	if string(req.Header("accept")) != "*/*" || string(req.Headers[2].Name) != "ACCEPT" {
		t.Fatalf("Accept = %q (name %q): want trimmed value, name kept as sent", req.Header("accept"), req.Headers[2].Name)
	}
	if string(req.Header("User-AGENT")) != "t" || string(req.Header("Accept")) != "*/*" {
		t.Fatal("Header must ignore the case of the name asked for too")
	}
	if req.Header("missing") != nil || req.Close || len(req.Body) != 0 || req.ConnHeader() != KeepAlive {
		t.Fatalf("unexpected: %+v", req)
	}
}

func TestParseKeepAliveRules(t *testing.T) {
	cases := []struct {
		name, in string
		close    bool
		conn     ConnHeader
	}{
		{"1.1 default", "GET / HTTP/1.1\r\nHost: h\r\n\r\n", false, KeepAlive},
		{"1.1 close", "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", true, Close},
		{"1.1 CLOSE in list", "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, CLOSE\r\n\r\n", true, Close},
		{"1.1 close in second header", "GET / HTTP/1.1\r\nHost: h\r\nConnection: te\r\nconnection: close\r\n\r\n", true, Close},
		{"1.1 closed is not close", "GET / HTTP/1.1\r\nHost: h\r\nConnection: closed\r\n\r\n", false, KeepAlive},
		{"1.0 default", "GET / HTTP/1.0\r\n\r\n", true, Close},
		{"1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", false, KeepAliveHTTP10},
		{"1.0 keep-alive and close", "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", true, Close},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := mustParse(t, &Parser{}, c.in)
			if req.Close != c.close || req.ConnHeader() != c.conn {
				t.Fatalf("Close=%v conn=%v, want %v %v", req.Close, req.ConnHeader(), c.close, c.conn)
			}
		})
	}
}

func TestParseBodies(t *testing.T) {
	cases := []struct {
		name, in, body string
		chunked        bool
		cl             int64
	}{
		{"content-length", "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", "hello", false, 5},
		{"content-length zero", "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", "", false, 0},
		{"leading zeros", "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 003\r\n\r\nabc", "abc", false, 3},
		{"chunked", "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=v\r\n \r\nB\r\nworld!!!!!!\r\n0\r\n\r\n", "hello world!!!!!!", true, -1},
		{"chunked case and trailers", "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n3 ;a\r\nabc\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n", "abc", true, -1},
		{"chunked empty", "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n000\r\n\r\n", "", true, -1},
		{"no framing, no body", "POST /p HTTP/1.1\r\nHost: h\r\n\r\n", "", false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
			buf := []byte(c.in + next)
			var req Request
			n, err := new(Parser).Parse(buf, &req)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(c.in) || string(req.Body) != c.body || req.Chunked != c.chunked || req.ContentLength != c.cl {
				t.Fatalf("n=%d body=%q chunked=%v cl=%d", n, req.Body, req.Chunked, req.ContentLength)
			}
			if cap(req.Body) != len(req.Body) {
				t.Fatal("body capacity reaches past the body; an append would clobber the next request")
			}
			if string(buf[n:]) != next {
				t.Fatal("parse modified bytes it did not consume")
			}
			// Every proper prefix needs more bytes.
			for cut := 0; cut < len(c.in); cut++ {
				var r Request
				if m, err := new(Parser).Parse([]byte(c.in[:cut]), &r); err != ErrIncomplete || m != 0 {
					t.Fatalf("prefix %d: n=%d err=%v, want ErrIncomplete", cut, m, err)
				}
			}
		})
	}
}

func TestParseSkipsEmptyLinesBeforeRequest(t *testing.T) {
	in := "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"
	req, n := mustParse(t, &Parser{}, in)
	if n != len(in) || string(req.Target) != "/" {
		t.Fatalf("n=%d target=%q", n, req.Target)
	}
	for _, prefix := range []string{"\r\n", "\r", "\r\n\r"} {
		var r Request
		if _, err := new(Parser).Parse([]byte(prefix), &r); err != ErrIncomplete {
			t.Fatalf("%q: %v, want ErrIncomplete", prefix, err)
		}
	}
}

func TestParseExpectContinue(t *testing.T) {
	head := "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 4\r\n\r\n"
	var p Parser
	var req Request
	if _, err := p.Parse([]byte(head), &req); err != ErrIncomplete {
		t.Fatalf("Parse without body: %v", err)
	}
	n, err := p.ParseHead([]byte(head), &req)
	if err != nil || n != len(head) || !req.Expect100 || req.ContentLength != 4 {
		t.Fatalf("ParseHead: n=%d err=%v expect=%v cl=%d", n, err, req.Expect100, req.ContentLength)
	}
}

func TestExpectContinueIgnoredForHTTP10(t *testing.T) {
	req, _ := mustParse(t, &Parser{}, "PUT /x HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n")
	if req.Expect100 {
		t.Fatal("HTTP/1.0 100-continue must be ignored")
	}
}

func TestParseReusesHeaderSlice(t *testing.T) {
	var p Parser
	var req Request
	in := []byte("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n")
	if _, err := p.Parse(in, &req); err != nil {
		t.Fatal(err)
	}
	first := &req.Headers[:1][0]
	if _, err := p.Parse([]byte("GET / HTTP/1.0\r\nC: 3\r\n\r\n"), &req); err != nil {
		t.Fatal(err)
	}
	if &req.Headers[0] != first || len(req.Headers) != 1 || req.Host != nil {
		t.Fatalf("second parse: %d headers, host %q, reused=%v", len(req.Headers), req.Host, &req.Headers[0] == first)
	}
}

func TestParseErrors(t *testing.T) {
	const host = "Host: h\r\n"
	big := strings.Repeat("a", DefaultMaxHeaderBytes)
	cases := []struct {
		name   string
		p      Parser
		in     string
		status int
		want   string
	}{
		{"bare LF request line", Parser{}, "GET / HTTP/1.1\n", 400, "bare LF"},
		{"bare LF header", Parser{}, "GET / HTTP/1.1\r\nHost: h\n\r\n", 400, "bare LF"},
		{"bare CR in header", Parser{}, "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400, "invalid byte 0x0d in value"},
		{"bare CR in target", Parser{}, "GET /a\rb HTTP/1.1\r\n\r\n", 400, "invalid byte 0x0d in request target"},
		{"bad method byte", Parser{}, "G(T / HTTP/1.1\r\n\r\n", 400, "invalid byte 0x28 in method"},
		{"binary garbage early", Parser{}, "\x16\x03\x01", 400, "invalid byte 0x16 in method"},
		{"empty method", Parser{}, " / HTTP/1.1\r\n\r\n", 400, "malformed request line"},
		{"double space", Parser{}, "GET  / HTTP/1.1\r\n\r\n", 400, "malformed request line"},
		{"no version", Parser{}, "GET /\r\n\r\n", 400, "malformed request line"},
		{"trailing space", Parser{}, "GET / HTTP/1.1 \r\n\r\n", 400, "malformed HTTP version"},
		{"lower-case version", Parser{}, "GET / http/1.1\r\n\r\n", 400, "malformed HTTP version"},
		{"version 2.0", Parser{}, "GET / HTTP/2.0\r\n\r\n", 505, "HTTP/2.0 is not supported"},
		{"version 1.2", Parser{}, "GET / HTTP/1.2\r\n\r\n", 505, "HTTP/1.2"},
		{"target without form", Parser{}, "GET foo HTTP/1.1\r\nHost: h\r\n\r\n", 400, "request target \"foo\" is not in origin, absolute"},
		{"target bad scheme", Parser{}, "GET 1http://x/ HTTP/1.1\r\nHost: h\r\n\r\n", 400, "not in origin, absolute"},
		{"CONNECT without port", Parser{}, "CONNECT example.com HTTP/1.1\r\nHost: h\r\n\r\n", 400, "not in origin, absolute"},
		{"target with DEL", Parser{}, "GET /\x7f HTTP/1.1\r\n\r\n", 400, "invalid byte 0x7f in request target"},
		{"target with obs-text", Parser{}, "GET /\xff HTTP/1.1\r\n\r\n", 400, "invalid byte 0xff in request target"},
		{"obs-fold", Parser{}, "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n  b\r\n\r\n", 400, "obsolete line folding"},
		{"whitespace first line", Parser{}, "GET / HTTP/1.1\r\n Host: h\r\n\r\n", 400, "starts with whitespace"},
		{"space before colon", Parser{}, "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400, "whitespace before the colon in header name \"Host \""},
		{"no colon", Parser{}, "GET / HTTP/1.1\r\nHost h\r\n\r\n", 400, "has no colon"},
		{"empty name", Parser{}, "GET / HTTP/1.1\r\n: h\r\n\r\n", 400, "empty name"},
		{"bad name byte", Parser{}, "GET / HTTP/1.1\r\nHo\"st: h\r\n\r\n", 400, "invalid byte 0x22 in header name"},
		{"NUL in value", Parser{}, "GET / HTTP/1.1\r\nHost: h\r\nX: a\x00b\r\n\r\n", 400, "invalid byte 0x00 in value of header \"X\""},
		{"missing host", Parser{}, "GET / HTTP/1.1\r\n\r\n", 400, "without a Host"},
		{"two hosts", Parser{}, "GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", 400, "more than one Host"},
		{"CL not a number", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length: 12a\r\n\r\n", 400, "invalid Content-Length \"12a\""},
		{"CL signed", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length: +5\r\n\r\n", 400, "invalid Content-Length \"+5\""},
		{"CL list", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length: 5, 5\r\n\r\n", 400, "invalid Content-Length \"5, 5\""},
		{"CL empty", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length:\r\n\r\n", 400, "empty Content-Length"},
		{"CL duplicate same", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length: 1\r\ncontent-length: 1\r\n\r\nx", 400, "more than one Content-Length"},
		{"CL and TE", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"},
		{"TE and CL", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"},
		{"TE on 1.0", Parser{}, "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0 request with Transfer-Encoding"},
		{"TE gzip", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501, "transfer coding \"gzip\" is not supported"},
		{"TE chunked twice", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "applied more than once"},
		{"TE empty", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: ,\r\n\r\n", 400, "empty Transfer-Encoding"},
		{"CL over default limit", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length: 4194305\r\n\r\n", 413, "Content-Length \"4194305\" exceeds the body limit of 4194304 bytes"},
		{"CL over small limit", Parser{Limits: Limits{MaxBodyBytes: 5}}, "POST / HTTP/1.1\r\n" + host + "Content-Length: 7\r\n\r\n", 413, "exceeds the body limit of 5 bytes"},
		{"CL overflowing int64", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length: 99999999999999999999999\r\n\r\n", 413, "exceeds the body limit"},
		{"CL huge and malformed", Parser{}, "POST / HTTP/1.1\r\n" + host + "Content-Length: 99999999999999999999999x\r\n\r\n", 400, "invalid Content-Length"},
		{"head too big", Parser{}, "GET /" + big + " HTTP/1.1\r\n\r\n", 431, "exceeds 8192 bytes"},
		{"head too big, partial", Parser{}, "GET /" + big, 431, "exceeds 8192 bytes"},
		{"head too big by one", Parser{Limits: Limits{MaxHeaderBytes: 26}}, "GET / HTTP/1.1\r\nHost: h\r\n\r\n", 431, "exceeds 26 bytes"},
		{"too many headers", Parser{Limits: Limits{MaxHeaders: 2}}, "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n", 431, "more than 2 header fields"},
		{"chunk size not hex", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\nxyz\r\n", 400, "invalid chunk size line \"xyz\""},
		{"chunk size junk after", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n5x\r\n", 400, "invalid chunk size line \"5x\""},
		{"chunk bare LF", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n5\n", 400, "chunk-size line ends in a bare LF"},
		{"chunk data no CRLF", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400, "chunk data not followed by CRLF"},
		{"chunk ext control", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n2;\x01\r\nab\r\n", 400, "invalid byte 0x01 in chunk extension"},
		{"chunk line too long", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n1;" + big, 400, "chunk-size line longer than 4096 bytes"},
		{"chunks over limit", Parser{Limits: Limits{MaxBodyBytes: 8}}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n4\r\n", 413, "chunk size \"4\" takes the body past its limit of 8 bytes"},
		{"chunk size overflowing", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffffff\r\n", 413, "past its limit of 4194304 bytes"},
		{"chunk wire size", Parser{Limits: Limits{MaxBodyBytes: 2, MaxHeaderBytes: 60}}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n1;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\nx\r\n", 413, "exceeds 64 bytes on the wire"},
		{"trailer bad", Parser{}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n", 400, "has no colon"},
		{"trailer too big", Parser{Limits: Limits{MaxHeaderBytes: 64}}, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n0\r\nX: " + strings.Repeat("t", 70), 431, "chunked trailer section exceeds 64 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var req Request
			n, err := c.p.Parse([]byte(c.in), &req)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Status != c.status || !strings.Contains(e.Msg, c.want) || n != 0 {
				t.Fatalf("got %d %q (n=%d), want %d containing %q", e.Status, e.Msg, n, c.status, c.want)
			}
		})
	}
}

func TestHeadAtExactLimitIsAccepted(t *testing.T) {
	in := "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
	p := Parser{Limits: Limits{MaxHeaderBytes: len(in)}}
	if _, n := mustParse(t, &p, in+"more"); n != len(in) {
		t.Fatalf("n = %d", n)
	}
	// One byte short of the end and at the limit: still incomplete, not 431.
	p.Limits.MaxHeaderBytes = len(in) + 1
	var req Request
	if _, err := p.Parse([]byte(in[:len(in)-1]), &req); err != ErrIncomplete {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorMessageIsBoundedForHugeValues(t *testing.T) {
	in := "GET / HTTP/1.1\r\nHost: h\r\nX" + strings.Repeat("\"", 4000) + ": v\r\n\r\n"
	var req Request
	_, err := new(Parser).Parse([]byte(in), &req)
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("error %d bytes long: %v", len(err.Error()), err)
	}
}

func TestChunkedDecodeOnlyTouchesConsumedBytes(t *testing.T) {
	in := "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
	buf := []byte(in + "tail")
	partial := append([]byte(nil), buf[:len(in)-1]...)
	before := append([]byte(nil), partial...)
	var req Request
	if _, err := new(Parser).Parse(partial, &req); err != ErrIncomplete {
		t.Fatal(err)
	}
	if !bytes.Equal(partial, before) {
		t.Fatal("an incomplete parse modified the buffer")
	}
	n, err := new(Parser).Parse(buf, &req)
	if err != nil || string(req.Body) != "abcde" || string(buf[n:]) != "tail" {
		t.Fatalf("n=%d err=%v body=%q rest=%q", n, err, req.Body, buf[n:])
	}
}

func TestHugeBodyLimitDoesNotOverflow(t *testing.T) {
	p := Parser{Limits: Limits{MaxBodyBytes: math.MaxInt64}}
	var req Request
	in := "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775807\r\n\r\nabc"
	if _, err := p.Parse([]byte(in), &req); err != ErrIncomplete {
		t.Fatalf("Content-Length at MaxInt64: %v, want ErrIncomplete", err)
	}
	in = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffff0000\r\nabc"
	if _, err := p.Parse([]byte(in), &req); err != ErrIncomplete {
		t.Fatalf("chunk size at MaxInt64: %v, want ErrIncomplete", err)
	}
	in = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	if _, err := p.Parse([]byte(in), &req); err != nil || string(req.Body) != "abc" {
		t.Fatalf("chunked under a MaxInt64 limit: %v %q", err, req.Body)
	}
}

// TestStricterThanNetHTTP pins the deliberate differences from http.ReadRequest: each
// of these is accepted by net/http's reader but refused here, for the RFC 9112 reason
// given, mostly because a front proxy could frame it differently (request smuggling).
func TestStricterThanNetHTTP(t *testing.T) {
	cases := []struct{ why, in string }{
		{"bare LF as line end (RFC 9112 2.2 MAY, refused)", "GET / HTTP/1.1\nHost: h\n\n"},
		{"duplicate Content-Length with equal values", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx"},
		{"obs-fold (RFC 9112 5.2 reject or replace)", "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n"},
		{"whitespace before colon (RFC 9112 5.1 MUST reject)", "GET / HTTP/1.1\r\nHost : h\r\n\r\n"},
		{"HTTP/1.1 without Host (RFC 9112 3.2 MUST 400)", "GET / HTTP/1.1\r\n\r\n"},
		{"Content-Length with Transfer-Encoding (RFC 9112 6.3 MAY reject)", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"},
		{"Transfer-Encoding in HTTP/1.0 (RFC 9112 6.1 faulty framing)", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	}
	for _, c := range cases {
		if _, err := http.ReadRequest(bufio.NewReader(strings.NewReader(c.in))); err != nil {
			t.Fatalf("%s: net/http now refuses it too (%v); update this list", c.why, err)
		}
		var req Request
		if _, err := new(Parser).Parse([]byte(c.in), &req); err == nil || err == ErrIncomplete {
			t.Fatalf("%s: accepted (err=%v)", c.why, err)
		}
	}
}
