package eventloop

import "golang.org/x/sys/unix"

// ReadAheadHandler is a Handler that is shown, once per poll, what each of
// the connections the poll found ready has sent, before any of it is handed
// to OnTraffic. A handler uses it to start what the requests will need all
// at once, such as bringing the keys they name into the CPU caches: the
// cache misses of different connections then overlap, where one
// connection's request after another's would pay them in series. It must
// not keep ins or change them, nor write to the connections; each
// connection's bytes then reach OnTraffic as usual. It is called only when
// a poll found at least two such connections.
//
// The native engine reads ahead for plaintext connections that have no
// partial request waiting; another engine, or a TLS port, never calls it.
type ReadAheadHandler interface {
	ReadAhead(conns []*Conn, ins [][]byte)
}

// readAhead is a loop's read-ahead state: the buffer the first read of
// each ready connection goes to, and what each read returned.
type readAhead struct {
	buf    []byte  // made with the first read-ahead; ReadBufferSize
	stages []stage // by Conn.stage-1
	conns  []*Conn // lent to ReadAhead
	ins    [][]byte
}

// stage is one connection's first read of a cycle, made before the
// cycle's OnTraffic calls.
type stage struct {
	c   *Conn
	buf []byte // where the read went: its data is buf[:n]
	n   int
	err error
}

// minReadAhead is the room below which the remaining connections of a
// poll are read as usual, one after another.
const minReadAhead = 4 << 10

// stageReads reads once from each of the n events' connections that can
// read ahead, then shows the data to their handlers (ReadAhead), before the
// events are handled: loopRead then starts with the staged read.
func (l *loop) stageReads(n int) {
	ra := &l.ahead
	if ra.buf == nil {
		ra.buf = make([]byte, l.srv.opts.ReadBufferSize)
	}
	ra.stages = ra.stages[:0]
	off, shown := 0, 0
	for i := 0; i < n; i++ {
		fd, ok := l.poller.readableFd(i)
		if !ok {
			continue
		}
		c := l.conn(fd)
		if c == nil || c.ln.readAhead == nil || c.ln.tls != nil || c.in != nil || c.stage != 0 ||
			c.flags&flagReading == 0 || c.flags&(flagLingering|flagPaused|flagClosing|flagAbort) != 0 || c.isClosed() {
			continue
		}
		room := ra.buf[off:]
		if len(room) < minReadAhead {
			break
		}
		got, err := readFd(fd, room)
		if err == unix.EINTR {
			continue
		}
		got = max(got, 0)
		ra.stages = append(ra.stages, stage{c: c, buf: room, n: got, err: err})
		c.stage = uint16(len(ra.stages))
		off += got
		if got > 0 {
			shown++
		}
	}
	if shown < 2 {
		return
	}
	for _, ln := range l.srv.listeners {
		if ln.readAhead == nil {
			continue
		}
		ra.conns, ra.ins = ra.conns[:0], ra.ins[:0]
		for i := range ra.stages {
			if st := &ra.stages[i]; st.c.ln == ln && st.n > 0 {
				ra.conns = append(ra.conns, st.c)
				ra.ins = append(ra.ins, st.buf[:st.n:st.n])
			}
		}
		if len(ra.conns) > 0 {
			l.onReadAhead(ln.readAhead, ra.conns, ra.ins)
		}
		clear(ra.conns)
		clear(ra.ins)
	}
}

// takeStage returns c's staged read and clears it; ok is false if c has
// none.
func (l *loop) takeStage(c *Conn) (buf []byte, n int, err error, ok bool) {
	if c.stage == 0 {
		return nil, 0, nil, false
	}
	st := &l.ahead.stages[c.stage-1]
	c.stage = 0
	return st.buf, st.n, st.err, true
}

// finishStages hands over what a connection read ahead but was not read in
// the cycle (an event the cycle skipped after all): the data is delivered
// rather than lost. Then the stages are forgotten.
func (l *loop) finishStages() {
	ra := &l.ahead
	for i := range ra.stages {
		if c := ra.stages[i].c; c.stage != 0 && !c.isClosed() {
			l.loopRead(c)
		}
		ra.stages[i].c.stage = 0
	}
	clear(ra.stages)
	ra.stages = ra.stages[:0]
}
