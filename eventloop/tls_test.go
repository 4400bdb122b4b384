package eventloop

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/tlstest"
)

// tlsSetup is a CA, a server config with a certificate it signed for
// 127.0.0.1 and localhost, and a client config that trusts the CA.
type tlsSetup struct {
	ca     *tlstest.CA
	server *tls.Config
	client *tls.Config
}

func newTLSSetup(t testing.TB) *tlsSetup {
	ca := tlstest.NewCA(t, "eventloop test CA")
	leaf := ca.Server(t, "localhost", "127.0.0.1")
	return &tlsSetup{ca: ca,
		server: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}},
		client: &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}}
}

// testTLS returns a server config and a client config that trusts it, made
// once per test binary: the conformance suite's "native-tls" engine uses
// them (dial).
func testTLS(t testing.TB) (server, client *tls.Config) {
	testTLSOnce.Do(func() { testTLSSetup = newTLSSetup(t) })
	return testTLSSetup.server, testTLSSetup.client
}

var (
	testTLSOnce  sync.Once
	testTLSSetup *tlsSetup
)

// dialTLS connects to s's first address with cfg and finishes the handshake.
func dialTLS(t testing.TB, s *Server, cfg *tls.Config) *tls.Conn {
	t.Helper()
	a := s.Addrs()[0]
	c, err := tlsDialNetwork(a.Network(), a.String(), cfg)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func tlsDial(addr string, cfg *tls.Config) (*tls.Conn, error) {
	return tlsDialNetwork("tcp", addr, cfg)
}

func tlsDialNetwork(network, addr string, cfg *tls.Config) (*tls.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, network, addr, cfg)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return c, nil
}

// tlsCounters sums the loops' TLS counters.
func tlsCounters(s *Server) (k LoopCounters) {
	for _, c := range s.Counters() {
		k.TLSHandshakes += c.TLSHandshakes
		k.TLSResumed += c.TLSResumed
		k.TLSHandshakeFailures += c.TLSHandshakeFailures
		k.TLSHandshakeTimeouts += c.TLSHandshakeTimeouts
		k.TLSRecordErrors += c.TLSRecordErrors
	}
	return k
}

func TestTLSEcho(t *testing.T) {
	ts := newTLSSetup(t)
	h := &lineEcho{}
	s := startServer(t, h, Options{Addr: "127.0.0.1:0", Loops: 2, TLSConfig: ts.server})
	c := dialTLS(t, s, ts.client)
	r := bufio.NewReader(c)
	fmt.Fprint(c, "hello\nwor")
	fmt.Fprint(c, "ld\n")
	for _, want := range []string{"hello\n", "world\n"} {
		got, err := r.ReadString('\n')
		if err != nil || got != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	if k := tlsCounters(s); k.TLSHandshakes != 1 || k.TLSHandshakeFailures != 0 {
		t.Fatalf("counters %+v: want one handshake and no failure", k)
	}
	c.Close()
	if err := h.WaitClose(t); err != nil {
		t.Fatalf("OnClose after the client's close_notify: %v, want nil", err)
	}
}

// TestTLSPipelineBothWays sends a megabyte of lines in one go and reads
// the echo: many records each way, partial writes, the backlog, and
// backpressure (small high-water marks) on ciphertext.
func TestTLSPipelineBothWays(t *testing.T) {
	ts := newTLSSetup(t)
	s := startServer(t, &lineEcho{}, Options{Addr: "127.0.0.1:0", Loops: 1, TLSConfig: ts.server,
		OutputHighWater: 64 << 10, OutputLowWater: 16 << 10})
	c := dialTLS(t, s, ts.client)
	req := numberedLines("line %07d of the pipeline that goes both ways\n", 20000)
	go func() { c.Write(req) }()
	got := make([]byte, len(req))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read the echo: %v", err)
	}
	if !bytes.Equal(got, req) {
		t.Fatal("the echo differs from what was sent")
	}
}

// TestTLSRepliesAreBatchedIntoFullRecords: replies to one read are sealed
// together at the flush, so a hundred small replies leave in one record,
// not a hundred.
func TestTLSRepliesAreBatchedIntoFullRecords(t *testing.T) {
	ts := newTLSSetup(t)
	s := startServer(t, &lineEcho{}, Options{Addr: "127.0.0.1:0", Loops: 1, TLSConfig: ts.server})
	raw, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	counter := &recordCounter{Conn: raw}
	c := tls.Client(counter, ts.client)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(c, "warm\n") // the client reads the session tickets with the reply
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	req := numberedLines("%03d\n", 100)
	counter.reset()
	c.Write(req)
	got := make([]byte, len(req))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, req) {
		t.Fatalf("echo %q, %v", got, err)
	}
	if n := counter.records(); n != 1 {
		t.Fatalf("100 replies to one request batch came in %d records, want 1", n)
	}
}

// recordCounter counts the TLS records read through it.
type recordCounter struct {
	net.Conn
	mu   sync.Mutex
	buf  []byte
	seen int
}

func (r *recordCounter) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.mu.Lock()
	r.buf = append(r.buf, p[:n]...)
	for len(r.buf) >= 5 {
		size := 5 + (int(r.buf[3])<<8 | int(r.buf[4]))
		if len(r.buf) < size {
			break
		}
		r.buf = r.buf[size:]
		r.seen++
	}
	r.mu.Unlock()
	return n, err
}

func (r *recordCounter) reset() {
	r.mu.Lock()
	r.seen = 0
	r.mu.Unlock()
}

func (r *recordCounter) records() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

func TestTLSSessionResumption(t *testing.T) {
	ts := newTLSSetup(t)
	s := startServer(t, &lineEcho{}, Options{Addr: "127.0.0.1:0", Loops: 2, TLSConfig: ts.server})
	cfg := ts.client.Clone()
	cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	for i, wantResumed := range []bool{false, true} {
		c := dialTLS(t, s, cfg)
		fmt.Fprint(c, "x\n") // reading the reply also reads the ticket
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		if got := c.ConnectionState().DidResume; got != wantResumed {
			t.Fatalf("connection %d: DidResume %v, want %v", i, got, wantResumed)
		}
		c.Close()
	}
	waitFor(t, "the resumption counted", func() bool { return tlsCounters(s).TLSResumed == 1 })
}

// stateHandler answers each line with what TLSConnectionState reports.
type stateHandler struct{ closeLog }

func (*stateHandler) OnTraffic(c *Conn, in []byte) int {
	return eachLine(in, func([]byte) bool {
		st, ok := c.TLSConnectionState()
		peer := ""
		if len(st.PeerCertificates) > 0 {
			peer = st.PeerCertificates[0].Subject.CommonName
		}
		fmt.Fprintf(c, "%v alpn=%s sni=%s peer=%s\n", ok, st.NegotiatedProtocol, st.ServerName, peer)
		return true
	})
}

func askState(t *testing.T, c *tls.Conn) string {
	t.Helper()
	fmt.Fprint(c, "?\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

func TestTLSALPNSNIAndClientCertificates(t *testing.T) {
	ts := newTLSSetup(t)
	other := tlstest.NewCA(t, "other CA")
	srv := ts.server.Clone()
	srv.NextProtos = []string{"h2", "redis"}
	srv.ClientAuth = tls.VerifyClientCertIfGiven
	srv.ClientCAs = ts.ca.Pool
	alt := ts.ca.Server(t, "alt.example")
	srv.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		if hello.ServerName != "alt.example" {
			return nil, nil
		}
		if hello.Conn.RemoteAddr() == nil {
			return nil, errors.New("no remote address in ClientHelloInfo")
		}
		c := srv.Clone()
		c.GetConfigForClient = nil
		c.Certificates = []tls.Certificate{alt.TLS}
		return c, nil
	}
	s := startServer(t, &stateHandler{}, Options{Addr: "127.0.0.1:0", Loops: 1, TLSConfig: srv})

	cfg := ts.client.Clone()
	cfg.NextProtos = []string{"redis"}
	cfg.Certificates = []tls.Certificate{ts.ca.Client(t, "alice").TLS}
	if got, want := askState(t, dialTLS(t, s, cfg)), "true alpn=redis sni=localhost peer=alice"; got != want {
		t.Fatalf("state %q, want %q", got, want)
	}

	sni := ts.client.Clone()
	sni.ServerName = "alt.example"
	c := dialTLS(t, s, sni)
	if got := c.ConnectionState().PeerCertificates[0].DNSNames[0]; got != "alt.example" {
		t.Fatalf("SNI alt.example got the certificate for %q", got)
	}
	if got, want := askState(t, c), "true alpn= sni=alt.example peer="; got != want {
		t.Fatalf("state %q, want %q", got, want)
	}

	// A certificate from a CA the server does not trust, or an expired
	// one: the handshake fails, the Handler never hears of it, a counter
	// does.
	expectCertRejected(t, s, ts.client, other.Client(t, "mallory").TLS)
	waitFor(t, "the failed handshake counted", func() bool { return tlsCounters(s).TLSHandshakeFailures == 1 })
	expectCertRejected(t, s, ts.client, ts.ca.ExpiredClient(t, "late").TLS)
	waitFor(t, "the second failed handshake counted", func() bool { return tlsCounters(s).TLSHandshakeFailures == 2 })
}

// expectCertRejected connects to s presenting cert and expects the server
// to refuse it. (The client's Certificates would not be sent if the server
// does not name its CA, so it is handed over unasked.)
func expectCertRejected(t *testing.T, s *Server, base *tls.Config, cert tls.Certificate) {
	t.Helper()
	cfg := base.Clone()
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	c, err := tlsDial(s.Addrs()[0].String(), cfg)
	if err == nil {
		// TLS 1.3: the client learns of the rejection on its first read.
		fmt.Fprint(c, "?\n")
		_, err = c.Read(make([]byte, 1))
		c.Close()
	}
	if err == nil {
		t.Fatalf("the client certificate for %s was accepted", cert.Leaf.Subject.CommonName)
	}
}

// TestTLSCertificateReload: GetCertificate is asked at each handshake, so
// a certificate swapped in while the server runs serves the next
// connection, without a restart.
func TestTLSCertificateReload(t *testing.T) {
	ts := newTLSSetup(t)
	var current atomic.Pointer[tls.Certificate]
	first := ts.ca.Server(t, "localhost").TLS
	current.Store(&first)
	srv := &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return current.Load(), nil }}
	s := startServer(t, &lineEcho{}, Options{Addr: "127.0.0.1:0", Loops: 1, TLSConfig: srv})
	serial := func() string {
		c := dialTLS(t, s, ts.client)
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	before := serial()
	second := ts.ca.Server(t, "localhost").TLS
	current.Store(&second)
	after := serial()
	if before == after {
		t.Fatalf("still serial %s after the reload", before)
	}
	if after != second.Leaf.SerialNumber.String() {
		t.Fatalf("serial %s, want the new certificate's %s", after, second.Leaf.SerialNumber)
	}
}

// TestTLSMaxConnsCloses: past MaxConns a TLS port closes the connection
// without the plaintext RejectMessage, and Rejected counts it.
func TestTLSMaxConnsCloses(t *testing.T) {
	ts := newTLSSetup(t)
	s := startServer(t, &lineEcho{}, Options{Addr: "127.0.0.1:0", MaxConns: 1, TLSConfig: ts.server,
		RejectMessage: []byte("-ERR max number of clients reached\r\n")})
	first := dialTLS(t, s, ts.client)
	first.Write([]byte("a\n"))
	readN(t, first, 2)
	second := dialRaw(t, s)
	if got := readToEOF(t, second); len(got) != 0 {
		t.Fatalf("the rejected connection got %q, want nothing", got)
	}
	if n := s.Rejected(); n != 1 {
		t.Fatalf("Rejected %d, want 1", n)
	}
}
