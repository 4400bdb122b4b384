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
// the difference: what TLS costs an idle connection.
//
//	go test ./eventloop -run '^$' -bench IdleTLSConnMemory -benchtime 1x
func BenchmarkIdleTLSConnMemory(b *testing.B) {
	const n = 10000
	measure := func(b *testing.B, mode string, s *Server) float64 {
		before := rssBytes(b)
		cmd, stdin, out := startChild(b, mode, s.Addr().String(), strconv.Itoa(n))
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
	for i := 0; i < b.N; i++ {
		s := startServer(b, pingHandler{}, Options{})
		plain := measure(b, "idle", s)
		s.Shutdown(context.Background())
		s = startServer(b, pingHandler{}, Options{TLSConfig: ts.server})
		withTLS := measure(b, "idletls", s)
		s.Shutdown(context.Background())
		b.ReportMetric(plain, "B/conn-plain")
		b.ReportMetric(withTLS, "B/conn-tls")
		b.ReportMetric(withTLS-plain, "B/conn-tls-extra")
	}
}

// childIdleTLS opens n TLS connections, sends one PING on each and reads
// the reply, reports "ready", and holds them until stdin closes.
func childIdleTLS() int {
	a := childArgs()
	n, _ := strconv.Atoi(a[1])
	cfg := &tls.Config{InsecureSkipVerify: true, ClientSessionCache: tls.NewLRUClientSessionCache(1)}
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
