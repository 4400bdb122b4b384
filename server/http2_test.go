package server_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// h2cClient is Go's HTTP/2 client speaking h2c with prior knowledge
// (net/http's, which x/net/http2's Transport now defers to).
func h2cClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

// h2Do runs one request and returns the status, body and response.
func h2Do(t *testing.T, c *http.Client, method, u, body string, hdr ...string) (*http.Response, string) {
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
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, u, err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("%s %s answered over %s", method, u, resp.Proto)
	}
	return resp, string(b)
}

// TestH2CAPI: the /kv API, /healthz and /metrics over h2c with prior
// knowledge answer as over HTTP/1.1, on one connection.
func TestH2CAPI(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	c := h2cClient()
	base := "http://" + f.http
	steps := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"PUT", "/kv/greeting", "hello", 204, ""},
		{"GET", "/kv/greeting", "", 200, "hello"},
		{"HEAD", "/kv/greeting", "", 200, ""},
		{"GET", "/kv/missing", "", 404, "no such key\n"},
		{"POST", "/kv/n/incr?by=5", "", 200, "5"},
		{"POST", "/kv/greeting/incr", "", 409, "ERR value is not an integer or out of range\n"},
		{"PATCH", "/kv/greeting", "", 405, "method \"PATCH\" not allowed; allowed: GET, HEAD, PUT, DELETE\n"},
		{"GET", "/nope", "", 404, "not found: \"/nope\"\n"},
		{"GET", "/healthz", "", 200, "ok\n"},
		{"DELETE", "/kv/greeting", "", 204, ""},
		{"DELETE", "/kv/greeting", "", 404, "no such key\n"},
	}
	for _, s := range steps {
		resp, body := h2Do(t, c, s.method, base+s.path, s.body)
		if resp.StatusCode != s.code || body != s.want {
			t.Fatalf("%s %s: %d %q, want %d %q", s.method, s.path, resp.StatusCode, body, s.code, s.want)
		}
		if s.method == "HEAD" && resp.ContentLength != 5 {
			t.Fatalf("HEAD: Content-Length %d, want 5", resp.ContentLength)
		}
	}
	resp, body := h2Do(t, c, "GET", base+"/metrics", "")
	if resp.StatusCode != 200 || !strings.Contains(body, "shoal_") {
		t.Fatalf("/metrics: %d %.200q", resp.StatusCode, body)
	}
}

// TestH2CCurlPriorKnowledge: curl --http2-prior-knowledge, the issue's
// client, writes and reads a key, and a value larger than curl's window
// (over 1 MiB) arrives whole: the response waits for WINDOW_UPDATEs.
func TestH2CCurlPriorKnowledge(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	base := "http://" + f.http + "/kv/"
	big := strings.Repeat("0123456789abcdef", 200<<10) // 3.2 MB
	if _, _, _, err := f.store.Set(nil, []byte("big"), []byte(big), store.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, body := curl(t, "--http2-prior-knowledge", "-X", "PUT", "--data-binary", "hi", base+"k"); code != 204 || body != "" {
		t.Fatalf("PUT: %d %q", code, body)
	}
	if code, body := curl(t, "--http2-prior-knowledge", base+"k"); code != 200 || body != "hi" {
		t.Fatalf("GET: %d %q", code, body)
	}
	code, body := curl(t, "--http2-prior-knowledge", "-w", "\n%{http_version}%{http_code}", base+"big")
	if code != 2200 || body != big { // HTTP version 2, status 200
		t.Fatalf("GET big: %d, %d bytes (want %d and HTTP version 2)", code, len(body), len(big))
	}
}

// TestH2LargeBodiesBothWays: a PUT larger than the stream and connection
// windows (the client waits for this side's WINDOW_UPDATEs) and a GET
// larger than the client's (this side waits for the client's), several
// at once on one connection.
func TestH2LargeBodiesBothWays(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	c := h2cClient()
	base := "http://" + f.http + "/kv/"
	vals := make([]string, 8)
	for i := range vals {
		vals[i] = strings.Repeat(string(rune('a'+i)), 1<<20+i*100001)
	}
	done := make(chan error, len(vals))
	for i, v := range vals {
		go func() {
			req, _ := http.NewRequest("PUT", base+"v"+strconv.Itoa(i), strings.NewReader(v))
			resp, err := c.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 204 {
					err = fmt.Errorf("PUT v%d: %d", i, resp.StatusCode)
				}
			}
			done <- err
		}()
	}
	for range vals {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range vals {
		go func() {
			resp, err := c.Get(base + "v" + strconv.Itoa(i))
			if err != nil {
				done <- err
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && string(b) != v {
				err = fmt.Errorf("GET v%d: %d bytes, want %d", i, len(b), len(v))
			}
			done <- err
		}()
	}
	for range vals {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestH2CountsInCommandStats: HTTP/2 requests are counted as the HTTP/1.1
// ones are: a GET as get, a failed incr as a failed incrby.
func TestH2CountsInCommandStats(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	r := dialRaw(t, f.resp)
	r.Do("SET", "a", "x")
	c := h2cClient()
	for i := 0; i < 7; i++ {
		h2Do(t, c, "GET", "http://"+f.http+"/kv/a", "")
	}
	h2Do(t, c, "POST", "http://"+f.http+"/kv/a/incr", "") // 409
	info := r.Do("INFO", "commandstats")
	if get := cmdstat(t, info, "get"); get["calls"] != 7 {
		t.Fatalf("cmdstat_get %v: want 7 HTTP/2 calls", get)
	}
	if incrby := cmdstat(t, info, "incrby"); incrby["calls"] != 1 || incrby["failed_calls"] != 1 {
		t.Fatalf("cmdstat_incrby %v", incrby)
	}
}
