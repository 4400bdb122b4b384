package eventloop

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// clientHello returns the first flight of a Go TLS client: one record
// holding its ClientHello.
func clientHello(t testing.TB) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer b.Close()
	go func() {
		defer a.Close()
		tls.Client(a, &tls.Config{InsecureSkipVerify: true, ServerName: "localhost"}).Handshake()
	}()
	buf := make([]byte, 64<<10)
	b.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := b.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// expectClosed reads c until the server closes it (EOF or a reset),
// discarding what it sent (an alert, a server flight).
func expectClosed(t testing.TB, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server did not close the connection")
	}
}

// TestTLSBadInputClosesCleanly: what a TLS port must survive, each a clean
// close and a counter, the Handler never told, the loop serving on.
func TestTLSBadInputClosesCleanly(t *testing.T) {
	ts := newTLSSetup(t)
	hello := clientHello(t)
	cases := []struct {
		name  string
		send  []byte
		after func(k LoopCounters) bool
	}{
		{"plaintext", []byte("PING\r\n"), nil},
		{"http", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), nil},
		{"sslv2 hello", []byte{0x80, 0x2e, 0x01, 0x00, 0x02}, nil},
		{"oversize first record", []byte{0x16, 0x03, 0x01, 0xff, 0xff, 0x01}, nil},
		{"garbage record", append([]byte{0x16, 0x03, 0x01, 0x00, 0x10}, make([]byte, 16)...), nil},
		{"half a ClientHello", hello[:len(hello)/2], func(k LoopCounters) bool { return k.TLSHandshakeTimeouts == 1 }},
		{"a ClientHello, then silence", hello, func(k LoopCounters) bool { return k.TLSHandshakeTimeouts == 1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &lineEcho{}
			s := startServer(t, h, Options{Addr: "127.0.0.1:0", Loops: 1, TLSConfig: ts.server, TLSHandshakeTimeout: 500 * time.Millisecond})
			c := dialRaw(t, s)
			c.Write(tc.send)
			expectClosed(t, c)
			waitFor(t, "the failure counted", func() bool {
				k := tlsCounters(s)
				return k.TLSHandshakeFailures == 1 && (tc.after == nil || tc.after(k))
			})
			h.mu.Lock()
			opened, closed := h.opened, len(h.closed)
			h.mu.Unlock()
			if opened != 0 || closed != 0 {
				t.Fatalf("the Handler saw %d opens and %d closes of a connection that never finished its handshake", opened, closed)
			}
			// The loop serves on.
			ok := dialTLS(t, s, ts.client)
			ok.Write([]byte("still here\n"))
			if got := string(readN(t, ok, 11)); got != "still here\n" {
				t.Fatalf("after the bad input, echo %q", got)
			}
		})
	}
}

// TestTLSBadRecordsAfterTheHandshake: an oversize record, or one that does
// not decrypt, closes the connection with ErrTLSRecord and a counter.
func TestTLSBadRecordsAfterTheHandshake(t *testing.T) {
	ts := newTLSSetup(t)
	for name, record := range map[string][]byte{
		"oversize":      {0x17, 0x03, 0x03, 0xff, 0xff},
		"does not open": append([]byte{0x17, 0x03, 0x03, 0x00, 0x20}, make([]byte, 32)...),
	} {
		t.Run(name, func(t *testing.T) {
			h := &lineEcho{}
			s := startServer(t, h, Options{Addr: "127.0.0.1:0", Loops: 1, TLSConfig: ts.server})
			raw := dialRaw(t, s)
			c := tls.Client(raw, ts.client)
			c.SetDeadline(time.Now().Add(30 * time.Second))
			if err := c.Handshake(); err != nil {
				t.Fatal(err)
			}
			raw.Write(record)
			expectClosed(t, raw)
			if err := h.WaitClose(t); !errors.Is(err, ErrTLSRecord) {
				t.Fatalf("OnClose got %v, want ErrTLSRecord", err)
			}
			if k := tlsCounters(s); k.TLSRecordErrors != 1 {
				t.Fatalf("TLSRecordErrors %d, want 1", k.TLSRecordErrors)
			}
		})
	}
}

// TestTLSHandshakeFloodIsBounded: peers that send a ClientHello and then
// nothing hold a handshake goroutine each until the timeout; no more than
// MaxTLSHandshakes run at once, the rest wait their turn, and a real
// client still gets through once the flood's handshakes time out.
func TestTLSHandshakeFloodIsBounded(t *testing.T) {
	ts := newTLSSetup(t)
	hello := clientHello(t)
	const flood = 12
	s := startServer(t, &lineEcho{}, Options{Addr: "127.0.0.1:0", Loops: 2, TLSConfig: ts.server,
		MaxTLSHandshakes: 2, TLSHandshakeTimeout: 300 * time.Millisecond})
	var conns []net.Conn
	for i := 0; i < flood; i++ {
		c := dialRaw(t, s)
		c.Write(hello)
		conns = append(conns, c)
	}
	for _, c := range conns {
		expectClosed(t, c)
	}
	waitFor(t, "every flood connection timed out", func() bool { return tlsCounters(s).TLSHandshakeTimeouts == flood })
	s.handshakes.mu.Lock()
	peak := s.handshakes.peak
	s.handshakes.mu.Unlock()
	if peak > 2 {
		t.Fatalf("%d handshakes ran at once, MaxTLSHandshakes is 2", peak)
	}
	c := dialTLS(t, s, ts.client)
	c.Write([]byte("hi\n"))
	if got := string(readN(t, c, 3)); got != "hi\n" {
		t.Fatalf("echo %q", got)
	}
	waitFor(t, "the handshake goroutines ended", func() bool {
		s.handshakes.mu.Lock()
		defer s.handshakes.mu.Unlock()
		return s.handshakes.running == 0 && len(s.handshakes.queue) == 0
	})
}
