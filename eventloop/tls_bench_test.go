package eventloop

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"testing"
)

// BenchmarkIdleTLSConnMemory reports the server's resident memory per idle
// connection with 10,000 connections held by a child process, plain and
// TLS (each TLS connection finished its handshake and one request), and
// the difference: what TLS costs an idle connection. crypto/tls would
// keep read and handshake buffers sized by the ClientHello, which
// depends on the client: "go" is Go's default client (a post-quantum key
// share makes its ClientHello about 1.8 KB), "x25519" a client that
// offers X25519 alone (about 0.3 KB, as OpenSSL 3.0's redis-cli). The
// loop drops them (tls_buffers.go), so both should cost the same.
//
//	go test ./eventloop -run '^$' -bench IdleTLSConnMemory -benchtime 1x
func BenchmarkIdleTLSConnMemory(b *testing.B) {
	const n = 10000
	measure := func(b *testing.B, mode string, s *Server, args ...string) float64 {
		before := rssBytes(b)
		cmd, stdin, out := startChild(b, mode, append([]string{s.Addr().String(), strconv.Itoa(n)}, args...)...)
		if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
			b.Fatalf("child: %q %v", line, err)
		}
		waitFor(b, "connections registered", func() bool { return s.NumConns() == n })
		after := rssBytes(b)
		stdin.Close()
		cmd.Wait()
		return float64(after-before) / n
	}
	ts := newTLSSetup(b)
	for _, curves := range []string{"go", "x25519"} {
		b.Run(curves, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s := startServer(b, pingHandler{}, Options{})
				plain := measure(b, "idle", s)
				s.Shutdown(context.Background())
				s = startServer(b, pingHandler{}, Options{TLSConfig: ts.server})
				withTLS := measure(b, "idletls", s, curves)
				s.Shutdown(context.Background())
				b.ReportMetric(plain, "B/conn-plain")
				b.ReportMetric(withTLS, "B/conn-tls")
				b.ReportMetric(withTLS-plain, "B/conn-tls-extra")
			}
		})
	}
}

// childIdleTLS opens n TLS connections (offering only X25519 if asked), sends one PING on each and reads
// the reply, reports "ready", and holds them until stdin closes.
func childIdleTLS() int {
	a := childArgs()
	n, _ := strconv.Atoi(a[1])
	cfg := &tls.Config{InsecureSkipVerify: true, ClientSessionCache: tls.NewLRUClientSessionCache(1)}
	if len(a) > 2 && a[2] == "x25519" {
		cfg.CurvePreferences = []tls.CurveID{tls.X25519}
	}
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := tls.Dial("tcp", a[0], cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			return 1
		}
		fmt.Fprint(c, "PING\r\n")
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+PONG\r\n" {
			fmt.Fprintln(os.Stderr, "ping:", line, err)
			return 1
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
	return 0
}
