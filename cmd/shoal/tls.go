package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
)

// The TLS port, as redis-server configures it: --tls-port serves RESP
// over TLS on --bind beside (or, with --port 0, instead of) the plaintext
// port, with the certificate and key of --tls-cert-file and
// --tls-key-file, clients' certificates checked against --tls-ca-cert-file
// or --tls-ca-cert-dir as --tls-auth-clients says, and the versions of
// --tls-protocols. CONFIG SET tls-cert-file or tls-key-file (the same
// path, after replacing the file, reloads it) swaps the certificate for
// the next handshakes without a restart.

// checkTLSPort checks that --tls-port differs from the other ports.
func checkTLSPort(params *config.Table) error {
	if err := checkHTTPSPort(params); err != nil {
		return err
	}
	tlsPort := params.Int("tls-port")
	if tlsPort == 0 {
		return nil
	}
	if params.Get("engine") != "native" {
		return errors.New("--tls-port needs --engine native: the gnet engine has no TLS")
	}
	for _, other := range []string{"port", "http-port", "frame-port", "http-tls-port"} {
		if params.Int(other) == tlsPort {
			return fmt.Errorf("--tls-port %d and --%s %d must differ", tlsPort, other, tlsPort)
		}
	}
	return nil
}

// withTLSPort adds the TLS port to what the server listens on: another
// listener on bind, or with --port 0 the main address in place of the
// plaintext one, as redis-server does. It returns the main address and
// its TLS config (nil: plaintext) and the listeners.
func withTLSPort(params *config.Table, bind, addr string, listeners []eventloop.Listener, h eventloop.Handler) (string, *tls.Config, []eventloop.Listener, error) {
	cfg, err := tlsServerConfig(params)
	if err != nil || cfg == nil {
		return addr, nil, listeners, err
	}
	listeners = withHTTPSPort(params, bind, cfg, listeners, h)
	if params.Int("tls-port") == 0 { // the HTTPS port alone
		return addr, nil, listeners, nil
	}
	tlsAddr := net.JoinHostPort(bind, params.Get("tls-port"))
	if params.Int("port") == 0 {
		return tlsAddr, cfg, listeners, nil
	}
	return addr, nil, append(listeners, eventloop.Listener{Addr: tlsAddr, Handler: h, TLSConfig: cfg}), nil
}

// tlsCertificate is the server's certificate and the files it came from;
// the TLS config's GetCertificate reads it at each handshake.
type tlsCertificate struct {
	mu       sync.Mutex // guards the file names, which CONFIG SET changes
	certFile string
	keyFile  string
	cert     atomic.Pointer[tls.Certificate]
}

// tlsServerConfig builds the TLS config of --tls-port and --http-tls-port
// from the tls-* settings and takes ownership of the run-time ones; nil
// when both are 0.
func tlsServerConfig(params *config.Table) (*tls.Config, error) {
	if params.Int("tls-port") == 0 && params.Int("http-tls-port") == 0 {
		return nil, nil
	}
	tc := &tlsCertificate{certFile: params.Get("tls-cert-file"), keyFile: params.Get("tls-key-file")}
	if tc.certFile == "" || tc.keyFile == "" {
		return nil, errors.New("--tls-port and --http-tls-port need --tls-cert-file and --tls-key-file")
	}
	cert, err := loadKeyPair(tc.certFile, tc.keyFile)
	if err != nil {
		return nil, err
	}
	tc.cert.Store(cert)
	cfg := &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return tc.cert.Load(), nil },
		// As redis-server: session tickets unless tls-session-caching no.
		SessionTicketsDisabled: !params.Bool("tls-session-caching"),
	}
	if cfg.MinVersion, cfg.MaxVersion, err = tlsVersions(params.Get("tls-protocols")); err != nil {
		return nil, err
	}
	if cfg.CipherSuites, err = tlsCiphers(params.Get("tls-ciphers")); err != nil {
		return nil, err
	}
	if err := clientAuth(cfg, params); err != nil {
		return nil, err
	}
	tc.own(params)
	return cfg, nil
}

// own hands tls-cert-file and tls-key-file to tc: a CONFIG SET of either
// loads the pair as it would then be, and refuses a pair that does not load.
func (tc *tlsCertificate) own(params *config.Table) {
	params.Own("tls-cert-file", config.Owner{
		Get:   func() string { tc.mu.Lock(); defer tc.mu.Unlock(); return tc.certFile },
		Check: func(v string) error { return tc.reload(v, "") },
		Set:   func(v string) { tc.mu.Lock(); tc.certFile = v; tc.mu.Unlock() },
	})
	params.Own("tls-key-file", config.Owner{
		Get:   func() string { tc.mu.Lock(); defer tc.mu.Unlock(); return tc.keyFile },
		Check: func(v string) error { return tc.reload("", v) },
		Set:   func(v string) { tc.mu.Lock(); tc.keyFile = v; tc.mu.Unlock() },
	})
}

// reload loads the certificate from certFile and the key from keyFile,
// either "" meaning the file in use, and serves it from the next
// handshake on.
func (tc *tlsCertificate) reload(certFile, keyFile string) error {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if certFile == "" {
		certFile = tc.certFile
	}
	if keyFile == "" {
		keyFile = tc.keyFile
	}
	cert, err := loadKeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	tc.cert.Store(cert)
	return nil
}

func loadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &cert, nil
}

// tlsVersions turns tls-protocols ("TLSv1.2 TLSv1.3", as redis.conf
// spells it; empty: those two) into the range crypto/tls takes.
func tlsVersions(v string) (lo, hi uint16, err error) {
	names := map[string]uint16{"tlsv1": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11, "tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	seen := map[uint16]bool{}
	for _, f := range fields {
		ver, ok := names[strings.ToLower(f)]
		if !ok {
			return 0, 0, fmt.Errorf("--tls-protocols: unknown protocol %s (want TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3)", f)
		}
		seen[ver] = true
		if lo == 0 || ver < lo {
			lo = ver
		}
		hi = max(hi, ver)
	}
	for ver := lo; ver <= hi; ver++ {
		if !seen[ver] {
			return 0, 0, fmt.Errorf("--tls-protocols %s: the protocols must be a range without gaps (crypto/tls takes a minimum and a maximum)", v)
		}
	}
	return lo, hi, nil
}

// clientAuth sets how cfg asks for clients' certificates: tls-auth-clients
// yes (required, as redis-server's default), optional, or no; the CAs that
// sign them come from tls-ca-cert-file and the files in tls-ca-cert-dir.
func clientAuth(cfg *tls.Config, params *config.Table) error {
	mode := params.Get("tls-auth-clients")
	caFile, caDir := params.Get("tls-ca-cert-file"), params.Get("tls-ca-cert-dir")
	if mode == "no" {
		return nil
	}
	if caFile == "" && caDir == "" {
		return fmt.Errorf("--tls-auth-clients %s needs --tls-ca-cert-file or --tls-ca-cert-dir to check client certificates (or --tls-auth-clients no)", mode)
	}
	pool := x509.NewCertPool()
	files := []string{}
	if caFile != "" {
		files = append(files, caFile)
	}
	if caDir != "" {
		entries, err := os.ReadDir(caDir)
		if err != nil {
			return fmt.Errorf("--tls-ca-cert-dir: %w", err)
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
			return fmt.Errorf("TLS CA certificates: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) && f == caFile {
			return fmt.Errorf("TLS CA certificates: no PEM certificate in %s", f)
		}
	}
	cfg.ClientCAs = pool
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	if mode == "optional" {
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return nil
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

// tlsCiphers turns tls-ciphers, TLS 1.2 cipher suites separated by colons
// by their OpenSSL or IANA names, into crypto/tls's list; empty: Go's
// defaults. (TLS 1.3's suites are Go's to choose: crypto/tls takes no list.)
func tlsCiphers(v string) ([]uint16, error) {
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
			return nil, fmt.Errorf("--tls-ciphers: unknown or insecure TLS 1.2 cipher suite %s (want OpenSSL names such as ECDHE-RSA-AES128-GCM-SHA256, or IANA names, separated by colons)", name)
		}
		out = append(out, id)
	}
	return out, nil
}
