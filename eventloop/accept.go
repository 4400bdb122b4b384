package eventloop

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/sys/unix"
)

// The accept path: the acceptor goroutine (or, with ReusePort, each loop on
// its own listener) accepts, admit applies MaxConns and socket options, and
// the Balancer picks the loop that owns the connection from then on. The
// accept system call itself is per OS, in socket_linux.go and socket_bsd.go.

// acceptLoop is the acceptor goroutine: it accepts connections and hands
// each to the loop the Balancer picks.
func (s *Server) acceptLoop() {
	defer close(s.acceptorDone)
	for {
		now := s.clock()
		resumeSockets(s.sockets, s.acceptor, now)
		n, err := s.acceptor.wait(socketsWaitMillis(s.sockets, now))
		if err != nil {
			s.opts.Logger.Error("eventloop: acceptor poll failed; no longer accepting", "err", err)
			s.sockets = closeSockets(s.sockets)
			return
		}
		if s.closing.Load() {
			s.acceptQueued(s.sockets, s.acceptor, nil)
			s.sockets = closeSockets(s.sockets)
			return
		}
		for i := 0; i < n; i++ {
			fd, _, _, wake := s.acceptor.event(i)
			if ls := socketFor(s.sockets, fd); !wake && ls != nil {
				s.acceptBatch(ls, s.acceptor, nil)
			}
		}
	}
}

// loopAccept accepts on one of a loop's own SO_REUSEPORT listeners.
func (l *loop) loopAccept(ls *listenSocket) {
	l.srv.acceptBatch(ls, l.poller, l)
}

// resumeSockets resumes accepting on the sockets whose backoff is over.
func resumeSockets(sockets []*listenSocket, p *poller, now time.Duration) {
	for _, ls := range sockets {
		ls.backoff.resume(p, ls.fd, now)
	}
}

// socketsWaitMillis is how long the goroutine polling sockets may wait
// before one's backoff ends (-1: no backoff).
func socketsWaitMillis(sockets []*listenSocket, now time.Duration) int {
	ms := -1
	for _, ls := range sockets {
		if d := ls.backoff.waitMillis(now); d >= 0 && (ms < 0 || d < ms) {
			ms = d
		}
	}
	return ms
}

// maxAcceptsPerEvent keeps a connection storm from delaying everything else
// the accepting goroutine does.
const maxAcceptsPerEvent = 128

// acceptBatch accepts what is queued on ls, up to maxAcceptsPerEvent. own
// is the accepting loop (ReusePort), or nil for the acceptor, which picks a
// loop per connection. It reports whether it stopped at that bound, with
// perhaps more queued.
func (s *Server) acceptBatch(ls *listenSocket, p *poller, own *loop) bool {
	b := &ls.backoff
	for i := 0; i < maxAcceptsPerEvent; i++ {
		fd, _, err := acceptConn(ls.fd)
		switch {
		case err == nil:
			b.reset()
			s.admit(fd, ls.ln, own)
		case err == unix.EAGAIN:
			return false
		case isTemporaryAcceptErr(err):
			continue
		default:
			// Out of descriptors or memory, or a broken listener: it stays
			// readable, so retrying at once would spin.
			b.pause(p, ls.fd, s.clock(), err, s.opts.Logger)
			return false
		}
	}
	return true
}

// acceptQueued accepts every connection queued on sockets, as Shutdown
// begins and before they close. The kernel completed those handshakes and
// acknowledged what the peers sent on them before Shutdown began: that is
// input already received, owed its answers like any other connection's.
// Closing a listener instead resets the connections still queued on it,
// requests and all. A peer whose handshake completes after this, while
// the listener closes, arrived after Shutdown began and is refused, as is
// one past maxAcceptedAtShutdown.
func (s *Server) acceptQueued(sockets []*listenSocket, p *poller, own *loop) {
	for _, ls := range sockets {
		for i := 0; i < maxAcceptedAtShutdown/maxAcceptsPerEvent && s.acceptBatch(ls, p, own); i++ {
		}
	}
}

// maxAcceptedAtShutdown bounds acceptQueued per listener: a full accept
// queue at somaxconn's usual ceiling (65535), so a storm of connections
// arriving faster than they are accepted cannot hold Shutdown up.
const maxAcceptedAtShutdown = 1 << 16

// admit applies MaxConns and socket options and hands fd, accepted on ln,
// to a loop.
func (s *Server) admit(fd int, ln *listener, own *loop) {
	n := s.numConns.Add(1)
	if max := s.maxConns.Load(); max > 0 && n > max {
		s.numConns.Add(-1)
		s.rejected.Add(1)
		if len(ln.reject) > 0 {
			_, _ = unix.Write(fd, ln.reject)
		}
		unix.Close(fd)
		return
	}
	if err := setupConn(fd, ln.network, &s.opts); err != nil {
		s.opts.Logger.Warn("eventloop: cannot set socket options; dropping connection", "err", err)
		s.numConns.Add(-1)
		unix.Close(fd)
		return
	}
	if own != nil {
		own.assigned.Add(1)
		own.register(fd, ln)
		return
	}
	for i, l := range s.loops {
		s.stats[i] = LoopStat{Conns: int(l.assigned.Load()), Load: math.Float64frombits(l.load.Load())}
	}
	i := s.opts.Balancer.Pick(s.stats)
	if i < 0 || i >= len(s.loops) {
		s.opts.Logger.Error("eventloop: Balancer picked a loop out of range; using loop 0", "picked", i, "loops", len(s.loops))
		i = 0
	}
	l := s.loops[i]
	l.assigned.Add(1) // counted now, so the next Pick sees it
	if err := l.enqueue(task{kind: taskRegister, fd: fd, ln: ln}); err != nil {
		l.discard(fd)
	}
}

// isTemporaryAcceptErr reports accept errors that concern only the one
// connection being accepted (it was reset while queued, say).
func isTemporaryAcceptErr(err error) bool {
	switch err {
	case unix.ECONNABORTED, unix.EINTR, unix.EPROTO, unix.EPERM:
		return true
	}
	return false
}

// acceptBackoff pauses accepting after an accept error that is not about
// the one connection: the process or system ran out of descriptors (EMFILE,
// ENFILE) or memory, or the listener broke. The listener stays readable, so
// retrying at once would spin. The pause doubles from 5 ms to 1 s while the
// condition lasts.
type acceptBackoff struct {
	delay  time.Duration
	until  time.Duration // clock time accepting resumes; 0 when not paused
	logged bool
}

func (b *acceptBackoff) pause(p *poller, lfd int, now time.Duration, err error, log interface {
	Warn(string, ...any)
}) {
	if b.delay == 0 {
		b.delay = 5 * time.Millisecond
	} else if b.delay < time.Second {
		b.delay *= 2
	}
	if !b.logged {
		log.Warn("eventloop: accept failed; pausing accepts", "err", err.Error(), "pause", b.delay.String())
		b.logged = true
	}
	b.until = now + b.delay
	if merr := p.modify(lfd, false, false); merr != nil {
		log.Warn("eventloop: cannot pause listener", "err", fmt.Sprint(merr))
	}
}

func (b *acceptBackoff) resume(p *poller, lfd int, now time.Duration) {
	if b.until != 0 && now >= b.until {
		b.until = 0
		_ = p.modify(lfd, true, false)
	}
}

func (b *acceptBackoff) reset() {
	b.delay, b.logged = 0, false
}

func (b *acceptBackoff) waitMillis(now time.Duration) int {
	if b.until == 0 {
		return -1
	}
	return millisUntil(b.until, now)
}
