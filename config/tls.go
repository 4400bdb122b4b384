package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The tls-* settings as crypto/tls configurations. cmd/shoal builds the
// TLS port's server config from them (and rebuilds it on CONFIG SET);
// TLSClientConfig is the config for Shoal's own outgoing TLS connections,
// for whoever dials out (a replica to its primary with tls-replication,
// MIGRATE and the cluster bus with tls-cluster). The functions take a
// getter, not a Table, so that a CONFIG SET can build a candidate from
// the values as they would be before it applies them.

// TLSClientConfig returns the config Shoal presents when it connects out
// over TLS, as redis-server's client context: the certificate of
// tls-client-cert-file and tls-client-key-file (tls-client-key-file-pass
// if the key is encrypted), or, when those are not both set, the server's
// own of tls-cert-file and tls-key-file; the peer is verified against the
// CAs of tls-ca-cert-file and tls-ca-cert-dir, with the versions of
// tls-protocols and the TLS 1.2 suites of tls-ciphers. ServerName is left
// for the caller. get is Table.Get or a stand-in for it.
func TLSClientConfig(get func(name string) string) (*tls.Config, error) {
	cfg := &tls.Config{}
	certFile, keyFile, pass := get("tls-client-cert-file"), get("tls-client-key-file"), get("tls-client-key-file-pass")
	if certFile == "" || keyFile == "" {
		certFile, keyFile, pass = get("tls-cert-file"), get("tls-key-file"), get("tls-key-file-pass")
	}
	if certFile != "" || keyFile != "" {
		cert, err := LoadTLSKeyPair(certFile, keyFile, pass)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	pool, err := TLSCertPool(get("tls-ca-cert-file"), get("tls-ca-cert-dir"))
	if err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, errors.New("a TLS connection out needs tls-ca-cert-file or tls-ca-cert-dir to verify the peer")
	}
	cfg.RootCAs = pool
	if cfg.MinVersion, cfg.MaxVersion, err = TLSVersions(get("tls-protocols")); err != nil {
		return nil, err
	}
	if cfg.CipherSuites, err = TLSCiphers(get("tls-ciphers")); err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadTLSKeyPair loads a PEM certificate chain and its PEM private key,
// which pass decrypts if it is encrypted (PKCS#8 "ENCRYPTED PRIVATE KEY",
// as OpenSSL 3 writes, or the older "Proc-Type: 4,ENCRYPTED" form). As
// with OpenSSL, pass is not needed for a key that is not encrypted, and
// is ignored then.
func LoadTLSKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	fail := func(err error) (tls.Certificate, error) {
		return tls.Certificate{}, fmt.Errorf("TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return fail(err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return fail(err)
	}
	if keyPEM, err = decryptPEMKey(keyPEM, pass); err != nil {
		return fail(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fail(err)
	}
	return cert, nil
}

// TLSCertPool returns the CA certificates of a PEM file and of the files
// of a directory (either may be ""), or nil if both are "".
func TLSCertPool(caFile, caDir string) (*x509.CertPool, error) {
	if caFile == "" && caDir == "" {
		return nil, nil
	}
	pool := x509.NewCertPool()
	files := []string{}
	if caFile != "" {
		files = append(files, caFile)
	}
	if caDir != "" {
		entries, err := os.ReadDir(caDir)
		if err != nil {
			return nil, fmt.Errorf("tls-ca-cert-dir: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				files = append(files, filepath.Join(caDir, e.Name()))
			}
		}
	}
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("TLS CA certificates: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) && f == caFile {
			return nil, fmt.Errorf("TLS CA certificates: no PEM certificate in %s", f)
		}
	}
	return pool, nil
}

// TLSVersions turns tls-protocols ("TLSv1.2 TLSv1.3", as redis.conf
// spells it; empty: those two) into the range crypto/tls takes.
func TLSVersions(v string) (lo, hi uint16, err error) {
	names := map[string]uint16{"tlsv1": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11, "tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	seen := map[uint16]bool{}
	for _, f := range fields {
		ver, ok := names[strings.ToLower(f)]
		if !ok {
			return 0, 0, fmt.Errorf("tls-protocols: unknown protocol %s (want TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3)", f)
		}
		seen[ver] = true
		if lo == 0 || ver < lo {
			lo = ver
		}
		hi = max(hi, ver)
	}
	for ver := lo; ver <= hi; ver++ {
		if !seen[ver] {
			return 0, 0, fmt.Errorf("tls-protocols %s: the protocols must be a range without gaps (crypto/tls takes a minimum and a maximum)", v)
		}
	}
	return lo, hi, nil
}

// openSSLCipherNames are the OpenSSL names (as redis.conf's tls-ciphers
// spells them) of the TLS 1.2 suites crypto/tls offers.
var openSSLCipherNames = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
}

// TLSCiphers turns tls-ciphers, TLS 1.2 cipher suites separated by colons
// by their OpenSSL or IANA names, into crypto/tls's list; empty: Go's
// defaults. (TLS 1.3's suites are tls-ciphersuites': see TLSCipherSuites.)
func TLSCiphers(v string) ([]uint16, error) {
	if v == "" {
		return nil, nil
	}
	var out []uint16
	for _, name := range strings.Split(v, ":") {
		id, ok := openSSLCipherNames[name]
		if !ok {
			for _, cs := range tls.CipherSuites() {
				if cs.Name == name {
					id, ok = cs.ID, true
				}
			}
		}
		if !ok {
			return nil, fmt.Errorf("tls-ciphers: unknown or insecure TLS 1.2 cipher suite %s (want OpenSSL names such as ECDHE-RSA-AES128-GCM-SHA256, or IANA names, separated by colons)", name)
		}
		out = append(out, id)
	}
	return out, nil
}

// tls13Suites are the TLS 1.3 suites OpenSSL knows by name, and whether
// crypto/tls implements each.
var tls13Suites = map[string]bool{
	"TLS_AES_128_GCM_SHA256":       true,
	"TLS_AES_256_GCM_SHA384":       true,
	"TLS_CHACHA20_POLY1305_SHA256": true,
	"TLS_AES_128_CCM_SHA256":       false,
	"TLS_AES_128_CCM_8_SHA256":     false,
}

// TLSCipherSuites checks tls-ciphersuites, TLS 1.3 suites separated by
// colons, and returns the names in it that it does not know. Go's
// crypto/tls does not let a server choose its TLS 1.3 suites: it offers
// AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305 and picks among those the
// client offers by the hardware's AES support. So the list is checked as
// OpenSSL checks it (unknown names are skipped, but one name at least must
// be known) and otherwise not applied; a list that names only suites
// crypto/tls lacks (the CCM ones) is refused, since no TLS 1.3 client
// could then be served as it asks.
func TLSCipherSuites(v string) (unknown []string, err error) {
	if v == "" {
		return nil, nil
	}
	known, served := 0, 0
	for _, name := range strings.Split(v, ":") {
		implemented, ok := tls13Suites[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		known++
		if implemented {
			served++
		}
	}
	if known == 0 {
		return nil, fmt.Errorf("tls-ciphersuites %s: no TLS 1.3 cipher suite known (want TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 or TLS_CHACHA20_POLY1305_SHA256, separated by colons)", v)
	}
	if served == 0 {
		return nil, fmt.Errorf("tls-ciphersuites %s: Go's crypto/tls implements none of these (it has TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 and TLS_CHACHA20_POLY1305_SHA256)", v)
	}
	return unknown, nil
}
