package http1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

func readResponse(t *testing.T, wire []byte, method string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(wire)), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("net/http cannot read %q: %v", wire, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body of %q: %v", wire, err)
	}
	return resp, body
}

func TestAppendResponseIsReadByNetHTTP(t *testing.T) {
	ct := Header{Name: []byte("Content-Type"), Value: []byte("text/plain")}
	cases := []struct {
		name   string
		status int
		conn   ConnHeader
		body   string
		close  bool
	}{
		{"ok keep-alive", 200, KeepAlive, "hello", false},
		{"empty body", 200, KeepAlive, "", false},
		{"not found close", 404, Close, "nope", true},
		{"1.0 keep-alive", 201, KeepAliveHTTP10, "made", false},
		{"unknown code", 299, KeepAlive, "x", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wire := AppendResponse([]byte("prefix"), nil, c.status, c.conn, []byte(c.body), ct)
			if !bytes.HasPrefix(wire, []byte("prefix")) {
				t.Fatal("dst was not appended to")
			}
			resp, body := readResponse(t, wire[len("prefix"):], "GET")
			if resp.StatusCode != c.status || string(body) != c.body || resp.Close != c.close {
				t.Fatalf("status %d body %q close %v", resp.StatusCode, body, resp.Close)
			}
			if resp.ContentLength != int64(len(c.body)) || resp.Header.Get("Content-Type") != "text/plain" {
				t.Fatalf("headers %v", resp.Header)
			}
			if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
				t.Fatalf("Date %q: %v", resp.Header.Get("Date"), err)
			}
			if c.conn == KeepAliveHTTP10 && resp.Header.Get("Connection") != "keep-alive" {
				t.Fatal("HTTP/1.0 keep-alive needs Connection: keep-alive")
			}
		})
	}
}

func TestResponsesWithoutBody(t *testing.T) {
	for _, status := range []int{100, 204, 304} {
		wire := AppendResponse(nil, nil, status, KeepAlive, []byte("dropped"))
		if bytes.Contains(wire, []byte("Content-Length")) || bytes.Contains(wire, []byte("dropped")) {
			t.Fatalf("%d: %q must carry neither Content-Length nor body", status, wire)
		}
		if !bytes.HasSuffix(wire, []byte("\r\n\r\n")) {
			t.Fatalf("%d: %q", status, wire)
		}
	}
	// A HEAD response announces the GET body's length without carrying it.
	wire := AppendResponseHead(nil, nil, 200, KeepAlive, 1234)
	resp, body := readResponse(t, wire, "HEAD")
	if resp.ContentLength != 1234 || len(body) != 0 {
		t.Fatalf("HEAD: cl=%d body=%q", resp.ContentLength, body)
	}
}

func TestAppendResponsePanicsOnInvalidStatus(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "invalid response status 42") {
			t.Fatalf("recover() = %v", r)
		}
	}()
	AppendResponse(nil, nil, 42, KeepAlive, nil)
}

func TestAppendErrorResponse(t *testing.T) {
	var req Request
	_, err := (&Parser{Limits: Limits{MaxBodyBytes: 10}}).Parse([]byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n"), &req)
	wire := AppendErrorResponse(nil, nil, err)
	resp, body := readResponse(t, wire, "POST")
	if resp.StatusCode != 413 || !resp.Close || !strings.Contains(string(body), "exceeds the body limit of 10 bytes") {
		t.Fatalf("%d close=%v %q", resp.StatusCode, resp.Close, body)
	}
	resp, _ = readResponse(t, AppendErrorResponse(nil, nil, errors.New("boom")), "GET")
	if resp.StatusCode != 500 || resp.Status != "500 Internal Server Error" {
		t.Fatal(resp.Status)
	}
}

func TestFormatDate(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 9, 2, 999, time.FixedZone("CET", 3600))
	if got := string(formatDate(at).text); got != "Date: Sun, 22 Nov 2026 08:09:02 GMT\r\n" {
		t.Fatalf("%q", got)
	}
}

// TestDateClockRefreshesBySecondUntilStopped checks that responses share one
// formatted line, that the clock's goroutine replaces it as seconds pass, and that
// Stop ends that goroutine.
func TestDateClockRefreshesBySecondUntilStopped(t *testing.T) {
	before := runtime.NumGoroutine()
	d := NewDateClock()
	first := d.line.Load()
	if second := d.AppendDate(nil); string(second) != string(first.text) || d.line.Load() != first && d.line.Load().unix == first.unix {
		t.Fatal("a response within the same second re-formatted the Date line")
	}
	deadline := time.Now().Add(10 * time.Second)
	for d.line.Load().unix == first.unix {
		if time.Now().After(deadline) {
			t.Fatal("Date line not refreshed within 10 seconds")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if l := d.line.Load(); l.unix <= first.unix || string(l.text) == string(first.text) {
		t.Fatalf("refreshed line %q for %d after %q", l.text, l.unix, first.text)
	}
	d.Stop()
	d.Stop()
	deadline = time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Stop, %d before NewDateClock", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := d.AppendDate(nil); len(got) != 37 {
		t.Fatalf("after Stop: %q", got)
	}
}

func TestNilDateClockReadsTheClock(t *testing.T) {
	var d *DateClock
	got := string(d.AppendDate(nil))
	now := time.Now()
	if got != string(formatDate(now).text) && got != string(formatDate(now.Add(-time.Second)).text) {
		t.Fatalf("nil DateClock wrote %q at %v", got, now)
	}
}

func TestDateLineConcurrentUse(t *testing.T) {
	d := NewDateClock()
	defer d.Stop()
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			var buf []byte
			for j := 0; j < 2000; j++ {
				buf = d.AppendDate(buf[:0])
				if len(buf) != 37 || !bytes.HasPrefix(buf, []byte("Date: ")) {
					t.Errorf("%q", buf)
					return
				}
			}
		}()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
}

func TestAppendRequestRoundTrip(t *testing.T) {
	var wire []byte
	wire = AppendRequest(wire, "GET", "/a?b=c", "example.com", nil, Header{Name: []byte("Accept"), Value: []byte("*/*")})
	wire = AppendRequest(wire, "POST", "/submit", "example.com:8080", []byte("payload"))
	wire = AppendRequest(wire, "PUT", "/empty", "h", []byte{})
	var p Parser
	var req Request
	want := []struct{ method, target, host, body string }{
		{"GET", "/a?b=c", "example.com", ""},
		{"POST", "/submit", "example.com:8080", "payload"},
		{"PUT", "/empty", "h", ""},
	}
	for i, w := range want {
		n, err := p.Parse(wire, &req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if string(req.Method) != w.method || string(req.Target) != w.target || string(req.Host) != w.host || string(req.Body) != w.body || req.Close {
			t.Fatalf("request %d: %q %q %q %q", i, req.Method, req.Target, req.Host, req.Body)
		}
		wire = wire[n:]
	}
	if len(wire) != 0 {
		t.Fatalf("%d bytes left", len(wire))
	}
}

func TestFieldValidators(t *testing.T) {
	if !ValidFieldName([]byte("X-Ok")) || ValidFieldName(nil) || ValidFieldName([]byte("a b")) {
		t.Fatal("ValidFieldName")
	}
	if !ValidFieldValue([]byte("a b\tc\xff")) || ValidFieldValue([]byte("a\r\nX: y")) {
		t.Fatal("ValidFieldValue")
	}
}

func TestStatusTextKnowsInsufficientStorage(t *testing.T) {
	out := string(AppendResponse(nil, nil, 507, KeepAlive, nil))
	if !strings.HasPrefix(out, "HTTP/1.1 507 Insufficient Storage\r\n") {
		t.Fatalf("status line of %q", out)
	}
}
