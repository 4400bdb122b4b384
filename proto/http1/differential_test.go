package http1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
)

// parsed is what both parsers must agree on for one request.
type parsed struct {
	Method, Target, Proto string
	Header                map[string][]string
	Host                  string
	Body                  string
	Chunked               bool
	Close                 bool
}

// fromOurs converts a Request, copying every slice, since the buffer will be reused.
func fromOurs(r *Request) parsed {
	p := parsed{
		Method: string(r.Method), Target: string(r.Target), Proto: r.Proto(),
		Header: map[string][]string{}, Host: string(r.Host), Body: string(r.Body),
		Chunked: r.Chunked, Close: r.Close,
	}
	for _, h := range r.Headers {
		name := textproto.CanonicalMIMEHeaderKey(string(h.Name))
		if name == "Host" || name == "Transfer-Encoding" || name == "Trailer" {
			continue // net/http moves these out of Header
		}
		p.Header[name] = append(p.Header[name], string(h.Value))
	}
	return p
}

func fromNetHTTP(r *http.Request) (parsed, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return parsed{}, err
	}
	p := parsed{
		Method: r.Method, Target: r.RequestURI, Proto: r.Proto, Header: map[string][]string{},
		Host: r.Host, Body: string(body), Close: r.Close,
		Chunked: len(r.TransferEncoding) == 1 && r.TransferEncoding[0] == "chunked",
	}
	for k, v := range r.Header {
		if k != "Host" && k != "Transfer-Encoding" && k != "Trailer" {
			p.Header[k] = v
		}
	}
	return p, nil
}

// differentialCorpus returns valid requests: a hand-written table and generated ones.
func differentialCorpus() []string {
	corpus := []string{
		"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET /search?q=a+b&x=%20 HTTP/1.1\r\nHost: example.com:8080\r\nuser-agent: curl/8.5\r\naccept: */*\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET http://example.com/abs HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"HEAD /x HTTP/1.0\r\n\r\n",
		"GET /ka HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"GET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
		"GET /c HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, Close\r\n\r\n",
		"POST /form HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\na=1&b=2",
		"PUT /obj HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n",
		"POST /t HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n1\r\na\r\n0\r\nX-Sum: 1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nX-Empty:\r\nX-Spaces: \t padded \t\r\nX-Dup: 1\r\nx-dup: 2\r\nX-Obs: caf\xc3\xa9\r\n\r\n",
		"DELETE /k HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
		"M-SEARCH * HTTP/1.1\r\nHost: 239.255.255.250:1900\r\n\r\n",
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"GET https://user@example.com:8443/p?q#f HTTP/1.1\r\nHost: example.com:8443\r\n\r\n",
		"POST /1.0 HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc",
	}
	rng := rand.New(rand.NewSource(1))
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"}
	targets := []string{"/", "/a/b/c", "/q?x=1&y=2", "/%7Euser/", "/" + strings.Repeat("p", 300)}
	names := []string{"Accept", "accept-encoding", "X-Request-ID", "Cookie", "CONNECTION", "Cache-Control", "x-a"}
	values := []string{"", "gzip, deflate", "keep-alive", "close", "a=b; c=d", "no-cache", strings.Repeat("v", 200)}
	for i := 0; i < 300; i++ {
		var b strings.Builder
		minor := 1 // mostly HTTP/1.1
		if rng.Intn(4) == 0 {
			minor = 0
		}
		fmt.Fprintf(&b, "%s %s HTTP/1.%d\r\n", methods[rng.Intn(len(methods))], targets[rng.Intn(len(targets))], minor)
		if minor == 1 || rng.Intn(2) == 0 {
			b.WriteString("Host: gen.example\r\n")
		}
		for j := rng.Intn(8); j > 0; j-- {
			fmt.Fprintf(&b, "%s: %s\r\n", names[rng.Intn(len(names))], values[rng.Intn(len(values))])
		}
		body := strings.Repeat(string(rune('a'+i%26)), rng.Intn(40))
		switch {
		case minor == 1 && rng.Intn(3) == 0:
			b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			for rest := body; len(rest) > 0; {
				n := 1 + rng.Intn(len(rest))
				fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
				rest = rest[n:]
			}
			b.WriteString("0\r\n\r\n")
		case rng.Intn(2) == 0:
			fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
		default:
			b.WriteString("\r\n")
		}
		corpus = append(corpus, b.String())
	}
	return corpus
}

func TestDifferentialAgainstNetHTTP(t *testing.T) {
	var p Parser
	var req Request
	for i, in := range differentialCorpus() {
		want, err := netHTTPParse(in)
		if err != nil {
			t.Fatalf("corpus %d is not valid for net/http: %v\n%q", i, err, in)
		}
		n, err := p.Parse([]byte(in), &req)
		if err != nil || n != len(in) {
			t.Fatalf("corpus %d: n=%d/%d err=%v\n%q", i, n, len(in), err, in)
		}
		if got := fromOurs(&req); !reflect.DeepEqual(got, want) {
			t.Fatalf("corpus %d differs\n ours: %+v\n  net: %+v\n%q", i, got, want, in)
		}
	}
}

func netHTTPParse(in string) (parsed, error) {
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(in)))
	if err != nil {
		return parsed{}, err
	}
	return fromNetHTTP(r)
}

// feed plays a connection: each chunk is appended to the unconsumed rest, as the event
// loop does, and every complete request is parsed.
func feed(t *testing.T, chunks [][]byte) []parsed {
	t.Helper()
	var p Parser
	var req Request
	var pending []byte
	var out []parsed
	for _, c := range chunks {
		pending = append(pending, c...)
		for {
			n, err := p.Parse(pending, &req)
			if err == ErrIncomplete {
				break
			}
			if err != nil {
				t.Fatalf("after %d requests: %v", len(out), err)
			}
			out = append(out, fromOurs(&req))
			pending = append(pending[:0], pending[n:]...)
		}
	}
	if len(pending) != 0 {
		t.Fatalf("%d bytes never parsed", len(pending))
	}
	return out
}

func TestPipelinedSplitAtEveryByte(t *testing.T) {
	corpus := differentialCorpus()
	// A pipeline mixing every framing: plain, Content-Length, chunked, HTTP/1.0.
	var stream []byte
	var want []parsed
	for _, i := range []int{0, 1, 8, 9, 10, 11, 4, 5, 20, 21, 22, 23} {
		stream = append(stream, corpus[i]...)
	}
	r := bufio.NewReader(bytes.NewReader(stream))
	for {
		hr, err := http.ReadRequest(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		w, err := fromNetHTTP(hr)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, w)
	}
	if len(want) != 12 {
		t.Fatalf("net/http read %d requests", len(want))
	}
	for cut := 0; cut <= len(stream); cut++ {
		s := append([]byte(nil), stream...) // chunked decoding rewrites consumed bytes
		if got := feed(t, [][]byte{s[:cut], s[cut:]}); !reflect.DeepEqual(got, want) {
			t.Fatalf("split at %d: got %d requests, differ from net/http", cut, len(got))
		}
	}
	// Byte-at-a-time, and random multi-way splits.
	one := make([][]byte, len(stream))
	s := append([]byte(nil), stream...)
	for i := range s {
		one[i] = s[i : i+1]
	}
	if got := feed(t, one); !reflect.DeepEqual(got, want) {
		t.Fatal("byte-at-a-time feed differs from net/http")
	}
	rng := rand.New(rand.NewSource(2))
	for trial := 0; trial < 200; trial++ {
		s := append([]byte(nil), stream...)
		var chunks [][]byte
		for len(s) > 0 {
			n := 1 + rng.Intn(min(len(s), 97))
			chunks = append(chunks, s[:n])
			s = s[n:]
		}
		if got := feed(t, chunks); !reflect.DeepEqual(got, want) {
			t.Fatalf("random split trial %d differs", trial)
		}
	}
}
