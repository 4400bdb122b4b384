package kv_test

// The tls-* settings against redis-server (which Debian builds with TLS):
// their defaults as CONFIG GET reports them on a server without a TLS port.
// (redis-server takes every tls-* setting at run time; Shoal only the
// certificate and key: see the README's TLS section.)
func init() {
	diffCases["tls-config-defaults"] = []step{
		c("CONFIG GET tls-port"), c("CONFIG GET tls-cert-file"), c("CONFIG GET tls-key-file"),
		c("CONFIG GET tls-ca-cert-file"), c("CONFIG GET tls-ca-cert-dir"), c("CONFIG GET tls-auth-clients"),
		c("CONFIG GET tls-protocols"), c("CONFIG GET tls-session-caching"), c("CONFIG GET tls-ciphers"),
	}
}
