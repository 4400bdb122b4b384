package server_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/tlstest"
	"github.com/shoalkv/shoal/kv"
)

// TestMetricsCountTLSHandshakes: with the RESP port on TLS, /metrics
// counts a handshake that succeeded and one that failed (plaintext on the
// TLS port), per loop and result.
func TestMetricsCountTLSHandshakes(t *testing.T) {
	ca := tlstest.NewCA(t, "metrics CA")
	leaf := ca.Server(t, "127.0.0.1")
	f := startFronts(t, kv.Options{}, eventloop.Options{TLSConfig: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}}}, "")
	c, err := tls.Dial("tcp", f.resp, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprint(c, "PING\r\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING over TLS: %q %v", line, err)
	}
	raw, err := net.Dial("tcp", f.resp)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	fmt.Fprint(raw, "PING\r\n")
	raw.SetReadDeadline(time.Now().Add(20 * time.Second))
	if got, _ := io.ReadAll(raw); len(got) != 0 {
		t.Fatalf("plaintext PING on the TLS port got %q, want a close", got)
	}
	total := func(result string) float64 {
		_, fams := scrape(t, f.http)
		return value(fams, "shoal_loop_tls_handshakes_total", "loop", "0", "result", result) +
			value(fams, "shoal_loop_tls_handshakes_total", "loop", "1", "result", result)
	}
	if ok, failed := total("ok"), total("failed"); ok != 1 || failed != 1 {
		t.Fatalf("/metrics counts %v handshakes ok and %v failed, want 1 and 1", ok, failed)
	}
}
