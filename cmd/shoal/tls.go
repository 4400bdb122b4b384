package main

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
)

// The TLS port, as redis-server configures it: --tls-port serves RESP
// over TLS on --bind beside (or, with --port 0, instead of) the plaintext
// port, with the certificate and key of --tls-cert-file and
// --tls-key-file (--tls-key-file-pass if it is encrypted), clients'
// certificates checked against --tls-ca-cert-file or --tls-ca-cert-dir as
// --tls-auth-clients says, the versions of --tls-protocols, the TLS 1.2
// suites of --tls-ciphers and session resumption as --tls-session-caching
// and --tls-session-cache-timeout say. As redis-server's applyTlsCfg, a
// CONFIG SET of any tls-* setting but tls-port rebuilds the whole
// configuration from the files (so the same path, after replacing the
// file, reloads it) and serves it from the next handshake on; one that
// does not build is refused with Redis's reason and the cause is logged.

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

// tlsRows are the settings the TLS configuration is built from: a CONFIG
// SET of any of them rebuilds it.
var tlsRows = []string{
	"tls-cert-file", "tls-key-file", "tls-key-file-pass",
	"tls-client-cert-file", "tls-client-key-file", "tls-client-key-file-pass",
	"tls-ca-cert-file", "tls-ca-cert-dir", "tls-auth-clients", "tls-protocols",
	"tls-ciphers", "tls-ciphersuites", "tls-prefer-server-ciphers",
	"tls-session-caching", "tls-session-cache-size", "tls-session-cache-timeout",
}

// errTLSUpdate is redis-server's reason for a CONFIG SET of a tls-*
// setting that does not apply; the cause goes to the log.
var errTLSUpdate = errors.New("Unable to update TLS configuration. Check server logs.") //lint:ignore ST1005 Redis's text, byte for byte

// tlsState is the TLS configuration in use and the settings it was built
// from. The listeners' configs hand out the current one from their
// GetConfigForClient, so a rebuild reaches the next handshake.
type tlsState struct {
	mu     sync.Mutex        // guards values
	values map[string]string // tlsRows' values in use
	owning bool              // Own is handing the startup values over: no rebuild each
	server atomic.Pointer[tls.Config]
	// tickets holds the keys that seal session tickets, so that tickets
	// outlive a rebuild (Go rotates them itself, every 24 hours).
	tickets *tls.Config
	logger  *slog.Logger
}

// tlsServerConfig builds the TLS config of --tls-port and --http-tls-port
// from the tls-* settings and takes ownership of the run-time ones; nil
// when both ports are 0.
func tlsServerConfig(params *config.Table) (*tls.Config, error) {
	if params.Int("tls-port") == 0 && params.Int("http-tls-port") == 0 {
		return nil, nil
	}
	st := &tlsState{values: map[string]string{}, tickets: &tls.Config{}, logger: slog.Default()}
	for _, name := range tlsRows {
		st.values[name] = params.Get(name)
	}
	if st.values["tls-cert-file"] == "" || st.values["tls-key-file"] == "" {
		return nil, errors.New("--tls-port and --http-tls-port need --tls-cert-file and --tls-key-file")
	}
	cfg, err := st.build(st.values)
	if err != nil {
		return nil, err
	}
	st.server.Store(cfg)
	st.own(params)
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return st.server.Load(), nil }}, nil
}

// own hands the tls-* settings to st: CONFIG GET reads them from st, and
// a CONFIG SET is checked by building the configuration as it would then
// be, and applied by rebuilding it.
func (st *tlsState) own(params *config.Table) {
	st.owning = true
	defer func() { st.owning = false }()
	for _, name := range tlsRows {
		params.Own(name, config.Owner{
			Get:   func() string { st.mu.Lock(); defer st.mu.Unlock(); return st.values[name] },
			Check: func(v string) error { return st.check(name, v) },
			Set:   func(v string) { st.set(name, v) },
		})
	}
}

// with returns the values as they would be with name set to v.
func (st *tlsState) with(name, v string) map[string]string {
	st.mu.Lock()
	defer st.mu.Unlock()
	next := make(map[string]string, len(st.values))
	for k, old := range st.values {
		next[k] = old
	}
	next[name] = v
	return next
}

func (st *tlsState) check(name, v string) error {
	if _, err := st.build(st.with(name, v)); err != nil {
		st.logger.Warn("Failed applying new configuration. Restoring previous settings.", "setting", name, "value", v, "err", err)
		return errTLSUpdate
	}
	return nil
}

func (st *tlsState) set(name, v string) {
	next := st.with(name, v)
	if !st.owning {
		cfg, err := st.build(next)
		if err != nil { // the files changed since check: keep what serves
			st.logger.Warn("Failed applying new configuration. Restoring previous settings.", "setting", name, "value", v, "err", err)
			return
		}
		st.server.Store(cfg)
	}
	st.mu.Lock()
	st.values = next
	st.mu.Unlock()
}

// build makes the server's TLS config from the tls-* values v.
func (st *tlsState) build(v map[string]string) (*tls.Config, error) {
	cert, err := config.LoadTLSKeyPair(v["tls-cert-file"], v["tls-key-file"], v["tls-key-file-pass"])
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		// As the loops' own copy of a listener's config: replies batched
		// into full records (GetConfigForClient's result is used as is).
		DynamicRecordSizingDisabled: true,
	}
	if cfg.MinVersion, cfg.MaxVersion, err = config.TLSVersions(v["tls-protocols"]); err != nil {
		return nil, err
	}
	if cfg.CipherSuites, err = config.TLSCiphers(v["tls-ciphers"]); err != nil {
		return nil, err
	}
	unknown, err := config.TLSCipherSuites(v["tls-ciphersuites"])
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		st.logger.Warn("tls-ciphersuites: skipping unknown TLS 1.3 cipher suites, as OpenSSL does", "names", unknown)
	}
	if err := clientAuth(cfg, v); err != nil {
		return nil, err
	}
	// Checked as redis-server checks them, for the connections Shoal
	// makes (config.TLSClientConfig): a client pair, once both files are
	// set, must load.
	if c, k := v["tls-client-cert-file"], v["tls-client-key-file"]; c != "" && k != "" {
		if _, err := config.LoadTLSKeyPair(c, k, v["tls-client-key-file-pass"]); err != nil {
			return nil, fmt.Errorf("tls-client-cert-file: %w", err)
		}
	}
	if err := st.sessions(cfg, v); err != nil {
		return nil, err
	}
	return cfg, nil
}

// clientAuth sets how cfg asks for clients' certificates: tls-auth-clients
// yes (required, as redis-server's default), optional, or no; the CAs that
// sign them come from tls-ca-cert-file and the files in tls-ca-cert-dir.
func clientAuth(cfg *tls.Config, v map[string]string) error {
	mode := v["tls-auth-clients"]
	if mode == "no" {
		return nil
	}
	pool, err := config.TLSCertPool(v["tls-ca-cert-file"], v["tls-ca-cert-dir"])
	if err != nil {
		return err
	}
	if pool == nil {
		return fmt.Errorf("--tls-auth-clients %s needs --tls-ca-cert-file or --tls-ca-cert-dir to check client certificates (or --tls-auth-clients no)", mode)
	}
	cfg.ClientCAs = pool
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	if mode == "optional" {
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return nil
}

// sessions maps Redis's session cache onto crypto/tls's session tickets.
// OpenSSL keeps sessions in a server-side cache of tls-session-cache-size
// entries for tls-session-cache-timeout seconds; crypto/tls keeps none:
// a ticket is the session, sealed with the server's ticket keys and kept
// by the client. So tls-session-caching no turns tickets off (a full
// handshake every time), a ticket older than tls-session-cache-timeout
// seconds is not resumed (its age is sealed inside it), and
// tls-session-cache-size, with no cache to bound, is checked and kept but
// changes nothing.
func (st *tlsState) sessions(cfg *tls.Config, v map[string]string) error {
	if v["tls-session-caching"] != "yes" {
		cfg.SessionTicketsDisabled = true
		return nil
	}
	secs, err := strconv.ParseInt(v["tls-session-cache-timeout"], 10, 64)
	if err != nil {
		return fmt.Errorf("tls-session-cache-timeout %q: %v", v["tls-session-cache-timeout"], err)
	}
	timeout := time.Duration(secs) * time.Second
	cfg.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		if _, ok := sessionCreated(ss.Extra); !ok {
			ss.Extra = append(ss.Extra, sessionStamp(time.Now()))
		}
		return st.tickets.EncryptTicket(cs, ss)
	}
	cfg.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := st.tickets.DecryptTicket(identity, cs)
		if ss == nil || err != nil {
			return nil, err
		}
		if created, ok := sessionCreated(ss.Extra); !ok || time.Since(created) >= timeout {
			return nil, nil // too old (or not ours): a full handshake
		}
		return ss, nil
	}
	return nil
}

// sessionStampTag marks the SessionState.Extra entry that holds when the
// session was made.
const sessionStampTag = "shoal-session-created:"

func sessionStamp(t time.Time) []byte {
	return binary.BigEndian.AppendUint64([]byte(sessionStampTag), uint64(t.UnixNano()))
}

func sessionCreated(extra [][]byte) (time.Time, bool) {
	for _, e := range extra {
		if len(e) == len(sessionStampTag)+8 && string(e[:len(sessionStampTag)]) == sessionStampTag {
			return time.Unix(0, int64(binary.BigEndian.Uint64(e[len(sessionStampTag):]))), true
		}
	}
	return time.Time{}, false
}

// withALPN returns a copy of a listener's TLS config that offers protos
// by ALPN, also in the configs its GetConfigForClient hands out (one copy
// per rebuild, made at the first handshake after it).
func withALPN(cfg *tls.Config, protos ...string) *tls.Config {
	out := cfg.Clone()
	out.NextProtos = protos
	current := cfg.GetConfigForClient
	if current == nil {
		return out
	}
	var cache atomic.Pointer[[2]*tls.Config] // the config handed out, its copy with protos
	out.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		src, err := current(hello)
		if src == nil || err != nil {
			return src, err
		}
		if c := cache.Load(); c != nil && c[0] == src {
			return c[1], nil
		}
		with := src.Clone()
		with.NextProtos = protos
		cache.Store(&[2]*tls.Config{src, with})
		return with, nil
	}
	return out
}
