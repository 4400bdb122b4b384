package eventloop

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/valyala/bytebufferpool"
)

// TLS on the loops. A TLS connection is a crypto/tls server Conn whose
// transport (tlsTransport) is not a socket but the loop's buffers: after
// the handshake, the loop hands the ciphertext it read to the transport
// and calls tls.Conn.Read on the loop until the transport reports, with a
// temporary net.Error, that it has no more bytes (crypto/tls keeps a
// partial record and does not make that error sticky); what Read returns
// is the plaintext OnTraffic sees. At flush the plaintext a handler wrote
// to c's output is sealed with one tls.Conn.Write (full records) and the
// ciphertext goes to the socket; what the socket does not take waits in
// c's backlog, so c.out holds only plaintext and the backlog only
// ciphertext, and pending() counts both. The handshake cannot run this way
// (crypto/tls cannot resume a handshake after a read error), so it runs on
// a goroutine (tls_handshake.go) that the loop feeds.

const (
	defaultTLSHandshakeTimeout = 10 * time.Second
	defaultMaxTLSHandshakes    = 512

	// tlsMaxHandshakeInput bounds what a connection may send during its
	// handshake that the handshake has not read yet: a ClientHello and a
	// client's certificate chain fit many times over.
	tlsMaxHandshakeInput = 256 << 10

	// tlsSealChunk is how much plaintext is sealed at a time: four full
	// records, so a large reply does not need a large ciphertext buffer.
	tlsSealChunk = 4 * 16384

	// tlsMaxRecordPayload is the largest record a ClientHello may come in.
	tlsMaxRecordPayload = 16384 + 2048

	// tlsHandshakeCheck is how often a loop with handshakes in progress
	// looks for ones past TLSHandshakeTimeout.
	tlsHandshakeCheck = 100 * time.Millisecond
)

var (
	// ErrTLSHandshake means a connection's TLS handshake failed or did not
	// finish within Options.TLSHandshakeTimeout: the peer sent something
	// other than TLS, a certificate the config does not accept, or too
	// little too slowly. The Handler never sees such a connection.
	ErrTLSHandshake = errors.New("eventloop: TLS handshake failed")
	// ErrTLSRecord means a TLS connection sent a record crypto/tls
	// rejected (it does not decrypt, is oversized, or is an alert).
	ErrTLSRecord = errors.New("eventloop: bad TLS record")
)

// tlsDefaults checks the TLS options and fills in their defaults.
func (o *Options) tlsDefaults() error {
	if o.TLSHandshakeTimeout < 0 {
		return fmt.Errorf("eventloop: TLSHandshakeTimeout %v is negative", o.TLSHandshakeTimeout)
	}
	if o.TLSHandshakeTimeout == 0 {
		o.TLSHandshakeTimeout = defaultTLSHandshakeTimeout
	}
	if o.MaxTLSHandshakes < 0 {
		return fmt.Errorf("eventloop: MaxTLSHandshakes %d is negative", o.MaxTLSHandshakes)
	}
	if o.MaxTLSHandshakes == 0 {
		o.MaxTLSHandshakes = defaultMaxTLSHandshakes
	}
	return nil
}

// tlsListenerConfig is the copy of the caller's config a listener uses:
// with dynamic record sizing off, so a batch of replies is sealed into
// full records, as few as possible. A config that GetConfigForClient
// returns is used as it is.
func tlsListenerConfig(c *tls.Config) *tls.Config {
	c = c.Clone()
	c.DynamicRecordSizingDisabled = true
	return c
}

// setupTLS checks the listeners' TLS configs and makes the handshake pool.
func (s *Server) setupTLS() error {
	any := false
	for _, ln := range s.listeners {
		if ln.tls == nil {
			continue
		}
		any = true
		if s.opts.Engine != nil {
			return fmt.Errorf("eventloop: TLS on %q needs the native engine; the %s engine has no TLS", ln.addr, s.opts.Engine.Name())
		}
		c := ln.tls
		if len(c.Certificates) == 0 && c.GetCertificate == nil && c.GetConfigForClient == nil {
			return fmt.Errorf("eventloop: the TLS config of %q has no certificate (Certificates, GetCertificate or GetConfigForClient)", ln.addr)
		}
	}
	if any {
		s.handshakes = &handshaker{max: s.opts.MaxTLSHandshakes}
	}
	return nil
}

// tlsLoop is a loop's TLS state. Loop goroutine only.
type tlsLoop struct {
	conns   []*tlsConn // indexed by descriptor, like loop.conns
	plain   []byte     // decrypted input, ReadBufferSize; made with the first TLS connection
	sealed  []byte     // ciphertext being sealed (tlsTransport.Write)
	raw     []byte     // ciphertext input lent to the connection being read (tls_buffers.go)
	pending []*Conn    // connections whose handshake has not finished, for the timeout
}

// tlsConn is one TLS connection's state. The loop owns it, except that
// while a handshake goroutine runs, conn is that goroutine's and only the
// transport's guarded fields are shared.
type tlsConn struct {
	conn     *tls.Conn
	tr       tlsTransport
	rest     *bytebufferpool.ByteBuffer // a partial record, between reads (tls_buffers.go)
	deadline time.Duration              // loop clock: the handshake must be over by then
	state    uint8
}

const (
	tlsHello   uint8 = iota // waiting for the first record, on the loop
	tlsShaking              // the handshake is queued or running on a goroutine
	tlsOpen                 // records on the loop; the Handler has c
	tlsFailed               // handshake failed: closing
)

func (l *loop) tlsOf(c *Conn) *tlsConn {
	if c.fd < len(l.tls.conns) {
		return l.tls.conns[c.fd]
	}
	return nil
}

// tlsAccept starts the TLS side of a connection accepted on a TLS
// listener. OnOpen waits for the handshake (tlsHandshakeDone).
func (l *loop) tlsAccept(c *Conn) {
	t := &tlsConn{deadline: l.now + l.srv.opts.TLSHandshakeTimeout}
	t.tr.init(l, c)
	t.conn = tls.Server(&t.tr, c.ln.tls)
	for c.fd >= len(l.tls.conns) {
		l.tls.conns = append(l.tls.conns, make([]*tlsConn, len(l.tls.conns)+64)...)
	}
	l.tls.conns[c.fd] = t
	if l.tls.plain == nil {
		l.tls.plain = make([]byte, l.srv.opts.ReadBufferSize)
	}
	l.tls.pending = append(l.tls.pending, c)
}

// tlsDeliver takes ciphertext c sent: during the handshake it goes to the
// handshake goroutine, after it is decrypted and given to OnTraffic.
func (l *loop) tlsDeliver(c *Conn, data []byte) {
	t := l.tlsOf(c)
	switch t.state {
	case tlsHello:
		in := t.tr.feed(data)
		if err := checkClientHello(in); err != nil {
			l.tlsFail(c, t, err)
			return
		}
		if recordComplete(in) {
			t.state = tlsShaking
			t.tr.addrs(l, c)
			l.srv.handshakes.submit(t)
		}
	case tlsShaking:
		if t.tr.feed(data) == nil {
			l.tlsFail(c, t, fmt.Errorf("%w: more than %d bytes of handshake input waiting", ErrTLSHandshake, tlsMaxHandshakeInput))
		}
	case tlsOpen:
		l.tlsRead(c, t, data)
	}
}

// checkClientHello rejects, before a goroutine is spent on it, input that
// does not start with a TLS handshake record: plaintext, HTTP, an SSLv2
// hello, or a record too long to be a ClientHello. nil in means the input
// overflowed tlsMaxHandshakeInput.
func checkClientHello(in []byte) error {
	if in == nil {
		return fmt.Errorf("%w: more than %d bytes of handshake input waiting", ErrTLSHandshake, tlsMaxHandshakeInput)
	}
	if in[0] != 0x16 || len(in) > 1 && in[1] != 3 {
		return fmt.Errorf("%w: the first bytes (%q) are not a TLS handshake record; plaintext on a TLS port?", ErrTLSHandshake, in[:min(len(in), 8)])
	}
	if len(in) >= 5 {
		if n := int(in[3])<<8 | int(in[4]); n > tlsMaxRecordPayload {
			return fmt.Errorf("%w: first record of %d bytes exceeds %d", ErrTLSHandshake, n, tlsMaxRecordPayload)
		}
	}
	return nil
}

// recordComplete reports whether in holds a whole first record.
func recordComplete(in []byte) bool {
	return len(in) >= 5 && len(in) >= 5+(int(in[3])<<8|int(in[4]))
}

// tlsRead decrypts data and what crypto/tls kept of earlier reads and
// hands the plaintext to OnTraffic, a buffer at a time.
func (l *loop) tlsRead(c *Conn, t *tlsConn, data []byte) {
	t.tr.src = data
	l.lendInput(t)
	plain := l.tls.plain
	n := 0
	for c.flags&flagAbort == 0 && !c.isClosed() {
		k, err := t.conn.Read(plain[n:])
		n += k
		if n == len(plain) || (err != nil && n > 0) {
			l.deliver(c, plain[:n])
			n = 0
			if c.flags&flagCloseCalled != 0 {
				break // Close stops reading
			}
		}
		if err == nil {
			continue
		}
		if err != errNoInput {
			if errors.Is(err, io.EOF) { // close_notify: the peer is done sending
				c.flags |= flagClosing | flagPeerClosed
			} else {
				l.counters.tlsRecordErrors.Add(1)
				l.abort(c, fmt.Errorf("%w: %v", ErrTLSRecord, err))
			}
		}
		break
	}
	t.tr.src = nil
	l.takeInput(t)
}

// tlsSeal seals c's pending plaintext (c.out) and sends it: what the
// socket does not take goes to the backlog. c.out goes back to its pool.
func (l *loop) tlsSeal(c *Conn) {
	p := c.out.B[c.outPos:]
	l.tlsSealBytes(c, p)
	l.outBufs.put(c.out)
	c.out, c.outPos = nil, 0
}

// tlsSealBytes seals p, tlsSealChunk at a time, and sends each piece
// after c's earlier ciphertext.
func (l *loop) tlsSealBytes(c *Conn, p []byte) {
	t := l.tlsOf(c)
	for len(p) > 0 && c.flags&flagAbort == 0 {
		n := min(len(p), tlsSealChunk)
		l.tls.sealed = l.tls.sealed[:0]
		t.tr.sealing = true
		_, err := t.conn.Write(p[:n])
		t.tr.sealing = false
		if err != nil {
			l.abort(c, fmt.Errorf("%w: sealing output: %v", ErrTLSRecord, err))
			return
		}
		l.sendSealed(c, l.tls.sealed)
		p = p[n:]
	}
	if cap(l.tls.sealed) > 2*tlsSealChunk { // a one-off: do not keep it
		l.tls.sealed = nil
	}
}

// sendSealed writes ciphertext after c's earlier ciphertext: to the socket
// when none is waiting, and what the socket does not take to the backlog.
func (l *loop) sendSealed(c *Conn, p []byte) {
	if c.backlogLen() == 0 && len(p) > 0 {
		n, err := l.writeOnce(c, p) // less than all: the socket is full
		if err != nil {
			c.flags |= flagAbort
			c.closeErr = err
			return
		}
		p = p[n:]
	}
	if len(p) > 0 && l.appendBacklog(c, p) < len(p) {
		l.abort(c, errors.New("eventloop: no memory to queue a TLS connection's output"))
	}
}

// tlsHandshakeDone runs on the loop when c's handshake goroutine is done:
// it sends the handshake's last output and, if the handshake succeeded,
// opens c for the Handler and presents what the peer sent after it.
func (l *loop) tlsHandshakeDone(c *Conn, err error) {
	t := l.tlsOf(c)
	if t == nil || t.state != tlsShaking {
		return
	}
	l.tlsSendHandshake(c, t)
	if err != nil {
		l.tlsFail(c, t, fmt.Errorf("%w: %v", ErrTLSHandshake, err))
		return
	}
	t.state = tlsOpen
	rest := t.tr.open()
	l.takeInput(t) // the handshake's buffers go; what it read past its end stays
	l.counters.tlsHandshakes.Add(1)
	if t.conn.ConnectionState().DidResume {
		l.counters.tlsResumed.Add(1)
	}
	if h := c.ln.onOpen; h != nil {
		l.onOpen(h, c)
	}
	if c.flags&flagAbort == 0 {
		l.tlsRead(c, t, rest)
	}
}

// tlsSendHandshake sends what the handshake goroutine wrote.
func (l *loop) tlsSendHandshake(c *Conn, t *tlsConn) {
	if t.tr.hs == nil { // open: the handshake's output was all sent
		return
	}
	if out := t.tr.takeOutbox(); len(out) > 0 {
		l.sendSealed(c, out)
	}
}

// tlsFail ends c's handshake: c closes once what the handshake wrote (an
// alert) is sent, without the Handler hearing of it.
func (l *loop) tlsFail(c *Conn, t *tlsConn, err error) {
	t.state = tlsFailed
	l.counters.tlsHandshakeFailures.Add(1)
	l.srv.opts.Logger.Debug("eventloop: TLS handshake failed", "fd", c.fd, "reason", err.Error())
	c.flags |= flagClosing | flagCloseCalled
	c.closeErr = err
	l.markDirty(c)
}

// tlsExpire closes the connections whose handshake is past its deadline,
// and forgets the ones that finished.
func (l *loop) tlsExpire() {
	kept := l.tls.pending[:0]
	for _, c := range l.tls.pending {
		t := l.tlsOf(c)
		if c.isClosed() || t == nil || t.state >= tlsOpen {
			continue
		}
		if l.now >= t.deadline {
			l.counters.tlsHandshakeTimeouts.Add(1)
			l.tlsFail(c, t, fmt.Errorf("%w: not finished after %v", ErrTLSHandshake, l.srv.opts.TLSHandshakeTimeout))
			l.closeConn(c, c.closeErr) // the peer is not reading: do not wait on it
			continue
		}
		kept = append(kept, c)
	}
	clear(l.tls.pending[len(kept):])
	l.tls.pending = kept
}

// tlsOpened reports whether the Handler has been told of c (OnOpen).
func (l *loop) tlsOpened(c *Conn) bool {
	t := l.tlsOf(c)
	return t != nil && t.state == tlsOpen
}

// tlsRelease ends c's TLS side as c closes: a close_notify alert first if
// the close is graceful, then the transport closes, which ends a handshake
// still running.
func (l *loop) tlsRelease(c *Conn, graceful bool) {
	t := l.tlsOf(c)
	if t == nil {
		return
	}
	if graceful && t.state == tlsOpen {
		_ = t.conn.CloseWrite() // sealed and sent by the transport
	}
	if t.state < tlsOpen { // closed before its handshake ended
		l.counters.tlsHandshakeFailures.Add(1)
	}
	t.tr.close()
	l.dropRest(t)
	l.tls.conns[c.fd] = nil
}

// TLSConnectionState returns the state of c's TLS session (version,
// cipher suite, ALPN protocol, SNI server name, the client's
// certificates, whether it resumed) and true, or false if c is not a TLS
// connection. The handshake is over before OnOpen, so it is complete
// there. Call it on c's loop goroutine.
func (c *Conn) TLSConnectionState() (tls.ConnectionState, bool) {
	l, ok := c.eng.(*loop)
	if !ok || c.ln.tls == nil {
		return tls.ConnectionState{}, false
	}
	t := l.tlsOf(c)
	if t == nil {
		return tls.ConnectionState{}, false
	}
	return t.conn.ConnectionState(), true
}

// errNoInput is what the transport's Read returns on the loop when it has
// no more ciphertext: temporary, so crypto/tls keeps its state.
var errNoInput net.Error = noInputError{}

type noInputError struct{}

func (noInputError) Error() string   { return "eventloop: no more TLS input buffered" }
func (noInputError) Timeout() bool   { return false }
func (noInputError) Temporary() bool { return true }
