package eventloop

import (
	"net"

	"golang.org/x/sys/unix"
)

// What the methods of a Conn do on the native engine: the Conn's loop is
// its connEngine (conn.go), and each method here is the Conn method of the
// same name, less the "conn", for c on l.

// pending reports the bytes of output not yet written to the socket.
func (c *Conn) pending() int {
	n := c.backlogLen()
	if c.out != nil {
		n += len(c.out.B) - c.outPos
	}
	return n
}

// writable reports whether the handler may still write to c.
func (c *Conn) writable() bool {
	return !c.isClosed() && c.flags&(flagCloseCalled|flagAbort) == 0
}

func (l *loop) connWrite(c *Conn, p []byte) (int, error) {
	if err := l.admitWrite(c); err != nil {
		return 0, err
	}
	l.appendOutput(c, p)
	return len(p), nil
}

func (l *loop) connWriteString(c *Conn, s string) (int, error) {
	if err := l.admitWrite(c); err != nil {
		return 0, err
	}
	if c.behind() {
		l.appendOutput(c, []byte(s)) // a slow reader's: the copy is the least of its costs
		return len(s), nil
	}
	l.ensureOut(c)
	c.out.B = append(c.out.B, s...)
	return len(s), nil
}

// admitWrite checks that the handler may write to c: it is not closing and
// its pending output is within its limits (which closes it otherwise).
func (l *loop) admitWrite(c *Conn) error {
	if !c.writable() {
		return ErrConnClosed
	}
	return l.checkLimits(c)
}

// appendOutput queues p after c's pending output: straight into the
// backlog when c's newest output is there (a slow reader), else in c.out.
func (l *loop) appendOutput(c *Conn, p []byte) {
	if c.out != nil && len(c.out.B)-c.outPos+len(p) > l.srv.opts.FlushThreshold && !c.behind() {
		// Past FlushThreshold: write c.out now, or if the socket is
		// known to be full move it to the backlog, rather than grow it.
		if c.flags&flagWriting != 0 {
			l.spill(c)
		} else {
			l.loopFlush(c)
		}
	}
	if c.behind() && c.ln.tls == nil { // TLS output is sealed at the flush, in one go
		p = p[l.appendBacklog(c, p):] // all of it, unless no chunk could be mapped
		if len(p) == 0 {
			return
		}
	}
	l.ensureOut(c)
	c.out.B = append(c.out.B, p...)
}

func (l *loop) ensureOut(c *Conn) {
	if c.out == nil {
		c.out = l.outBufs.get()
	}
}

func (l *loop) connOutputBuffer(c *Conn) []byte {
	if !c.writable() {
		return nil
	}
	l.ensureOut(c)
	return c.out.B[c.outPos:]
}

func (l *loop) connSetOutputBuffer(c *Conn, b []byte) {
	if !c.writable() || l.checkLimits(c) != nil {
		return
	}
	l.ensureOut(c)
	c.out.B = b
	c.outPos = 0
}

func (l *loop) connOutputFull(c *Conn) bool {
	return c.pending() > l.srv.opts.OutputHighWater
}

func (l *loop) connResume(c *Conn) {
	if !c.writable() || c.in == nil {
		return
	}
	c.flags |= flagStalled // settle's resumeStalled presents it
	l.markDirty(c)
}

func (l *loop) connOutboundBuffered(c *Conn) int { return c.pending() }

func (l *loop) connInboundBuffered(c *Conn) int {
	if c.in == nil {
		return 0
	}
	return len(c.in.B)
}

func (l *loop) connFlush(c *Conn) error {
	if c.isClosed() {
		return ErrConnClosed
	}
	l.loopFlush(c)
	if c.flags&flagAbort != 0 {
		return c.closeErr
	}
	return nil
}

func (l *loop) connClose(c *Conn) error {
	if !c.writable() {
		return ErrConnClosed
	}
	c.flags |= flagClosing | flagCloseCalled
	l.markDirty(c)
	return nil
}

func (l *loop) connAbort(c *Conn, err error) {
	if c.isClosed() {
		return
	}
	l.abort(c, err)
	l.markDirty(c)
}

func (l *loop) connLocalAddr(c *Conn) net.Addr {
	if c.local == nil && !c.isClosed() {
		if sa, err := unix.Getsockname(c.fd); err == nil {
			c.local = sa
		}
	}
	return sockaddrToAddr(c.local)
}

func (l *loop) connRemoteAddr(c *Conn) net.Addr {
	if c.remote == nil && !c.isClosed() {
		if sa, err := unix.Getpeername(c.fd); err == nil {
			c.remote = sa
		}
	}
	return sockaddrToAddr(c.remote)
}

func (l *loop) connAsyncWrite(c *Conn, p []byte) error {
	if c.isClosed() {
		return ErrConnClosed
	}
	b := outboundPool.Get()
	b.B = append(b.B[:0], p...)
	if err := l.enqueue(task{kind: taskWrite, c: c, data: b}); err != nil {
		outboundPool.Put(b)
		return err
	}
	return nil
}

func (l *loop) connExecute(c *Conn, fn func(c *Conn)) error {
	if c.isClosed() {
		return ErrConnClosed
	}
	return l.enqueue(task{kind: taskExecute, c: c, fn: fn})
}

func (l *loop) connLoopIndex() int { return l.idx }
