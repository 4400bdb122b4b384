package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
)

// curl runs the curl binary against the HTTP front and returns the status
// code and body. -w appends the code after a newline.
func curl(t *testing.T, args ...string) (int, string) {
	t.Helper()
	path := redistest.Tool(t, "curl", "SHOAL_REQUIRE_CURL", "apt-get install curl")
	out, err := exec.Command(path, append([]string{"-sS", "--max-time", "5", "-w", "\n%{http_code}"}, args...)...).Output()
	if err != nil {
		t.Fatalf("curl %v: %v", args, err)
	}
	s := string(out)
	i := strings.LastIndexByte(s, '\n')
	var code int
	fmt.Sscan(s[i+1:], &code)
	return code, s[:i]
}

// TestHTTPCurlRoundTrip is the round trip with curl: PUT, GET,
// 404, incr 1 then 2, DELETE.
func TestHTTPCurlRoundTrip(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	base := "http://" + f.http + "/kv/"
	steps := []struct {
		args     []string
		code     int
		body     string
		describe string
	}{
		{[]string{"-X", "PUT", "--data-binary", "hello world", base + "greeting"}, 204, "", "PUT"},
		{[]string{base + "greeting"}, 200, "hello world", "GET"},
		{[]string{base + "missing"}, 404, "no such key\n", "GET missing"},
		{[]string{"-X", "POST", base + "counter/incr"}, 200, "1", "incr"},
		{[]string{"-X", "POST", base + "counter/incr"}, 200, "2", "incr again"},
		{[]string{"-X", "DELETE", base + "greeting"}, 204, "", "DELETE"},
		{[]string{base + "greeting"}, 404, "no such key\n", "GET after DELETE"},
		{[]string{"-X", "DELETE", base + "greeting"}, 404, "no such key\n", "DELETE again"},
	}
	for _, s := range steps {
		code, body := curl(t, s.args...)
		if code != s.code || body != s.body {
			t.Fatalf("%s: %d %q, want %d %q", s.describe, code, body, s.code, s.body)
		}
	}
	// A body over 1 KiB makes curl send Expect: 100-continue and wait for
	// the 100 before sending it.
	big := strings.Repeat("x", 100<<10)
	if code, _ := curl(t, "-X", "PUT", "--data-binary", big, base+"big"); code != 204 {
		t.Fatalf("PUT 100 KiB: %d", code)
	}
	if code, body := curl(t, base+"big"); code != 200 || body != big {
		t.Fatalf("GET big: %d, %d bytes", code, len(body))
	}
}

func httpDo(t *testing.T, c *http.Client, method, u string, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestHTTPAPI drives every route with net/http's client over one
// keep-alive connection pool.
func TestHTTPAPI(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	c := &http.Client{Timeout: 5 * time.Second}
	base := "http://" + f.http
	binaryKey := "a/b c\x00\xff%+?#é"
	enc := base + "/kv/" + url.PathEscape(binaryKey)

	type step struct {
		method, path, body string
		code               int
		want               string // body
		header             string // "Name: value" expected, optional
	}
	steps := []step{
		{"GET", "/healthz", "", 200, "ok\n", ""},
		{"HEAD", "/healthz", "", 200, "", "Content-Length: 3"},
		{"POST", "/healthz", "", 405, "method \"POST\" not allowed; allowed: GET, HEAD\n", "Allow: GET, HEAD"},
		{"GET", "/nothing/here", "", 404, "not found: \"/nothing/here\"\n", ""},
		{"PUT", "/kv/k1", "v1", 204, "", ""},
		{"GET", "/kv/k1", "", 200, "v1", "Content-Type: application/octet-stream"},
		{"HEAD", "/kv/k1", "", 200, "", "Content-Length: 2"},
		{"HEAD", "/kv/none", "", 404, "", ""},
		{"PATCH", "/kv/k1", "", 405, "method \"PATCH\" not allowed; allowed: GET, HEAD, PUT, DELETE\n", "Allow: GET, HEAD, PUT, DELETE"},
		{"GET", "/kv/k1/incr", "", 405, "method \"GET\" not allowed; allowed: POST\n", "Allow: POST"},
		{"POST", "/kv/k1/incr", "", 409, "ERR value is not an integer or out of range\n", ""},
		{"POST", "/kv/n/incr?by=10", "", 200, "10", ""},
		{"POST", "/kv/n/incr?by=-3", "", 200, "7", ""},
		{"POST", "/kv/n/incr?by=x", "", 400, "invalid by \"x\": ERR value is not an integer or out of range\n", ""},
		{"POST", "/kv/n/incr?by=9223372036854775807", "", 409, "ERR increment or decrement would overflow\n", ""},
		{"PUT", "/kv/t?ttl=0", "v", 400, "invalid ttl \"0\": want whole seconds from 1 to 1099511627776\n", ""},
		{"PUT", "/kv/t?ttl=abc", "v", 400, "invalid ttl \"abc\": want whole seconds from 1 to 1099511627776\n", ""},
		{"PUT", "/kv/t?ttl=100", "v", 204, "", ""},
		{"DELETE", "/kv/k1", "", 204, "", ""},
		{"DELETE", "/kv/k1", "", 404, "no such key\n", ""},
	}
	for _, s := range steps {
		resp, body := httpDo(t, c, s.method, base+s.path, s.body)
		if resp.StatusCode != s.code || body != s.want {
			t.Fatalf("%s %s: %d %q, want %d %q", s.method, s.path, resp.StatusCode, body, s.code, s.want)
		}
		if s.header != "" {
			name, val, _ := strings.Cut(s.header, ": ")
			got := resp.Header.Get(name)
			if name == "Content-Length" {
				got = fmt.Sprint(resp.ContentLength)
			}
			if got != val {
				t.Fatalf("%s %s: %s = %q, want %q", s.method, s.path, name, got, val)
			}
		}
	}
	if ttl := f.store.PTTL([]byte("t")); ttl <= 99_000 || ttl > 100_000 {
		t.Fatalf("PUT ?ttl=100 left a PTTL of %d ms", ttl)
	}
	// Any byte string is a key once percent-decoded; the raw path's
	// slashes stay part of it.
	if resp, _ := httpDo(t, c, "PUT", enc, "binary"); resp.StatusCode != 204 {
		t.Fatalf("PUT %s: %d", enc, resp.StatusCode)
	}
	var got []byte
	got, found, _ := f.store.Get(nil, []byte(binaryKey))
	if !found || string(got) != "binary" {
		t.Fatalf("key %q in the store: %q %v", binaryKey, got, found)
	}
	if resp, _ := httpDo(t, c, "PUT", base+"/kv/x/y", "slash"); resp.StatusCode != 204 {
		t.Fatal("PUT /kv/x/y")
	}
	if got, found, _ := f.store.Get(nil, []byte("x/y")); !found || string(got) != "slash" {
		t.Fatalf("/kv/x/y stored %q %v, want key \"x/y\"", got, found)
	}
	for _, bad := range []string{"bad%zzkey", "trailing%2", "trailing%"} {
		r := rawHTTP(t, f.http, "GET /kv/"+bad+" HTTP/1.1\r\nHost: x\r\n\r\n", 1)[0]
		if want := "invalid percent-encoding in key \"" + bad + "\"\n"; r.code != 400 || r.body != want {
			t.Fatalf("GET /kv/%s: %d %q, want 400 %q", bad, r.code, r.body, want)
		}
	}
	// Absolute-form targets (RFC 9112 3.2.2) are served too.
	raw := rawHTTP(t, f.http, "GET http://"+f.http+"/kv/x%2Fy HTTP/1.1\r\nHost: x\r\n\r\n", 1)
	if raw[0].code != 200 || raw[0].body != "slash" {
		t.Fatalf("absolute-form GET: %+v", raw[0])
	}
}

// TestHTTPExpectContinue: the 100 comes once the head has arrived,
// before the body is sent, and the final response follows the body.
func TestHTTPExpectContinue(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	conn := shoaltest.Dial(t, f.http).C
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(conn, "PUT /kv/e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	rd := bufio.NewReader(conn)
	line, err := rd.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("before the body: %q %v", line, err)
	}
	if blank, _ := rd.ReadString('\n'); blank != "\r\n" {
		t.Fatalf("100 Continue not followed by a blank line: %q", blank)
	}
	io.WriteString(conn, "he")
	io.WriteString(conn, "llo")
	resp, err := http.ReadResponse(rd, nil)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("after the body: %v %v", resp, err)
	}
	if v, _, _ := f.store.Get(nil, []byte("e")); string(v) != "hello" {
		t.Fatalf("stored %q", v)
	}
}

// TestHTTPOutOfMemory: a write refused under maxmemory gets 507 with
// Redis's OOM text, and reads still work.
func TestHTTPOutOfMemory(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	f.store.Set(nil, []byte("k"), []byte("v"), storeSetOptions())
	f.store.SetMaxMemory(1)
	r := rawHTTP(t, f.http, "PUT /kv/big HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET /kv/k HTTP/1.1\r\nHost: h\r\n\r\n", 2)
	if r[0].code != 507 || !strings.HasPrefix(r[0].body, "OOM command not allowed") {
		t.Fatalf("PUT over maxmemory: %d %q", r[0].code, r[0].body)
	}
	if r[1].code != 200 || r[1].body != "v" {
		t.Fatalf("GET after the refused PUT: %d %q", r[1].code, r[1].body)
	}
}

// TestHTTPBodyLimitFollowsMaxInboundBuffer: bodies may be the Server's
// MaxInboundBuffer less 8 KiB of headers.
func TestHTTPBodyLimitFollowsMaxInboundBuffer(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{MaxInboundBuffer: 1 << 20}, "")
	limit := 1<<20 - 8<<10
	r := rawHTTP(t, f.http, fmt.Sprintf("PUT /kv/a HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n", limit+1), 1)[0]
	if r.code != 413 || !strings.Contains(r.body, fmt.Sprint(limit)) {
		t.Fatalf("body of limit+1: %d %q", r.code, r.body)
	}
	body := strings.Repeat("v", limit)
	r = rawHTTP(t, f.http, fmt.Sprintf("PUT /kv/a HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", limit, body), 1)[0]
	if r.code != 204 {
		t.Fatalf("body at the limit: %d %q", r.code, r.body)
	}
}

type rawResponse struct {
	code   int
	body   string
	header http.Header
	close  bool // Connection: close (net/http moves it out of header)
}

// rawHTTP sends req as is on a new connection and reads n responses with
// net/http's parser.
func rawHTTP(t *testing.T, addr, req string, n int) []rawResponse {
	t.Helper()
	conn := shoaltest.Dial(t, addr).C
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	var out []rawResponse
	for i := 0; i < n; i++ {
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatalf("response %d of %d: %v", i+1, n, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("response %d body: %v", i+1, err)
		}
		out = append(out, rawResponse{resp.StatusCode, string(b), resp.Header, resp.Close})
	}
	return out
}

// TestHTTPPipelinedKeepAlive sends 200 requests in one write on one
// connection and gets 200 responses in order.
func TestHTTPPipelinedKeepAlive(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	var req strings.Builder
	const n = 200
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&req, "PUT /kv/p%d HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\nvalue-%d", i, len(fmt.Sprint("value-", i)), i)
		case 1:
			fmt.Fprintf(&req, "GET /kv/p%d HTTP/1.1\r\nHost: h\r\n\r\n", i-1)
		case 2:
			fmt.Fprintf(&req, "POST /kv/count/incr HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
		}
	}
	rs := rawHTTP(t, f.http, req.String(), n)
	for i, r := range rs {
		want := map[int]rawResponse{0: {code: 204}, 1: {code: 200, body: fmt.Sprint("value-", i-1)}, 2: {code: 200, body: fmt.Sprint(i/3 + 1)}}[i%3]
		if r.code != want.code || r.body != want.body {
			t.Fatalf("response %d: %d %q, want %d %q", i, r.code, r.body, want.code, want.body)
		}
	}
	// Connection: close is honoured after the response.
	rs = rawHTTP(t, f.http, "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", 1)
	if !rs[0].close {
		t.Fatal("no Connection: close in the answer to Connection: close")
	}
}

// TestHTTPCodecErrors: what proto/http1 refuses gets its status with a
// short text body, and the connection closes.
func TestHTTPCodecErrors(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	for _, tc := range []struct {
		name, req string
		code      int
		body      string
	}{
		{"bare LF", "GET /kv/a HTTP/1.1\nHost: h\n\n", 400, "request line ends in a bare LF"},
		{"no host", "GET /kv/a HTTP/1.1\r\n\r\n", 400, "Host"},
		{"body too large", "PUT /kv/a HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999\r\n\r\n", 413, "99999999999"},
		{"header too large", "GET /kv/a HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("y", 9000) + "\r\n\r\n", 431, "8192"},
		{"transfer coding", "PUT /kv/a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "gzip"},
		{"version", "GET /kv/a HTTP/2.0\r\nHost: h\r\n\r\n", 505, "HTTP/2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := shoaltest.Dial(t, f.http).C
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(conn, tc.req)
			all, _ := io.ReadAll(conn) // the server closes after the response
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(all)), nil)
			if err != nil {
				t.Fatalf("%q: %v", all, err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.body) || !resp.Close {
				t.Fatalf("%d %q (close %v), want %d with %q and Connection: close", resp.StatusCode, body, resp.Close, tc.code, tc.body)
			}
		})
	}
}

// TestSameKeyOverEveryFront: a key written over any front is read over the
// others (RESP through go-redis).
func TestSameKeyOverEveryFront(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: f.resp})
	defer rdb.Close()
	c := &http.Client{Timeout: 5 * time.Second}
	fc := dialFrame(t, f.frame)

	httpGet := func(key string) string {
		resp, body := httpDo(t, c, "GET", "http://"+f.http+"/kv/"+url.PathEscape(key), "")
		if resp.StatusCode != 200 {
			t.Fatalf("HTTP GET %q: %d %q", key, resp.StatusCode, body)
		}
		return body
	}
	// RESP writes.
	if err := rdb.Set(ctx, "from-resp", "r\x00v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := httpGet("from-resp"); got != "r\x00v" {
		t.Fatalf("HTTP read %q", got)
	}
	if st, v := fc.do(t, frameGet("from-resp")); st != 0 || v != "r\x00v" {
		t.Fatalf("frame read %d %q", st, v)
	}
	// HTTP writes.
	if resp, _ := httpDo(t, c, "PUT", "http://"+f.http+"/kv/from-http", "h-v"); resp.StatusCode != 204 {
		t.Fatal(resp.Status)
	}
	if got, err := rdb.Get(ctx, "from-http").Result(); err != nil || got != "h-v" {
		t.Fatalf("RESP read %q %v", got, err)
	}
	if st, v := fc.do(t, frameGet("from-http")); st != 0 || v != "h-v" {
		t.Fatalf("frame read %d %q", st, v)
	}
	// Frame writes.
	if st, _ := fc.do(t, frameSet("from-frame", "f-v")); st != 0 {
		t.Fatalf("frame SET status %d", st)
	}
	if got, err := rdb.Get(ctx, "from-frame").Result(); err != nil || got != "f-v" {
		t.Fatalf("RESP read %q %v", got, err)
	}
	if got := httpGet("from-frame"); got != "f-v" {
		t.Fatalf("HTTP read %q", got)
	}
	// An HTTP incr counts on from RESP's INCR.
	rdb.Set(ctx, "n", 41, 0)
	if resp, body := httpDo(t, c, "POST", "http://"+f.http+"/kv/n/incr", ""); body != "42" {
		t.Fatalf("incr: %s %q", resp.Status, body)
	}
	if n, _ := rdb.Incr(ctx, "n").Result(); n != 43 {
		t.Fatalf("RESP INCR after HTTP incr: %d", n)
	}
	// A DEL over the frame front is seen by the others.
	if st, _ := fc.do(t, frameDel("from-http")); st != 0 {
		t.Fatalf("frame DEL status %d", st)
	}
	if n, _ := rdb.Exists(ctx, "from-http").Result(); n != 0 {
		t.Fatal("RESP still sees a key the frame front deleted")
	}
}

// TestHTTPRequirePass: with requirepass no key can be read or written
// over HTTP without the password, given as Bearer or Basic with any user.
func TestHTTPRequirePass(t *testing.T) {
	f := startFronts(t, kv.Options{RequirePass: "s3cret"}, eventloop.Options{}, "")
	c := &http.Client{Timeout: 5 * time.Second}
	f.store.Set(nil, []byte("secret-key"), []byte("secret-value"), storeSetOptions())
	base := "http://" + f.http
	basic := func(user, pass string) string {
		return "Basic " + base64Std(user+":"+pass)
	}
	for _, tc := range []struct {
		name string
		hdr  []string
	}{
		{"no header", nil},
		{"wrong bearer", []string{"Authorization", "Bearer nope"}},
		{"bearer prefix", []string{"Authorization", "Bearer s3cre"}},
		{"wrong basic", []string{"Authorization", basic("default", "nope")}},
		{"basic no colon", []string{"Authorization", "Basic " + base64Std("s3cret")}},
		{"garbage basic", []string{"Authorization", "Basic %%%"}},
		{"other scheme", []string{"Authorization", "Digest s3cret"}},
	} {
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/kv/secret-key", ""}, {"HEAD", "/kv/secret-key", ""}, {"PUT", "/kv/secret-key", "overwritten"},
			{"DELETE", "/kv/secret-key", ""}, {"POST", "/kv/n/incr", ""}, {"GET", "/metrics", ""},
		} {
			resp, body := httpDo(t, c, r.method, base+r.path, r.body, tc.hdr...)
			if resp.StatusCode != 401 || strings.Contains(body, "secret-value") || resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("%s: %s %s: %d %q, want 401 with a challenge", tc.name, r.method, r.path, resp.StatusCode, body)
			}
		}
	}
	if v, _, _ := f.store.Get(nil, []byte("secret-key")); string(v) != "secret-value" {
		t.Fatalf("an unauthenticated request changed the key: %q", v)
	}
	if n, _, _ := f.store.Get(nil, []byte("n")); n != nil {
		t.Fatalf("an unauthenticated incr created n = %q", n)
	}
	// /healthz stays open for probes.
	if resp, _ := httpDo(t, c, "GET", base+"/healthz", ""); resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	for _, hdr := range [][]string{{"Authorization", "Bearer s3cret"}, {"Authorization", basic("anyone", "s3cret")}, {"authorization", "bearer s3cret"}} {
		if resp, body := httpDo(t, c, "GET", base+"/kv/secret-key", "", hdr...); resp.StatusCode != 200 || body != "secret-value" {
			t.Fatalf("%v: %d %q", hdr, resp.StatusCode, body)
		}
	}
	// CONFIG SET requirepass over RESP applies to HTTP at once.
	admin := dialRaw(t, f.resp)
	admin.Do("AUTH", "s3cret")
	if r := admin.Do("CONFIG", "SET", "requirepass", "new"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if resp, _ := httpDo(t, c, "GET", base+"/kv/secret-key", "", "Authorization", "Bearer s3cret"); resp.StatusCode != 401 {
		t.Fatalf("old password after CONFIG SET: %d", resp.StatusCode)
	}
	if resp, _ := httpDo(t, c, "GET", base+"/kv/secret-key", "", "Authorization", "Bearer new"); resp.StatusCode != 200 {
		t.Fatalf("new password: %d", resp.StatusCode)
	}
	admin.Do("CONFIG", "SET", "requirepass", "")
	if resp, _ := httpDo(t, c, "GET", base+"/kv/secret-key", ""); resp.StatusCode != 200 {
		t.Fatalf("no password after requirepass was cleared: %d", resp.StatusCode)
	}
}
