package eventloop

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/eventloop/internal/chunkq"
	"golang.org/x/sys/unix"
)

// maxReadsPerEvent bounds how many buffers one connection may read per poll
// cycle, so a flooding peer cannot starve the rest of the loop. Level-
// triggered polling brings it back next cycle.
const maxReadsPerEvent = 8

// loadWindow is how often a loop folds its busy time into its published load.
const loadWindow = 20 * time.Millisecond

// lingerTimeout bounds how long a gracefully closed connection keeps
// reading and discarding input while its last replies are on the way.
const lingerTimeout = 2 * time.Second

// lingerCheck is how often a loop with lingering connections looks whether
// their peers have acknowledged everything.
const lingerCheck = 10 * time.Millisecond

// loadAlpha is the EWMA weight of the newest window: about the last five
// windows (~100 ms) dominate.
const loadAlpha = 0.3

// loop is one event loop: one goroutine, one poller, the connections it
// accepted or was handed, for their whole life.
type loop struct {
	srv    *Server // immutable
	idx    int     // immutable
	poller *poller // immutable

	// Shared by all goroutines.
	assigned    atomic.Int64  // connections assigned and not yet closed (balancer input)
	load        atomic.Uint64 // math.Float64bits of the busy-fraction EWMA
	wakePending atomic.Bool   // a wake is in flight; coalesces enqueue's wakes
	mu          sync.Mutex    // guards tasks and stopped
	tasks       []task
	stopped     bool

	// Loop goroutine only.
	sockets     []*listenSocket // per-loop SO_REUSEPORT listeners
	buf         []byte          // shared read buffer
	conns       []*Conn         // indexed by descriptor
	numConns    int
	running     []task // tasks being run, swapped with tasks
	dirty       []*Conn
	lingering   []lingerer // closed for the handler, descriptor still open
	drainChecks []*Conn    // draining conns to read once more (settle)
	spareChecks []*Conn
	inBufs      bufCache
	outBufs     bufCache
	chunks      chunkq.Cache // backlog chunks, off the Go heap
	wheel       *idleWheel   // nil without IdleTimeout
	now         time.Duration
	draining    bool
	writeCalls  int // write syscalls made, for tests of batching
	ewma        float64
	busy        time.Duration
	windowStart time.Duration
	tls         tlsLoop   // the loop's TLS connections and buffers (tls.go)
	ahead       readAhead // the cycle's reads made before OnTraffic (readahead.go)

	// AtCycleEnd's functions for the end of this cycle (cycleend.go).
	cycleEnd, cycleRunning []task

	// Written by the loop goroutine, read by Server.Counters: among the
	// loop's own fields, away from those other goroutines write.
	counters loopCounters
}

func newLoop(s *Server, idx int) (*loop, error) {
	p, err := openPoller()
	if err != nil {
		return nil, fmt.Errorf("eventloop: poller: %w", err)
	}
	l := &loop{srv: s, idx: idx, poller: p, buf: make([]byte, s.opts.ReadBufferSize),
		inBufs: bufCache{pool: &inboundPool}, outBufs: bufCache{pool: &outboundPool}}
	if s.opts.IdleTimeout > 0 {
		l.wheel = newIdleWheel(s.opts.IdleTimeout)
	}
	return l, nil
}

// run is the loop goroutine: wait, handle events, run queued tasks, expire
// idle connections, publish load; until drained at shutdown.
func (l *loop) run() {
	defer l.srv.loopsDone.Done()
	l.now = l.srv.clock()
	l.windowStart = l.now
	for {
		resumeSockets(l.sockets, l.poller, l.now)
		n, err := l.poller.wait(l.waitMillis())
		if err != nil {
			l.srv.opts.Logger.Error("eventloop: poll failed; closing the loop's connections", "loop", l.idx, "err", err)
			l.stop(fmt.Errorf("eventloop: poll failed: %w", err))
			return
		}
		l.now = l.srv.clock()
		start := l.now
		woken := false
		if n > 1 && l.srv.readAhead {
			l.stageReads(n)
		}
		for i := 0; i < n; i++ {
			fd, readable, writable, wake := l.poller.event(i)
			switch {
			case wake:
				woken = true
			default:
				c := l.conn(fd)
				if c == nil { // a listener's descriptor is never a conn's
					if ls := socketFor(l.sockets, fd); ls != nil {
						l.loopAccept(ls)
					}
					continue
				}
				if c.flags&flagLingering != 0 {
					l.lingerRead(c)
					continue
				}
				if writable && c.flags&flagWriting != 0 {
					l.loopWrite(c)
				}
				if readable && c.flags&flagReading != 0 && !c.isClosed() {
					l.loopRead(c)
				}
			}
		}
		if len(l.ahead.stages) > 0 {
			l.finishStages()
		}
		if woken {
			l.runTasks()
		}
		if len(l.cycleEnd) > 0 {
			l.runCycleEnd()
		}
		if len(l.dirty) > 0 {
			l.flushDirty()
		}
		if len(l.drainChecks) > 0 {
			l.runDrainChecks()
		}
		if l.wheel != nil {
			l.wheel.advance(l.now, l.expire)
		}
		if len(l.lingering) > 0 {
			l.sweepLingering()
		}
		if len(l.tls.pending) > 0 {
			l.tlsExpire()
		}
		if l.draining && l.numConns == 0 {
			l.stop(nil)
			return
		}
		if l.draining && l.srv.forced.Load() {
			l.stop(ErrServerClosed)
			return
		}
		l.publishLoad(start)
	}
}

func (l *loop) conn(fd int) *Conn {
	if fd < 0 || fd >= len(l.conns) {
		return nil
	}
	return l.conns[fd]
}

// millisUntil is how many milliseconds a poll must wait for the loop clock
// to reach deadline: rounded up, so the loop does not wake just before it
// and spin; 0 once it has passed.
func millisUntil(deadline, now time.Duration) int {
	if deadline <= now {
		return 0
	}
	return int((deadline - now + time.Millisecond - 1) / time.Millisecond)
}

func (l *loop) waitMillis() int {
	if len(l.drainChecks) > 0 || len(l.cycleEnd) > 0 {
		return 0
	}
	ms := -1
	if l.wheel != nil {
		ms = l.wheel.waitMillis(l.now)
	}
	min := func(d int) {
		if d >= 0 && (ms < 0 || d < ms) {
			ms = d
		}
	}
	if l.ewma > 0 { // keep waking so the load decays while idle
		min(int(loadWindow / time.Millisecond))
	}
	min(socketsWaitMillis(l.sockets, l.now))
	if len(l.lingering) > 0 {
		min(int(lingerCheck / time.Millisecond))
	}
	if len(l.tls.pending) > 0 {
		min(int(tlsHandshakeCheck / time.Millisecond))
	}
	return ms
}

// publishLoad folds the time this cycle spent working into the load EWMA
// and publishes it once per loadWindow: load = (1-α)·load + α·busy/elapsed.
func (l *loop) publishLoad(cycleStart time.Duration) {
	end := l.srv.clock()
	l.busy += end - cycleStart
	elapsed := end - l.windowStart
	if elapsed < loadWindow {
		return
	}
	util := float64(l.busy) / float64(elapsed)
	l.ewma += loadAlpha * (util - l.ewma)
	if l.ewma < 1e-3 {
		l.ewma = 0
	}
	l.load.Store(math.Float64bits(l.ewma))
	l.busy, l.windowStart = 0, end
}

// register adopts a descriptor accepted on ln.
func (l *loop) register(fd int, ln *listener) {
	if l.draining { // accepted just before shutdown began
		l.discard(fd)
		return
	}
	c := &Conn{eng: l, ln: ln, fd: fd, lastActive: l.now, flags: flagReading}
	if err := l.poller.add(fd, true, false); err != nil {
		l.srv.opts.Logger.Error("eventloop: cannot poll new connection", "fd", fd, "err", err)
		l.discard(fd)
		return
	}
	for fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Conn, len(l.conns)+64)...)
	}
	l.conns[fd] = c
	l.numConns++
	l.counters.accepted.Add(1)
	if l.wheel != nil {
		l.wheel.add(c, l.now)
	}
	if ln.tls != nil {
		l.tlsAccept(c) // OnOpen once the handshake is over
	} else if h := ln.onOpen; h != nil {
		l.onOpen(h, c)
	}
	l.loopFlush(c)
	l.settle(c)
}

// loopRead reads what c has sent, hands it to OnTraffic and sends the
// replies with one write once the input has drained.
func (l *loop) loopRead(c *Conn) {
	for i := 0; i < maxReadsPerEvent; i++ {
		buf, n, err, staged := l.takeStage(c) // read ahead (readahead.go)
		if !staged {
			buf = l.buf
			n, err = readFd(c.fd, buf)
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			l.inputDrained(c)
			break
		}
		if err != nil {
			l.closeConn(c, err)
			return
		}
		if n == 0 { // peer finished sending: answer what it sent, then close
			c.flags |= flagClosing | flagPeerClosed
			break
		}
		c.lastActive = l.now
		l.counters.reads.Add(1)
		l.counters.bytesRead.Add(uint64(n))
		if c.ln.tls != nil {
			l.tlsDeliver(c, buf[:n])
		} else {
			l.deliver(c, buf[:n])
		}
		if n < len(buf) {
			l.inputDrained(c)
			break
		}
		if c.flags&(flagAbort|flagClosing|flagPaused) != 0 {
			break
		}
		if c.pending() >= l.srv.opts.FlushThreshold {
			l.loopFlush(c)
		}
	}
	l.loopFlush(c)
	l.settle(c)
}

// inputDrained notes that c's socket had no more input. During a graceful
// shutdown, once c's output is also all written, that is the moment c has
// been answered everything it sent, so it closes. While output is still
// pending the peer may be held back by the backpressure (its requests wait
// in its own socket for our window to open), so the socket is read again
// once the output has gone: see drainCheck.
func (l *loop) inputDrained(c *Conn) {
	if c.flags&flagDrainInput != 0 && c.pending() == 0 && c.flags&flagStalled == 0 {
		c.flags |= flagClosing
	}
}

// deliver presents c's unconsumed input plus data to OnTraffic and keeps
// what it leaves. data is in the shared read buffer; only the leftover of a
// partial request is copied, into a pooled per-connection buffer.
func (l *loop) deliver(c *Conn, data []byte) {
	in := data
	if c.in != nil {
		c.in.B = append(c.in.B, data...)
		in = c.in.B
	}
	consumed, ok := l.onTraffic(c, in)
	if !ok {
		return // it panicked: c is closing
	}
	if consumed < 0 || consumed > len(in) {
		l.abort(c, fmt.Errorf("eventloop: OnTraffic consumed %d of %d bytes", consumed, len(in)))
		return
	}
	rest := in[consumed:]
	switch {
	case len(rest) == 0:
		if c.in != nil {
			l.inBufs.put(c.in)
			c.in = nil
		}
	case c.in != nil:
		c.in.B = c.in.B[:copy(c.in.B, rest)]
	default:
		c.in = l.inBufs.get()
		c.in.B = append(c.in.B, rest...)
	}
	if limit := l.srv.opts.MaxInboundBuffer; len(rest) > limit {
		l.abort(c, fmt.Errorf("%w: %d bytes unconsumed, limit %d", ErrInboundLimit, len(rest), limit))
		return
	}
	if c.pending() > l.srv.opts.OutputHighWater {
		if c.flags&flagPaused == 0 {
			l.counters.pauses.Add(1)
		}
		c.flags |= flagPaused
		if len(rest) > 0 {
			// Perhaps only a partial request; perhaps the handler stopped
			// because the output is full. Either way settle presents
			// the rest again once the output drains.
			c.flags |= flagStalled
		}
	}
}

// loopWrite continues a partial write once the socket has room.
func (l *loop) loopWrite(c *Conn) {
	l.loopFlush(c)
	l.settle(c)
}

// loopFlush writes c's pending output: its backlog first, if it has one,
// then c.out with one write. A partial write leaves the rest for
// loopWrite, and moves more than spillAt of it into the backlog; the
// caller's settle arms write interest. It never closes c itself, because
// OnTraffic may still hold c's input.
func (l *loop) loopFlush(c *Conn) {
	if c.isClosed() || c.flags&flagAbort != 0 {
		return
	}
	if b := c.backlog.Load(); b != nil && !b.q.Empty() {
		if err := l.writeBacklog(c); err != nil {
			c.flags |= flagAbort
			c.closeErr = err
			return
		}
		if !b.q.Empty() {
			// Still behind: what is newer goes after it.
			if c.out != nil && len(c.out.B) > c.outPos {
				l.spill(c)
			}
			return
		}
	}
	if c.out == nil {
		return
	}
	if c.ln.tls != nil { // sealed, then to the socket; the rest to the backlog
		l.tlsSeal(c)
		return
	}
	for len(c.out.B) > c.outPos {
		n, err := writeFd(c.fd, c.out.B[c.outPos:])
		l.writeCalls++
		l.counters.writes.Add(1)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN { // the socket is full; loopWrite continues
			break
		}
		if err != nil {
			c.flags |= flagAbort
			c.closeErr = err
			return
		}
		c.outPos += n
		l.counters.bytesWritten.Add(uint64(n))
		c.lastActive = l.now         // a draining slow reader is not idle
		if len(c.out.B) > c.outPos { // the socket is full; don't ask again now
			break
		}
	}
	rest := len(c.out.B) - c.outPos
	if rest == 0 {
		l.outBufs.put(c.out)
		c.out, c.outPos = nil, 0
		return
	}
	if rest > spillAt && l.spill(c) {
		return
	}
	// Reclaim the written prefix once it is most of the buffer, so a slow
	// reader's buffer does not creep forward.
	if c.outPos > len(c.out.B)/2 {
		c.out.B = c.out.B[:copy(c.out.B, c.out.B[c.outPos:])]
		c.outPos = 0
	}
}

// settle applies what a callback or I/O decided: closes c if it must, and
// otherwise sets read and write interest from its output (backpressure).
func (l *loop) settle(c *Conn) {
	if c.isClosed() {
		return
	}
	if c.flags&flagAbort != 0 {
		l.closeConn(c, c.closeErr)
		return
	}
	if c.flags&flagStalled != 0 {
		l.resumeStalled(c)
		if c.flags&flagAbort != 0 {
			l.closeConn(c, c.closeErr)
			return
		}
	}
	pending := c.pending()
	if c.flags&flagClosing != 0 && pending == 0 && l.closeUnlessQueued(c) {
		return
	}
	flags := c.flags
	if pending > l.srv.opts.OutputHighWater {
		if flags&flagPaused == 0 {
			l.counters.pauses.Add(1)
		}
		flags |= flagPaused
	} else if pending <= l.srv.opts.OutputLowWater {
		flags &^= flagPaused
	}
	// A closing conn waiting for its queued tasks has neither interest; the
	// wake that queued them brings the loop back.
	read := flags&(flagPaused|flagClosing) == 0
	write := pending > 0
	flags &^= flagReading | flagWriting
	if read {
		flags |= flagReading
	}
	if write {
		flags |= flagWriting
	}
	if flags&(flagReading|flagWriting) != c.flags&(flagReading|flagWriting) {
		if err := l.poller.modify(c.fd, read, write); err != nil {
			l.closeConn(c, err)
			return
		}
	}
	c.flags = flags
	if flags&(flagDrainInput|flagClosing|flagDrainCheck) == flagDrainInput && pending == 0 {
		// Draining with nothing left to write: the socket may be empty,
		// and then no readiness event would ever come to let c close.
		// Read it once more, next cycle (not from here: settle runs
		// after reads).
		c.flags |= flagDrainCheck
		l.drainChecks = append(l.drainChecks, c)
	}
}

// runDrainChecks reads each connection queued by settle while draining;
// a read that finds the socket empty marks it closing.
func (l *loop) runDrainChecks() {
	checks := l.drainChecks
	l.drainChecks = l.spareChecks[:0]
	for i, c := range checks {
		c.flags &^= flagDrainCheck
		if !c.isClosed() && c.flags&flagReading != 0 {
			l.loopRead(c)
		}
		checks[i] = nil
	}
	l.spareChecks = checks[:0]
}

// resumeStalled presents the input OnTraffic left while c's output was
// full once the output has drained below the low-water mark, and again
// while each round drains, so a pipeline the peer sent in one go is
// answered without the peer sending anything more. A handler that called
// Close has given up its input.
func (l *loop) resumeStalled(c *Conn) {
	for c.flags&flagStalled != 0 && c.pending() <= l.srv.opts.OutputLowWater {
		c.flags &^= flagStalled
		if c.flags&(flagCloseCalled|flagAbort) != 0 || c.in == nil {
			return
		}
		l.deliver(c, nil)
		l.loopFlush(c)
	}
}

// abort marks c to be closed at the next settle point, dropping its output,
// and logs why unless the handler has an OnClose, which is told why and
// can say more about whom it closed (once: not twice).
func (l *loop) abort(c *Conn, err error) {
	if c.flags&flagAbort != 0 {
		return
	}
	c.flags |= flagAbort
	c.closeErr = err
	l.counters.noteAbort(err)
	if c.ln.onClose == nil {
		l.srv.opts.Logger.Warn("eventloop: closing connection", "fd", c.fd, "reason", err.Error())
	}
}

func (l *loop) expire(c *Conn) {
	l.counters.idle.Add(1)
	l.closeConn(c, fmt.Errorf("%w: no traffic for %v", ErrIdleTimeout, l.srv.opts.IdleTimeout))
}

// closeUnlessQueued closes c gracefully unless AsyncWrite or Execute tasks
// for it are queued: those were accepted, so they run first. It reports
// whether c was closed.
func (l *loop) closeUnlessQueued(c *Conn) bool {
	l.mu.Lock()
	if c.queued.Load() > 0 {
		l.mu.Unlock()
		return false
	}
	c.closed.Store(true) // under mu: no task for c can be queued after this
	l.mu.Unlock()
	l.release(c, c.closeErr, c.flags&flagPeerClosed == 0)
	return true
}

// closeConn closes c now, dropping its output and queued tasks.
func (l *loop) closeConn(c *Conn, err error) {
	if c.isClosed() {
		return
	}
	l.mu.Lock()
	c.closed.Store(true)
	l.mu.Unlock()
	l.release(c, err, false)
}

// release runs OnClose and frees c's buffers and descriptor. OnClose runs
// before the descriptor is closed, so c's addresses still work there. A
// graceful close lingers: see linger.
func (l *loop) release(c *Conn, err error, graceful bool) {
	if h := c.ln.onClose; h != nil && (c.ln.tls == nil || l.tlsOpened(c)) {
		l.onClose(h, c, err)
	}
	if c.ln.tls != nil {
		l.tlsRelease(c, graceful)
	}
	if c.in != nil {
		l.inBufs.put(c.in)
		c.in = nil
	}
	if c.out != nil {
		l.outBufs.put(c.out)
		c.out, c.outPos = nil, 0
	}
	l.dropBacklog(c)
	if graceful && l.linger(c) {
		return
	}
	l.closeFd(c)
}

// closeFd closes c's descriptor, which also drops it from the poller.
func (l *loop) closeFd(c *Conn) {
	l.conns[c.fd] = nil
	unix.Close(c.fd)
	l.numConns--
	l.assigned.Add(-1)
	l.srv.numConns.Add(-1)
}

// linger half-closes c after its last reply and keeps reading, discarding
// what arrives, until the peer closes, or the peer has acknowledged every
// reply and sent nothing more, or lingerTimeout passes. Closing a socket
// with unread input, or one that input reaches later, makes the kernel
// send a reset and drop what it has not yet delivered, and some peers'
// kernels drop what they received but the application has not read; the
// peer that pipelined past a QUIT, or was still sending when Shutdown
// began, would lose answers it was owed. The descriptor stays counted (it
// is still open) but the handler is done with c. It reports false if
// there is nothing to wait for or the socket cannot linger; the caller
// then closes it.
func (l *loop) linger(c *Conn) bool {
	if socketSettled(c.fd) {
		return false
	}
	if unix.Shutdown(c.fd, unix.SHUT_WR) != nil {
		return false
	}
	if c.flags&flagReading == 0 || c.flags&flagWriting != 0 {
		if l.poller.modify(c.fd, true, false) != nil {
			return false
		}
	}
	c.flags = flagLingering
	l.lingering = append(l.lingering, lingerer{c, l.now + lingerTimeout})
	return true
}

// lingerer is a lingering connection and the loop clock at which its
// lingering close gives up.
type lingerer struct {
	c     *Conn
	until time.Duration
}

// lingerRead discards what a lingering connection receives and closes it
// once the peer has closed.
func (l *loop) lingerRead(c *Conn) {
	for i := 0; i < maxReadsPerEvent; i++ {
		n, err := readFd(c.fd, l.buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != nil || n == 0 {
			l.endLinger(c)
			return
		}
		c.flags |= flagDiscarded
	}
}

func (l *loop) endLinger(c *Conn) {
	if c.flags&flagLingering != 0 {
		c.flags &^= flagLingering
		l.closeFd(c)
	}
}

// sweepLingering forgets connections whose lingering ended, and ends the
// ones whose time is up or whose peer has acknowledged everything without
// sending more (a peer still sending is left to close first).
func (l *loop) sweepLingering() {
	kept := l.lingering[:0]
	for _, lc := range l.lingering {
		c := lc.c
		if c.flags&flagLingering != 0 {
			quiet := c.flags&flagDiscarded == 0 && socketSettled(c.fd)
			if quiet || l.now >= lc.until {
				l.endLinger(c)
			}
		}
		if c.flags&flagLingering != 0 {
			kept = append(kept, lc)
		}
	}
	clear(l.lingering[len(kept):])
	l.lingering = kept
}

// discard closes an accepted descriptor the loop will not serve.
func (l *loop) discard(fd int) {
	unix.Close(fd)
	l.assigned.Add(-1)
	l.srv.numConns.Add(-1)
}

func (l *loop) markDirty(c *Conn) {
	if c.flags&flagDirty == 0 {
		c.flags |= flagDirty
		l.dirty = append(l.dirty, c)
	}
}
