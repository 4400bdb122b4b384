package http1

import (
	"bufio"
	"bytes"
	"net/http"
	"testing"
)

// typicalGet is a browser-like GET with six headers besides Host.
const typicalGet = "GET /api/v1/items?id=42 HTTP/1.1\r\n" +
	"Host: bench.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
	"Accept: application/json\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: session=0123456789abcdef\r\n\r\n"

func BenchmarkParseTypicalGet(b *testing.B) {
	buf := []byte(typicalGet)
	var p Parser
	var req Request
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, err := p.Parse(buf, &req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParsePipelined(b *testing.B) {
	var batch []byte
	for i := 0; i < 64; i++ {
		batch = append(batch, typicalGet...)
		batch = append(batch, "POST /submit HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"id\":42,\"name\":\"shoal kv\"}"...)
	}
	var p Parser
	var req Request
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		for in := batch; len(in) > 0; {
			n, err := p.Parse(in, &req)
			if err != nil {
				b.Fatal(err)
			}
			in = in[n:]
		}
	}
}

func BenchmarkParseChunked(b *testing.B) {
	in := "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
	for i := 0; i < 16; i++ {
		in += "40\r\n" + string(make([]byte, 64)) + "\r\n"
	}
	in += "0\r\n\r\n"
	src := []byte(in)
	buf := make([]byte, len(src))
	var p Parser
	var req Request
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		copy(buf, src) // decoding rewrites the consumed bytes
		if _, err := p.Parse(buf, &req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	body := []byte(`{"id":42,"name":"shoal kv"}`)
	ct := []Header{{Name: []byte("Content-Type"), Value: []byte("application/json")}}
	buf := make([]byte, 0, 512)
	date := NewDateClock()
	defer date.Stop()
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResponse(buf[:0], date, 200, KeepAlive, body, ct...)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkAppendRequest(b *testing.B) {
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRequest(buf[:0], "GET", "/api/v1/items?id=42", "bench.example.com", nil)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkNetHTTPReadRequestTypicalGet is the peer for BenchmarkParseTypicalGet:
// timings on a shared machine mean little alone, the ratio within one run does.
func BenchmarkNetHTTPReadRequestTypicalGet(b *testing.B) {
	src := bytes.NewReader([]byte(typicalGet))
	r := bufio.NewReader(src)
	b.ReportAllocs()
	b.SetBytes(int64(len(typicalGet)))
	for b.Loop() {
		src.Reset([]byte(typicalGet))
		r.Reset(src)
		if _, err := http.ReadRequest(r); err != nil {
			b.Fatal(err)
		}
	}
}
