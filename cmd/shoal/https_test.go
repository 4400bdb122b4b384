package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

// startHTTPS runs shoal with the HTTP front on a TLS port (the tls-*
// files of f, no client certificates) and returns the port.
func startHTTPS(t *testing.T, f *tlsFiles, more ...string) (*shoalProc, int) {
	t.Helper()
	port := freePort(t)
	p := startBinary(t, append([]string{"--engine", "native", "--http-tls-port", strconv.Itoa(port), "--tls-cert-file", f.certFile,
		"--tls-key-file", f.keyFile, "--tls-auth-clients", "no"}, more...)...)
	return p, port
}

// TestHTTPSPortNegotiatesH2AndHTTP11: --http-tls-port serves the HTTP
// front over TLS: Go's client gets HTTP/2 by ALPN, a client offering only
// http/1.1 gets HTTP/1.1, both on the keyspace the RESP port writes.
func TestHTTPSPortNegotiatesH2AndHTTP11(t *testing.T) {
	f := newTLSFiles(t)
	p, port := startHTTPS(t, f, "--requirepass", "pw")
	c := p.dial(t)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	for _, cmd := range []string{"AUTH pw\r\n", "SET k over-resp\r\n"} {
		io.WriteString(c, cmd)
		if got := string(readReply(t, c)); got != "+OK\r\n" {
			t.Fatalf("%q: %q", cmd, got)
		}
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/kv/k"
	for _, tc := range []struct {
		protos []string
		major  int
	}{{[]string{"h2", "http/1.1"}, 2}, {[]string{"http/1.1"}, 1}} {
		cfg := &tls.Config{RootCAs: f.ca.Pool, NextProtos: tc.protos}
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: tc.major == 2}}
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer pw")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%v: %v", tc.protos, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "over-resp" || resp.ProtoMajor != tc.major {
			t.Fatalf("ALPN %v: %s %d %q, want HTTP/%d 200", tc.protos, resp.Proto, resp.StatusCode, body, tc.major)
		}
		if got := resp.TLS.NegotiatedProtocol; got != tc.protos[0] {
			t.Fatalf("ALPN %v chose %q", tc.protos, got)
		}
		req, _ = http.NewRequest("GET", url, nil) // the same auth rule over either version
		resp, err = client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("ALPN %v without the password: %d", tc.protos, resp.StatusCode)
		}
	}
	p.terminate(t)
}

// TestHTTPSPortServesCurlAndH2load: curl --http2 --cacert and h2load over
// TLS, the clients.
func TestHTTPSPortServesCurlAndH2load(t *testing.T) {
	f := newTLSFiles(t)
	p, port := startHTTPS(t, f)
	base := "https://127.0.0.1:" + strconv.Itoa(port) + "/kv/"
	curlPath := redistest.Tool(t, "curl", "SHOAL_REQUIRE_CURL", "apt-get install curl")
	out, err := exec.Command(curlPath, "-sS", "--max-time", "10", "--http2", "--cacert", f.caFile, "-X", "PUT", "--data-binary", "v1",
		"-w", "%{http_version} %{http_code}", base+"c").Output()
	if err != nil || string(out) != "2 204" {
		t.Fatalf("curl --http2 PUT: %q %v", out, err)
	}
	out, err = exec.Command(curlPath, "-sS", "--max-time", "10", "--http2", "--cacert", f.caFile, base+"c").Output()
	if err != nil || string(out) != "v1" {
		t.Fatalf("curl --http2 GET: %q %v", out, err)
	}
	h2load := redistest.Tool(t, "h2load", "SHOAL_REQUIRE_H2LOAD", "apt-get install nghttp2-client")
	out, err = exec.Command(h2load, "-c", "4", "-m", "8", "-n", "2000", base+"c").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "2000 succeeded") || !strings.Contains(string(out), "h2") {
		t.Fatalf("h2load over TLS: %v\n%s", err, out)
	}
	p.terminate(t)
}

// TestHTTPSPortH2RefusesHTTP11Bytes: a client that chose h2 by ALPN and
// then sends HTTP/1.1 gets GOAWAY PROTOCOL_ERROR and a close.
func TestHTTPSPortH2RefusesHTTP11Bytes(t *testing.T) {
	f := newTLSFiles(t)
	p, port := startHTTPS(t, f)
	c, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{RootCAs: f.ca.Pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.ConnectionState().NegotiatedProtocol; got != "h2" {
		t.Fatalf("ALPN chose %q", got)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /kv/k HTTP/1.1\r\nHost: h\r\n\r\n")
	all, _ := io.ReadAll(c)
	// The server's SETTINGS, its connection WINDOW_UPDATE, then GOAWAY (type 7)
	// with PROTOCOL_ERROR (1), and the close that ended ReadAll.
	var codes []byte
	for len(all) >= 9 {
		n := 9 + (int(all[0])<<16 | int(all[1])<<8 | int(all[2]))
		if n > len(all) {
			break
		}
		if all[3] == 7 && n >= 17 {
			codes = append(codes, all[16])
		}
		all = all[n:]
	}
	if len(codes) != 1 || codes[0] != 1 {
		t.Fatalf("GOAWAY codes %v, want one PROTOCOL_ERROR", codes)
	}
	p.terminate(t)
}
