package kv_test

// The tls-* settings against redis-server (which Debian builds with TLS):
// their defaults as CONFIG GET reports them on a server without a TLS port,
// and CONFIG SET there: both take any value their kind accepts (redis-server
// builds its TLS context only with a TLS port, so nothing else is checked;
// cmd/shoal's TestTLSSettingsAtRunTime covers a server with one) and refuse
// the same malformed ones with the same texts. (tls-port is not in it:
// Shoal opens its listeners at startup only, where redis-server opens a
// TLS port on CONFIG SET.)
func init() {
	diffCases["tls-config-defaults"] = []step{
		c("CONFIG GET tls-port"), c("CONFIG GET tls-cert-file"), c("CONFIG GET tls-key-file"),
		c("CONFIG GET tls-ca-cert-file"), c("CONFIG GET tls-ca-cert-dir"), c("CONFIG GET tls-auth-clients"),
		c("CONFIG GET tls-protocols"), c("CONFIG GET tls-session-caching"), c("CONFIG GET tls-ciphers"),
		c("CONFIG GET tls-key-file-pass"), c("CONFIG GET tls-client-cert-file"), c("CONFIG GET tls-client-key-file"),
		c("CONFIG GET tls-client-key-file-pass"), c("CONFIG GET tls-ciphersuites"), c("CONFIG GET tls-prefer-server-ciphers"),
		c("CONFIG GET tls-session-cache-size"), c("CONFIG GET tls-session-cache-timeout"),
	}
	diffCases["tls-config-set"] = []step{
		c("CONFIG SET tls-session-cache-size -1"), c("CONFIG SET tls-session-cache-size abc"),
		c("CONFIG SET tls-session-cache-size 2147483648"), c("CONFIG SET tls-session-cache-size 100"),
		c("CONFIG GET tls-session-cache-size"),
		c("CONFIG SET tls-session-cache-timeout -1"), c("CONFIG SET tls-session-cache-timeout 0"),
		c("CONFIG GET tls-session-cache-timeout"),
		c("CONFIG SET tls-session-caching maybe"), c("CONFIG SET tls-session-caching no"), c("CONFIG GET tls-session-caching"),
		c("CONFIG SET tls-prefer-server-ciphers maybe"), c("CONFIG SET tls-prefer-server-ciphers yes"),
		c("CONFIG GET tls-prefer-server-ciphers"),
		c("CONFIG SET tls-auth-clients maybe"), c("CONFIG SET tls-auth-clients optional"), c("CONFIG GET tls-auth-clients"),
		c("CONFIG SET tls-ciphersuites TLS_AES_256_GCM_SHA384"), c("CONFIG GET tls-ciphersuites"),
		c("CONFIG SET tls-key-file-pass secret"), c("CONFIG GET tls-key-file-pass"),
		c("CONFIG SET tls-client-cert-file /nonexistent.crt"), c("CONFIG GET tls-client-cert-file"),
	}
}
