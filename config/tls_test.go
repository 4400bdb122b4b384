package config

import (
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/tlstest"
)

// opensslKey writes keyFile encrypted by the openssl command line with
// args (the passphrase is "s3cret") and returns the new file.
func opensslKey(t *testing.T, keyFile, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(filepath.Dir(keyFile), name+".key")
	argv := append(append([]string{}, args...), "-in", keyFile, "-out", out, "-passout", "pass:s3cret")
	if b, err := exec.Command("openssl", argv...).CombinedOutput(); err != nil {
		t.Fatalf("openssl %s: %v\n%s", strings.Join(argv, " "), err, b)
	}
	return out
}

// TestLoadTLSKeyPairDecryptsOpenSSLKeys: keys the openssl command line
// encrypts, in the forms and with the ciphers and PRFs it offers, load
// with the passphrase and are refused with a reason without it, with a
// wrong one, or in a scheme not supported.
func TestLoadTLSKeyPairDecryptsOpenSSLKeys(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	dir := t.TempDir()
	leaf := tlstest.NewCA(t, "config test CA").Server(t, "localhost")
	certFile, keyFile := leaf.Files(t, dir, "server")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"pkcs8 aes256 (openssl pkey's default)", []string{"pkey", "-aes256"}},
		{"pkcs8 aes128 sha512", []string{"pkcs8", "-topk8", "-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA512"}},
		{"pkcs8 aes192 sha1", []string{"pkcs8", "-topk8", "-v2", "aes-192-cbc", "-v2prf", "hmacWithSHA1"}},
		{"pkcs8 des3", []string{"pkcs8", "-topk8", "-v2", "des3"}},
		{"traditional pem aes256", []string{"ec", "-aes256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := opensslKey(t, keyFile, strings.ReplaceAll(tc.name, " ", "-"), tc.args...)
			cert, err := LoadTLSKeyPair(certFile, enc, "s3cret")
			if err != nil {
				t.Fatalf("with the passphrase: %v", err)
			}
			if !cert.Leaf.Equal(leaf.TLS.Leaf) {
				t.Fatal("loaded another certificate")
			}
			if _, err := LoadTLSKeyPair(certFile, enc, "wrong"); err == nil || !strings.Contains(err.Error(), "wrong passphrase") {
				t.Fatalf("with a wrong passphrase: %v, want an error that says so", err)
			}
			if _, err := LoadTLSKeyPair(certFile, enc, ""); err == nil || !strings.Contains(err.Error(), "encrypted and no passphrase is set") {
				t.Fatalf("without a passphrase: %v, want an error that says so", err)
			}
		})
	}
	if _, err := LoadTLSKeyPair(certFile, keyFile, "unused"); err != nil {
		t.Fatalf("a key that is not encrypted, with a passphrase (OpenSSL ignores it): %v", err)
	}
	scrypt := opensslKey(t, keyFile, "scrypt", "pkcs8", "-topk8", "-scrypt")
	if _, err := LoadTLSKeyPair(certFile, scrypt, "s3cret"); err == nil || !strings.Contains(err.Error(), "scrypt") {
		t.Fatalf("an scrypt-derived key: %v, want a refusal naming scrypt", err)
	}
	garbage := filepath.Join(dir, "garbage.key")
	os.WriteFile(garbage, []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n"), 0o600)
	if _, err := LoadTLSKeyPair(certFile, garbage, "s3cret"); err == nil {
		t.Fatal("a malformed encrypted key loaded")
	}
}

// TestTLSCipherSuitesAsOpenSSL: tls-ciphersuites is checked as OpenSSL's
// SSL_CTX_set_ciphersuites checks it (unknown names skipped, one known
// name needed); a list of suites Go lacks is refused.
func TestTLSCipherSuitesAsOpenSSL(t *testing.T) {
	for _, tc := range []struct {
		v       string
		unknown []string
		err     string
	}{
		{"", nil, ""},
		{"TLS_AES_256_GCM_SHA384", nil, ""},
		{"TLS_AES_256_GCM_SHA384:FOO", []string{"FOO"}, ""},
		{"TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256", nil, ""},
		{"FOO", nil, "no TLS 1.3 cipher suite known"},
		{"ECDHE-RSA-AES128-GCM-SHA256", nil, "no TLS 1.3 cipher suite known"},
		{"TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256", nil, "implements none of these"},
	} {
		unknown, err := TLSCipherSuites(tc.v)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: error %v, want %q", tc.v, err, tc.err)
		}
		if strings.Join(unknown, ",") != strings.Join(tc.unknown, ",") {
			t.Errorf("%q: unknown %q, want %q", tc.v, unknown, tc.unknown)
		}
	}
}

// TestTLSClientConfigPresentsItsCertificate: a server that asks for a
// client certificate gets TLSClientConfig's, which is
// tls-client-cert-file's when set and the server's own otherwise, and
// which verifies the server against the CA.
func TestTLSClientConfigPresentsItsCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "config test CA")
	caFile := ca.File(t, dir, "ca")
	serverCert, serverKey := ca.Server(t, "localhost", "127.0.0.1").Files(t, dir, "server")
	clientCert, clientKey := ca.Client(t, "the client").Files(t, dir, "client")
	settings := map[string]string{"tls-cert-file": serverCert, "tls-key-file": serverKey, "tls-ca-cert-file": caFile}
	get := func(name string) string { return settings[name] }

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{ca.Server(t, "127.0.0.1").TLS},
		ClientAuth:   tls.RequireAnyClientCert, // the server's own certificate is not for client auth
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peers := make(chan string, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			if tc.Handshake() == nil {
				peers <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
			} else {
				peers <- ""
			}
			c.Close()
		}
	}()
	presented := func() string {
		t.Helper()
		cfg, err := TLSClientConfig(get)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ServerName = "127.0.0.1"
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		return <-peers
	}
	if cn := presented(); cn != "localhost" {
		t.Fatalf("without tls-client-cert-file the client presented %q, want the server's certificate (localhost)", cn)
	}
	settings["tls-client-cert-file"], settings["tls-client-key-file"] = clientCert, clientKey
	if cn := presented(); cn != "the client" {
		t.Fatalf("with tls-client-cert-file the client presented %q, want \"the client\"", cn)
	}
	delete(settings, "tls-ca-cert-file")
	if _, err := TLSClientConfig(get); err == nil || !strings.Contains(err.Error(), "tls-ca-cert-file") {
		t.Fatalf("without CAs: %v, want an error naming tls-ca-cert-file", err)
	}
}
