// Package tlstest makes certificates for tests: a CA, and server and
// client certificates it signs, generated when a test runs (no keys are
// committed), with ECDSA P-256 keys so that making them is quick.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority for tests.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte // the CA certificate, PEM-encoded
	Pool *x509.CertPool
}

// NewCA makes a self-signed CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), Pool: pool}
}

// Leaf is a certificate the CA signed, with its key.
type Leaf struct {
	TLS     tls.Certificate
	CertPEM []byte
	KeyPEM  []byte
}

// Server makes a server certificate for the DNS names and IP addresses in
// hosts ("localhost", "127.0.0.1").
func (ca *CA) Server(t testing.TB, hosts ...string) *Leaf {
	t.Helper()
	tmpl := &x509.Certificate{ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if len(hosts) > 0 {
		tmpl.Subject.CommonName = hosts[0]
	}
	return ca.sign(t, tmpl)
}

// Client makes a client certificate named name.
func (ca *CA) Client(t testing.TB, name string) *Leaf {
	t.Helper()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	return ca.sign(t, tmpl)
}

// ExpiredClient makes a client certificate named name that expired an
// hour ago.
func (ca *CA) ExpiredClient(t testing.TB, name string) *Leaf {
	t.Helper()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		NotBefore:   time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)}
	return ca.sign(t, tmpl)
}

func (ca *CA) sign(t testing.TB, tmpl *x509.Certificate) *Leaf {
	key := newKey(t)
	tmpl.SerialNumber = serial(t)
	if tmpl.NotAfter.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &Leaf{TLS: cert, CertPEM: certPEM, KeyPEM: keyPEM}
}

// Files writes the leaf's certificate and key into dir as name.crt and
// name.key and returns their paths.
func (l *Leaf) Files(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	write(t, certFile, l.CertPEM)
	write(t, keyFile, l.KeyPEM)
	return certFile, keyFile
}

// File writes the CA certificate into dir as name.crt and returns its path.
func (ca *CA) File(t testing.TB, dir, name string) string {
	t.Helper()
	f := filepath.Join(dir, name+".crt")
	write(t, f, ca.PEM)
	return f
}

func write(t testing.TB, path string, b []byte) {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
