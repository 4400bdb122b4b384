package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// configSet sends CONFIG SET name value on the plaintext port and returns
// the reply.
func configSet(t *testing.T, p *shoalProc, name, value string) string {
	t.Helper()
	c := p.dial(t)
	defer c.Close()
	fmt.Fprintf(c, "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(name), name, len(value), value)
	return string(readReply(t, c))
}

// redisTLSUpdateError is redis-server 7.0's reply to a CONFIG SET of a
// tls-* setting whose configuration does not build.
func redisTLSUpdateError(name string) string {
	return "-ERR CONFIG SET failed (possibly related to argument '" + name + "') - Unable to update TLS configuration. Check server logs.\r\n"
}

// TestTLSEncryptedKeyWithPassphrase: a key encrypted by openssl (PKCS#8,
// as OpenSSL 3 writes) serves redis-cli --tls with tls-key-file-pass; a
// wrong passphrase set at run time is refused with Redis's reason and the
// port serves on; without one the server does not start and says why.
func TestTLSEncryptedKeyWithPassphrase(t *testing.T) {
	needTool(t, "redis-cli")
	needTool(t, "openssl")
	f := newTLSFiles(t)
	enc := filepath.Join(f.dir, "server-enc.key")
	if out, err := exec.Command("openssl", "pkey", "-aes256", "-in", f.keyFile, "-out", enc, "-passout", "pass:s3cret").CombinedOutput(); err != nil {
		t.Fatalf("openssl pkey: %v\n%s", err, out)
	}
	tlsPort := freePort(t)
	args := f.args(tlsPort, "--tls-key-file", enc, "--tls-auth-clients", "no")
	p := startBinary(t, append(args, "--tls-key-file-pass", "s3cret")...)
	if out, err := f.redisCLI(t, tlsPort, false, "PING"); err != nil || out != "PONG" {
		t.Fatalf("redis-cli --tls PING: %q %v", out, err)
	}
	if got := configSet(t, p, "tls-key-file-pass", "wrong"); got != redisTLSUpdateError("tls-key-file-pass") {
		t.Fatalf("CONFIG SET tls-key-file-pass wrong: %q", got)
	}
	waitFor(t, 30*time.Second, "the log to say why", func() bool { return strings.Contains(p.stderr.String(), "wrong passphrase") },
		func() string { return p.stderr.String() })
	if out, err := f.redisCLI(t, tlsPort, false, "CONFIG", "GET", "tls-key-file-pass"); err != nil || out != "tls-key-file-pass\ns3cret" {
		t.Fatalf("CONFIG GET after the refused SET: %q %v", out, err)
	}
	p.terminate(t)

	out, err := exec.Command(shoalBin, append(args, "--port", strconv.Itoa(freePort(t)))...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "encrypted and no passphrase is set") {
		t.Fatalf("without tls-key-file-pass: %v\n%s", err, out)
	}
}

// sClient runs openssl s_client against port, saving the session to
// sessOut or resuming the one in sessIn, and returns whether the session
// was "Reused" or "New".
func sClient(t *testing.T, f *tlsFiles, port int, sess string, resume bool, extra ...string) string {
	t.Helper()
	argv := []string{"s_client", "-connect", "127.0.0.1:" + strconv.Itoa(port), "-CAfile", f.caFile}
	if resume {
		argv = append(argv, "-sess_in", sess)
	} else {
		argv = append(argv, "-sess_out", sess)
	}
	cmd := exec.Command("openssl", append(argv, extra...)...)
	cmd.Stdin = strings.NewReader("PING\r\n")
	out, _ := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Reused,") || strings.HasPrefix(line, "New,") {
			return strings.SplitN(line, ",", 2)[0]
		}
	}
	t.Fatalf("openssl s_client said neither New nor Reused:\n%s", out)
	return ""
}

// TestTLSSessionResumptionWithOpenSSL: openssl s_client resumes a session
// it saved (TLS 1.3 and 1.2), as with redis-server; tls-session-caching no
// and tls-session-cache-timeout 0, set at run time, make every handshake
// a full one.
func TestTLSSessionResumptionWithOpenSSL(t *testing.T) {
	needTool(t, "openssl")
	f := newTLSFiles(t)
	tlsPort := freePort(t)
	p := startBinary(t, f.args(tlsPort, "--tls-auth-clients", "no")...)
	sess := filepath.Join(f.dir, "session.pem")
	resumes := func(extra ...string) bool {
		t.Helper()
		if got := sClient(t, f, tlsPort, sess, false, extra...); got != "New" {
			t.Fatalf("a first handshake was %s", got)
		}
		return sClient(t, f, tlsPort, sess, true, extra...) == "Reused"
	}
	if !resumes() || !resumes("-tls1_2") {
		t.Fatal("a saved session was not resumed (TLS 1.3, then 1.2)")
	}
	for _, set := range [][2]string{{"tls-session-caching", "no"}, {"tls-session-caching", "yes"}, {"tls-session-cache-timeout", "0"}} {
		if got := configSet(t, p, set[0], set[1]); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET %s %s: %q", set[0], set[1], got)
		}
		if set[1] == "yes" {
			if !resumes() {
				t.Fatal("tls-session-caching yes again: not resumed")
			}
			continue
		}
		if resumes() || resumes("-tls1_2") {
			t.Fatalf("resumed after CONFIG SET %s %s", set[0], set[1])
		}
	}
	p.terminate(t)
}

// TestTLSSettingsAtRunTime: every tls-* setting but tls-port is listed by
// CONFIG GET and changed by CONFIG SET as in redis-server 7.0, each change
// rebuilding the configuration for the next handshake; what does not
// build is refused with Redis's reason and changes nothing.
func TestTLSSettingsAtRunTime(t *testing.T) {
	needTool(t, "redis-cli")
	needTool(t, "openssl")
	f := newTLSFiles(t)
	tlsPort := freePort(t)
	p := startBinary(t, f.args(tlsPort)...)
	out, err := f.redisCLI(t, tlsPort, true, "CONFIG", "GET", "tls-*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(tlsRows, "tls-port") {
		if !strings.Contains("\n"+out+"\n", "\n"+name+"\n") {
			t.Errorf("CONFIG GET tls-* lacks %s:\n%s", name, out)
		}
	}
	for _, tc := range []struct{ name, value, want string }{
		{"tls-auth-clients", "no", "+OK\r\n"},
		{"tls-ciphersuites", "FOO", redisTLSUpdateError("tls-ciphersuites")},
		{"tls-ciphersuites", "TLS_AES_256_GCM_SHA384:FOO", "+OK\r\n"},
		{"tls-ciphersuites", "", "+OK\r\n"},
		{"tls-session-cache-size", "-1", "-ERR CONFIG SET failed (possibly related to argument 'tls-session-cache-size') - argument must be between 0 and 2147483647 inclusive\r\n"},
		{"tls-session-cache-size", "100", "+OK\r\n"},
		{"tls-session-caching", "maybe", "-ERR CONFIG SET failed (possibly related to argument 'tls-session-caching') - argument must be 'yes' or 'no'\r\n"},
		{"tls-prefer-server-ciphers", "yes", "+OK\r\n"},
		{"tls-client-cert-file", "/nonexistent.crt", "+OK\r\n"}, // as Redis: no client pair until both are set
		{"tls-client-key-file", "/nonexistent.key", redisTLSUpdateError("tls-client-key-file")},
		{"tls-client-cert-file", f.clientCert, "+OK\r\n"},
		{"tls-client-key-file", f.clientKey, "+OK\r\n"},
		{"tls-protocols", "TLSv1.4", redisTLSUpdateError("tls-protocols")},
		{"tls-protocols", "TLSv1.3", "+OK\r\n"},
		{"tls-port", "1", "-ERR CONFIG SET failed (possibly related to argument 'tls-port') - can't set immutable config\r\n"},
	} {
		if got := configSet(t, p, tc.name, tc.value); got != tc.want {
			t.Errorf("CONFIG SET %s %q: %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
	// tls-auth-clients no: a client without a certificate is served.
	if out, err := f.redisCLI(t, tlsPort, false, "PING"); err != nil || out != "PONG" {
		t.Fatalf("redis-cli without a certificate after tls-auth-clients no: %q %v", out, err)
	}
	// tls-protocols TLSv1.3: a TLS 1.2 client is refused.
	cmd := exec.Command("openssl", "s_client", "-connect", "127.0.0.1:"+strconv.Itoa(tlsPort), "-CAfile", f.caFile, "-tls1_2")
	cmd.Stdin = strings.NewReader("")
	if b, _ := cmd.CombinedOutput(); strings.Contains(string(b), "New, TLSv1.2") {
		t.Fatalf("a TLS 1.2 handshake succeeded after tls-protocols TLSv1.3:\n%s", b)
	}
	if out, err := f.redisCLI(t, tlsPort, false, "CONFIG", "GET", "tls-client-key-file"); err != nil || out != "tls-client-key-file\n"+f.clientKey {
		t.Fatalf("CONFIG GET tls-client-key-file: %q %v", out, err)
	}
	p.terminate(t)
}

// TestTLSCipherSuitesAtStartup: tls-ciphersuites is checked before
// anything listens, with the reason.
func TestTLSCipherSuitesAtStartup(t *testing.T) {
	f := newTLSFiles(t)
	out, err := exec.Command(shoalBin, f.args(freePort(t), "--port", strconv.Itoa(freePort(t)), "--tls-ciphersuites", "TLS_AES_128_CCM_SHA256")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Go's crypto/tls implements none of these") {
		t.Fatalf("shoal --tls-ciphersuites TLS_AES_128_CCM_SHA256: %v\n%s", err, out)
	}
}
