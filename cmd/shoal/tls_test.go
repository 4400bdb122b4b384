package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/tlstest"
)

// tlsFiles is a CA, a server certificate it signed for 127.0.0.1 and a
// client certificate, written to a test directory as redis-server's
// tls-* settings name them.
type tlsFiles struct {
	ca                    *tlstest.CA
	dir                   string
	caFile                string
	certFile, keyFile     string
	clientCert, clientKey string
	client                *tlstest.Leaf
}

func newTLSFiles(t *testing.T) *tlsFiles {
	t.Helper()
	f := &tlsFiles{ca: tlstest.NewCA(t, "shoal test CA"), dir: t.TempDir()}
	f.caFile = f.ca.File(t, f.dir, "ca")
	f.certFile, f.keyFile = f.ca.Server(t, "localhost", "127.0.0.1").Files(t, f.dir, "server")
	f.client = f.ca.Client(t, "client")
	f.clientCert, f.clientKey = f.client.Files(t, f.dir, "client")
	return f
}

// args are shoal's flags for a TLS port on port with these files.
func (f *tlsFiles) args(port int, more ...string) []string {
	return append([]string{"--engine", "native", "--tls-port", strconv.Itoa(port), "--tls-cert-file", f.certFile,
		"--tls-key-file", f.keyFile, "--tls-ca-cert-file", f.caFile}, more...)
}

// clientConfig trusts the CA and presents the client certificate.
func (f *tlsFiles) clientConfig() *tls.Config {
	return &tls.Config{RootCAs: f.ca.Pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{f.client.TLS}}
}

// redisCLI runs redis-cli over TLS against port with args and returns its
// output.
func (f *tlsFiles) redisCLI(t *testing.T, port int, withCert bool, args ...string) (string, error) {
	t.Helper()
	argv := []string{"--tls", "--cacert", f.caFile, "-p", strconv.Itoa(port)}
	if withCert {
		argv = append(argv, "--cert", f.clientCert, "--key", f.clientKey)
	}
	out, err := exec.Command("redis-cli", append(argv, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed", name)
	}
}

// TestTLSPortServesRedisCLI: redis-cli --tls with a client certificate
// reads and writes the same keyspace as the plaintext port; without a
// certificate (tls-auth-clients yes, the default) it is turned away.
func TestTLSPortServesRedisCLI(t *testing.T) {
	needTool(t, "redis-cli")
	f := newTLSFiles(t)
	tlsPort := freePort(t)
	p := startBinary(t, f.args(tlsPort)...)
	if out, err := f.redisCLI(t, tlsPort, true, "SET", "k", "over tls"); err != nil || out != "OK" {
		t.Fatalf("redis-cli --tls SET: %q %v", out, err)
	}
	c := p.dial(t)
	fmt.Fprint(c, "GET k\r\n")
	if got := string(readReply(t, c)); got != "$8\r\nover tls\r\n" {
		t.Fatalf("GET on the plaintext port: %q", got)
	}
	if out, err := f.redisCLI(t, tlsPort, false, "PING"); err == nil && out == "PONG" {
		t.Fatal("redis-cli without a client certificate was served; tls-auth-clients is yes")
	}
	p.terminate(t)
}

// readReply reads one short reply.
func readReply(t *testing.T, c net.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// TestTLSPortServesRedisBenchmarkAndGoRedis: redis-benchmark --tls and
// go-redis with a tls.Config, with tls-auth-clients optional (a client
// may come without a certificate).
func TestTLSPortServesRedisBenchmarkAndGoRedis(t *testing.T) {
	needTool(t, "redis-benchmark")
	f := newTLSFiles(t)
	tlsPort := freePort(t)
	p := startBinary(t, f.args(tlsPort, "--tls-auth-clients", "optional")...)
	out, err := exec.Command("redis-benchmark", "--tls", "--cacert", f.caFile, "-p", strconv.Itoa(tlsPort),
		"-t", "set,get", "-n", "2000", "-c", "10", "-P", "4", "-q").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SET:") || !strings.Contains(string(out), "GET:") {
		t.Fatalf("redis-benchmark --tls: %v\n%s", err, out)
	}
	cfg := f.clientConfig()
	cfg.Certificates = nil // optional: none is fine
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", tlsPort), TLSConfig: cfg})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := rdb.Set(ctx, "gk", strings.Repeat("v", 100000), 0).Err(); err != nil {
		t.Fatalf("go-redis SET over TLS: %v", err)
	}
	if v, err := rdb.Get(ctx, "gk").Result(); err != nil || len(v) != 100000 {
		t.Fatalf("go-redis GET over TLS: %d bytes, %v", len(v), err)
	}
	p.terminate(t)
}

// TestTLSOnlyWithPortZero: --port 0 with --tls-port serves TLS alone, as
// redis-server does; plaintext on that port is closed without a reply.
func TestTLSOnlyWithPortZero(t *testing.T) {
	f := newTLSFiles(t)
	tlsPort := freePort(t)
	startTLSOnly(t, f.args(tlsPort, "--port", "0", "--tls-auth-clients", "no")...)
	c, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tlsPort), f.clientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "PING\r\n")
	if got := string(readReply(t, c)); got != "+PONG\r\n" {
		t.Fatalf("PING over TLS: %q", got)
	}
	raw, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tlsPort))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	fmt.Fprint(raw, "PING\r\n")
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := raw.Read(make([]byte, 64)); n != 0 || err == nil {
		t.Fatalf("plaintext PING on the TLS port: %d bytes, %v; want a close", n, err)
	}
}

// startTLSOnly runs shoal with args (which set --port 0) and waits until
// the TLS port accepts connections.
func startTLSOnly(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(shoalBin, args...)
	stderr := new(logtest.Log)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	port := args[3] // after --engine native --tls-port
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			return cmd
		}
	}
	t.Fatalf("shoal did not listen on the TLS port; stderr:\n%s", stderr.String())
	return nil
}

// TestTLSCertificateReloadWithConfigSet: replacing the certificate and
// key files and CONFIG SET tls-cert-file (the same path) serves the new
// certificate from the next connection, without a restart; a file that
// does not load is refused and the old certificate stays.
func TestTLSCertificateReloadWithConfigSet(t *testing.T) {
	f := newTLSFiles(t)
	tlsPort := freePort(t)
	p := startBinary(t, f.args(tlsPort, "--tls-auth-clients", "no")...)
	serial := func() string {
		c, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tlsPort), f.clientConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	before := serial()
	c := p.dial(t)
	fmt.Fprintf(c, "CONFIG SET tls-cert-file %s\r\n", f.dir+"/missing.crt")
	if got := string(readReply(t, c)); !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file')") {
		t.Fatalf("CONFIG SET of a missing file: %q", got)
	}
	if serial() != before {
		t.Fatal("a refused reload changed the certificate")
	}
	next := f.ca.Server(t, "localhost", "127.0.0.1")
	if err := os.WriteFile(f.certFile, next.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.keyFile, next.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONFIG SET tls-cert-file %s\r\n", f.certFile)
	if got := string(readReply(t, c)); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET tls-cert-file: %q", got)
	}
	if after := serial(); after == before || after != next.TLS.Leaf.SerialNumber.String() {
		t.Fatalf("serial %s after the reload (was %s), want the new certificate's %s", after, before, next.TLS.Leaf.SerialNumber)
	}
	p.terminate(t)
}

// TestTLSSettingsAreChecked: what a TLS port cannot start with is an
// error naming the setting, before anything listens.
func TestTLSSettingsAreChecked(t *testing.T) {
	f := newTLSFiles(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "native", "--tls-port", "7000"}, "--tls-port and --http-tls-port need --tls-cert-file and --tls-key-file"},
		{[]string{"--engine", "gnet", "--tls-port", "7000"}, "--tls-port needs --engine native: the gnet engine has no TLS"},
		{[]string{"--engine", "native", "--tls-port", "7000", "--tls-cert-file", f.certFile, "--tls-key-file", f.keyFile}, "--tls-auth-clients yes needs --tls-ca-cert-file"},
		{f.args(7000, "--tls-protocols", "TLSv1.4"), "unknown protocol TLSv1.4"},
		{f.args(7000, "--tls-protocols", "TLSv1 TLSv1.3"), "without gaps"},
		{f.args(7000, "--tls-cert-file", f.dir+"/nope.crt"), "nope.crt"},
		{f.args(7000, "--tls-ciphers", "ECDHE-RSA-AES128-GCM-SHA256:RC4-MD5"), "unknown or insecure TLS 1.2 cipher suite RC4-MD5"},
		{f.args(7000, "--port", "7000"), "--tls-port 7000 and --port 7000 must differ"},
	} {
		out, err := exec.Command(shoalBin, tc.args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("shoal %s: %v, output %q; want an error with %q", strings.Join(tc.args, " "), err, out, tc.want)
		}
	}
}

// TestTLSCiphersChooseTheTLS12Suite: tls-ciphers, by OpenSSL name, is the
// suite a TLS 1.2 client gets.
func TestTLSCiphersChooseTheTLS12Suite(t *testing.T) {
	f := newTLSFiles(t)
	tlsPort := freePort(t)
	startBinary(t, f.args(tlsPort, "--tls-auth-clients", "no", "--tls-protocols", "TLSv1.2",
		"--tls-ciphers", "ECDHE-ECDSA-CHACHA20-POLY1305")...)
	c, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", tlsPort), f.clientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.ConnectionState()
	if st.Version != tls.VersionTLS12 || st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 {
		t.Fatalf("version %x suite %s, want TLS 1.2 with ECDHE-ECDSA-CHACHA20-POLY1305", st.Version, tls.CipherSuiteName(st.CipherSuite))
	}
}
