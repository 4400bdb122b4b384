package http1

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"testing"
)

// FuzzParse checks that Parse never panics, never claims more bytes than it was given,
// returns either n > 0 and a request or n == 0 and an error, that a status error carries
// a 4xx/5xx code, and that a request it accepts is also accepted alone and is
// incomplete when cut short.
func FuzzParse(f *testing.F) {
	for _, in := range differentialCorpus()[:20] {
		f.Add([]byte(in))
	}
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;x\r\nhello\r\n0\r\nT: 1\r\n\r\n"))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.1\nHost: h\n\n"))
	f.Add([]byte("\r\n\r\nGET / HTTP/1.0\r\nX: a\r\n b\r\n\r\n"))
	f.Add([]byte("\r\nGET / HTTP/1.0\r\n\r\n"))
	p := Parser{Limits: Limits{MaxHeaderBytes: 512, MaxHeaders: 8, MaxBodyBytes: 256}}
	f.Fuzz(func(t *testing.T, in []byte) {
		buf := append([]byte(nil), in...)
		var req Request
		n, err := p.Parse(buf, &req)
		if n < 0 || n > len(buf) {
			t.Fatalf("n=%d for %d bytes", n, len(buf))
		}
		if err != nil {
			var e *Error
			if n != 0 || (err != ErrIncomplete && (!errors.As(err, &e) || e.Status < 400 || e.Status > 599)) {
				t.Fatalf("n=%d err=%v", n, err)
			}
			if !bytes.Equal(buf, in) {
				t.Fatal("a failed parse modified the buffer")
			}
			return
		}
		if n == 0 || len(req.Body) > n || len(req.Headers) > 8 || int64(len(req.Body)) > 256 {
			t.Fatalf("n=%d body=%d headers=%d", n, len(req.Body), len(req.Headers))
		}
		if !bytes.Equal(buf[n:], in[n:]) {
			t.Fatal("parse modified bytes it did not consume")
		}
		want := fromOurs(&req)
		alone := append([]byte(nil), in[:n]...)
		if m, err := p.Parse(alone, &req); err != nil || m != n {
			t.Fatalf("request alone: n=%d err=%v, want %d", m, err, n)
		}
		if got := fromOurs(&req); !equalParsed(got, want) {
			t.Fatalf("request alone parsed differently: %+v vs %+v", got, want)
		}
		for _, cut := range []int{n - 1, n / 2, n / 3, 1} {
			short := append([]byte(nil), in[:cut]...)
			if m, err := p.Parse(short, &req); err != ErrIncomplete || m != 0 {
				t.Fatalf("prefix %d of %d: n=%d err=%v, want ErrIncomplete", cut, n, m, err)
			}
		}
	})
}

func equalParsed(a, b parsed) bool {
	if a.Method != b.Method || a.Target != b.Target || a.Proto != b.Proto || a.Host != b.Host ||
		a.Body != b.Body || a.Chunked != b.Chunked || a.Close != b.Close {
		return false
	}
	return maps.EqualFunc(a.Header, b.Header, slices.Equal)
}
