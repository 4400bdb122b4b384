package eventloop

import (
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The TLS handshake is crypto/tls's Conn.Handshake, which reads and writes
// its transport as a blocking socket and cannot be resumed once a read has
// failed, so it cannot run on a loop the way records do. It runs on a
// goroutine instead, one per handshake in progress and at most
// Options.MaxTLSHandshakes of them (handshaker); the loop keeps the socket.
// The loop appends what the peer sends to the transport's inbox, which the
// goroutine's reads take; the goroutine's writes gather in the outbox, and
// the loop sends them (a task per flight). When the handshake is over the
// goroutine hands the connection back to the loop with a task
// (tlsHandshakeDone) and ends. A connection gets a goroutine only once its
// whole first record (the ClientHello) has arrived and looks like TLS, so
// a peer that connects and sends nothing, or sends plaintext, costs none;
// the loop's clock enforces Options.TLSHandshakeTimeout (tlsExpire) and
// closing the connection ends a goroutine waiting on it.

// handshaker runs handshakes on at most max goroutines; the rest wait in
// queue, in order of arrival.
type handshaker struct {
	mu      sync.Mutex
	max     int
	running int
	peak    int // most running at once, for tests
	queue   []*tlsConn
}

// submit runs t's handshake on a goroutine, now if fewer than max run.
func (h *handshaker) submit(t *tlsConn) {
	h.mu.Lock()
	if h.running < h.max {
		h.running++
		h.peak = max(h.peak, h.running)
		h.mu.Unlock()
		go h.work(t)
		return
	}
	h.queue = append(h.queue, t)
	h.mu.Unlock()
}

// work runs t's handshake, then the queued ones, until the queue is empty.
func (h *handshaker) work(t *tlsConn) {
	for t != nil {
		t.handshake()
		h.mu.Lock()
		t = nil
		if len(h.queue) > 0 {
			t = h.queue[0]
			h.queue[0] = nil
			h.queue = h.queue[1:]
		} else {
			h.running--
		}
		h.mu.Unlock()
	}
}

// handshake runs on a handshake goroutine and hands the result to c's loop.
func (t *tlsConn) handshake() {
	err := t.conn.Handshake()
	l, c := t.tr.l, t.tr.c
	_ = l.connExecute(c, func(c *Conn) { l.tlsHandshakeDone(c, err) })
}

// tlsTransport is the net.Conn under a connection's tls.Conn: the loop's
// buffers, not a socket. Before open it is the handshake goroutine's
// blocking transport; after, the loop's.
type tlsTransport struct {
	l *loop // immutable
	c *Conn // immutable

	// Loop goroutine only, once open.
	isOpen  bool
	src     []byte // ciphertext for Read, a slice of the loop's read buffer
	sealing bool   // Write appends to l.tls.sealed (tlsSealBytes)

	// What the handshake shares with the loop, dropped once open so an
	// idle connection does not keep it; the pointer is immutable until
	// then, which is after the handshake goroutine is done.
	hs *tlsHandshake
}

// tlsHandshake is the state a handshake goroutine shares with the loop.
type tlsHandshake struct {
	mu            sync.Mutex
	wake          chan struct{} // inbox grew, or closed
	inbox         []byte        // read from the socket, not yet by the handshake
	outbox        []byte        // written by the handshake, not yet sent
	flushQueued   bool          // a task to send outbox is queued
	closed        bool
	local, remote net.Addr // for ClientHelloInfo.Conn
}

func (t *tlsTransport) init(l *loop, c *Conn) {
	t.l, t.c = l, c
	t.hs = &tlsHandshake{wake: make(chan struct{}, 1)}
}

// feed appends data to the inbox and returns the inbox, or nil if it
// would hold more than tlsMaxHandshakeInput. Loop goroutine.
func (t *tlsTransport) feed(data []byte) []byte {
	hs := t.hs
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if len(hs.inbox)+len(data) > tlsMaxHandshakeInput {
		return nil
	}
	hs.inbox = append(hs.inbox, data...)
	hs.signal()
	return hs.inbox
}

func (hs *tlsHandshake) signal() {
	select {
	case hs.wake <- struct{}{}:
	default:
	}
}

// addrs notes c's addresses for the handshake's callbacks. Loop goroutine.
func (t *tlsTransport) addrs(l *loop, c *Conn) {
	local, _ := unix.Getsockname(c.fd)
	remote, _ := unix.Getpeername(c.fd)
	t.hs.mu.Lock()
	t.hs.local, t.hs.remote = sockaddrToAddr(local), sockaddrToAddr(remote)
	t.hs.mu.Unlock()
}

// takeOutbox returns what the handshake wrote since the last call.
func (t *tlsTransport) takeOutbox() []byte {
	hs := t.hs
	hs.mu.Lock()
	defer hs.mu.Unlock()
	out := hs.outbox
	hs.outbox, hs.flushQueued = nil, false
	return out
}

// open hands the transport to the loop once the handshake goroutine is
// done, and returns what the peer sent that the handshake did not read.
func (t *tlsTransport) open() []byte {
	hs := t.hs
	hs.mu.Lock()
	rest := hs.inbox
	hs.mu.Unlock()
	t.hs, t.isOpen = nil, true
	return rest
}

// close makes a handshake's reads and writes fail from now on.
func (t *tlsTransport) close() {
	if hs := t.hs; hs != nil {
		hs.mu.Lock()
		hs.closed = true
		hs.signal()
		hs.mu.Unlock()
	}
}

// Read is crypto/tls reading ciphertext: on the loop, what the loop read
// and errNoInput once that is used up; in a handshake, the inbox, waiting
// for the loop to fill it.
func (t *tlsTransport) Read(p []byte) (int, error) {
	if t.isOpen {
		if len(t.src) == 0 {
			return 0, errNoInput
		}
		n := copy(p, t.src)
		t.src = t.src[n:]
		return n, nil
	}
	hs := t.hs
	for {
		hs.mu.Lock()
		if len(hs.inbox) > 0 {
			n := copy(p, hs.inbox)
			hs.inbox = hs.inbox[n:]
			if len(hs.inbox) == 0 {
				hs.inbox = nil
			}
			hs.mu.Unlock()
			return n, nil
		}
		if hs.closed {
			hs.mu.Unlock()
			return 0, net.ErrClosed
		}
		hs.mu.Unlock()
		<-hs.wake
	}
}

// Write is crypto/tls writing ciphertext: on the loop, into the sealing
// buffer or after c's earlier ciphertext (an alert, a key update); in a
// handshake, into the outbox, for the loop to send.
func (t *tlsTransport) Write(p []byte) (int, error) {
	if t.isOpen {
		if t.sealing {
			t.l.tls.sealed = append(t.l.tls.sealed, p...)
		} else {
			t.l.sendSealed(t.c, p)
		}
		return len(p), nil
	}
	hs := t.hs
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		return 0, net.ErrClosed
	}
	hs.outbox = append(hs.outbox, p...)
	queue := !hs.flushQueued
	hs.flushQueued = true
	hs.mu.Unlock()
	if queue {
		l := t.l
		if err := l.connExecute(t.c, func(c *Conn) {
			if tc := l.tlsOf(c); tc != nil {
				l.tlsSendHandshake(c, tc)
			}
		}); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Close is not called: the loop closes the socket, and the transport with
// tlsRelease.
func (t *tlsTransport) Close() error { return nil }

// LocalAddr and RemoteAddr are for the handshake's callbacks
// (ClientHelloInfo.Conn); nil once the handshake is over.
func (t *tlsTransport) LocalAddr() net.Addr {
	if t.isOpen {
		return nil
	}
	t.hs.mu.Lock()
	defer t.hs.mu.Unlock()
	return t.hs.local
}

func (t *tlsTransport) RemoteAddr() net.Addr {
	if t.isOpen {
		return nil
	}
	t.hs.mu.Lock()
	defer t.hs.mu.Unlock()
	return t.hs.remote
}

func (t *tlsTransport) SetDeadline(time.Time) error      { return nil }
func (t *tlsTransport) SetReadDeadline(time.Time) error  { return nil }
func (t *tlsTransport) SetWriteDeadline(time.Time) error { return nil }
