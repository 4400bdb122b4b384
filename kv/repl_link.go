package kv

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/repl"
)

// Backoff between attempts to reach the primary: doubled after each
// failure from the first to the last, and back to the first once a link
// has served.
const (
	linkRetryFirst = 250 * time.Millisecond
	linkRetryMax   = 5 * time.Second
)

// ackEvery is how often a replica tells its primary its offset
// (REPLCONF ACK), as Redis's replicationCron does every second.
const ackEvery = time.Second

// masterLink is one REPLICAOF: the goroutine that connects to the primary,
// syncs, applies the stream and reconnects until stop. Only that goroutine
// uses cl, the reader and the buffers; conn is also closed by stop and by
// CLIENT KILL of the primary (masterConn.Close).
type masterLink struct {
	h    *Handler
	host string
	port int
	prev *masterLink // the link this one replaces: it must be done first

	stopped atomic.Bool
	quit    chan struct{} // closed by stop
	done    chan struct{} // closed when run returns

	connMu sync.Mutex
	conn   *repl.Conn // the current connection, nil between attempts

	cl       *client // the primary's client: its commands run as this client
	tx       []byte  // the bytes of a transaction applied but not yet forwarded (MULTI ... EXEC)
	streamDB int     // repl-stream-db of the last full sync's snapshot
	// failover: the link of a FAILOVER, whose PSYNC asks the primary to
	// take over (failover.go) until it answered; psyncSent: the PSYNC of
	// the current session went out.
	failover, psyncSent bool
	lastAck             time.Time

	errors      int64     // commands of the primary that answered errors since errorLogged
	errorLogged time.Time // when noteError last logged
}

func newMasterLink(h *Handler, host string, port int, prev *masterLink) *masterLink {
	l := &masterLink{h: h, host: host, port: port, prev: prev, quit: make(chan struct{}), done: make(chan struct{})}
	l.cl = &client{h: h, proto: 2, authed: true, valueDigits: 1, conn: &masterConn{link: l},
		id: h.clients.nextID.Add(1), addr: repl.Addr(host, port), createdAt: nowMillis()}
	l.cl.parser.Limits = &h.opts.Limits
	l.cl.stats = h.cmdStats.forLoop(-1)
	l.cl.protoShown.Store(2) // CLIENT LIST's resp=
	l.cl.lastActive.Store(nowMillis())
	return l
}

// stop ends the link: the goroutine returns at its next step. It does not
// wait, since the goroutine may be waiting for the caller's loop (its
// exec gate).
func (l *masterLink) stop() {
	if l.stopped.Swap(true) {
		return
	}
	close(l.quit)
	l.closeConn()
}

func (l *masterLink) closeConn() {
	l.connMu.Lock()
	if l.conn != nil {
		_ = l.conn.Close()
	}
	l.connMu.Unlock()
}

func (l *masterLink) addr() string { return l.cl.addr }

// run connects, syncs and applies until stop, retrying with backoff.
func (l *masterLink) run() {
	defer close(l.done)
	if l.prev != nil {
		<-l.prev.done // no two links apply at once
		l.prev = nil
	}
	h, r := l.h, &l.h.repl
	log := h.opts.Logger
	wait := linkRetryFirst
	for !l.stopped.Load() {
		log.Info("connecting to the primary", "primary", l.addr())
		err := l.session()
		if l.stopped.Load() {
			return
		}
		if r.state.Load() == linkConnected {
			wait = linkRetryFirst
		}
		l.setState(linkConnect)
		log.Warn("the link to the primary is down; retrying", "primary", l.addr(), "reason", err, "retry_in", wait)
		select {
		case <-l.quit:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, linkRetryMax)
	}
}

// session is one connection to the primary: handshake, sync, stream. It
// returns why it ended.
func (l *masterLink) session() error {
	h, r := l.h, &l.h.repl
	l.setState(linkConnecting)
	conn, err := repl.Dial(l.addr(), time.Duration(h.params.Int("repl-timeout"))*time.Second)
	if err != nil {
		return err
	}
	l.connMu.Lock()
	l.conn = conn
	l.connMu.Unlock()
	defer func() {
		l.connMu.Lock()
		l.conn = nil
		l.connMu.Unlock()
		_ = conn.Close()
	}()
	if l.stopped.Load() {
		return errors.New("stopped")
	}
	l.setState(linkHandshake)
	l.psyncSent = false
	resync, err := l.handshake(conn)
	if l.failover && l.psyncSent {
		// As Redis: once PSYNC FAILOVER is sent, any answer but
		// +CONTINUE or +FULLRESYNC (or none) abandons the failover.
		l.failover = false
		if !h.failoverAnswered(err) {
			return fmt.Errorf("failover abandoned: %w", err)
		}
	}
	if err != nil {
		return err
	}
	if resync.Full {
		if err := l.fullSync(conn, resync); err != nil {
			return err
		}
	} else {
		l.continued(resync)
	}
	l.resetClient()
	if resync.Full {
		// The database the primary's stream had selected at the
		// snapshot's offset (its repl-stream-db): 0 from a primary,
		// which selects one before its next record, any from a replica
		// serving its primary's stream.
		l.cl.selected.Store(int32(l.streamDB))
	}
	// While connected the primary is a client of ours, as in Redis: CLIENT
	// LIST shows it, CLIENT KILL TYPE master drops the link.
	h.clients.add(l.cl)
	defer h.clients.remove(l.cl)
	if !l.setState(linkConnected) {
		return errors.New("stopped")
	}
	h.opts.Logger.Info("MASTER <-> REPLICA sync: the stream is flowing", "primary", l.addr(), "offset", r.offset.Load())
	return l.stream(conn)
}

// handshake runs PING, AUTH, REPLCONF and PSYNC as redis-server's replica
// does, and returns the primary's answer to PSYNC.
func (l *masterLink) handshake(conn *repl.Conn) (repl.Resync, error) {
	h, r := l.h, &l.h.repl
	ask := func(args ...string) (string, error) { return conn.Ask(l.touch, args...) }
	reply, err := ask("PING")
	if err != nil {
		return repl.Resync{}, fmt.Errorf("PING: %w", err)
	}
	// As Redis: -NOAUTH and -NOPERM are fine here, AUTH follows.
	if reply[0] == '-' && !hasPrefixFold(reply, "-NOAUTH") && !hasPrefixFold(reply, "-NOPERM") && !hasPrefixFold(reply, "-ERR operation not permitted") {
		return repl.Resync{}, fmt.Errorf("error reply to PING from the primary: %s", reply)
	}
	if pass := h.params.Get("masterauth"); pass != "" {
		args := []string{"AUTH", pass}
		if user := h.params.Get("masteruser"); user != "" {
			args = []string{"AUTH", user, pass}
		}
		if reply, err = ask(args...); err != nil {
			return repl.Resync{}, fmt.Errorf("AUTH: %w", err)
		}
		if reply[0] == '-' {
			return repl.Resync{}, fmt.Errorf("unable to AUTH to the primary: %s", reply)
		}
	}
	port, _, _, _ := h.listener()
	if reply, err = ask("REPLCONF", "listening-port", strconv.Itoa(port)); err != nil {
		return repl.Resync{}, err
	}
	if reply[0] == '-' {
		h.opts.Logger.Info("(non critical) the primary does not understand REPLCONF listening-port", "reply", reply)
	}
	if reply, err = ask("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return repl.Resync{}, err
	}
	if reply[0] == '-' {
		h.opts.Logger.Info("(non critical) the primary does not understand REPLCONF capa", "reply", reply)
	}
	id, off := "?", "-1"
	if o := r.offset.Load(); o > 0 || l.failover {
		r.mu.Lock()
		id, off = r.id, strconv.FormatInt(o+1, 10)
		r.mu.Unlock()
	}
	psync := []string{"PSYNC", id, off}
	if l.failover {
		psync = append(psync, "FAILOVER")
	}
	l.psyncSent = true
	if reply, err = ask(psync...); err != nil {
		return repl.Resync{}, fmt.Errorf("PSYNC: %w", err)
	}
	return repl.ParsePSYNCReply(reply)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && ascii.EqualFold([]byte(s[:len(prefix)]), prefix)
}

// setState moves the link state, if l is still the current link: a link
// that REPLICAOF replaced or stopped no longer speaks for the node. Going
// up or down also records when, and the guard bits follow.
func (l *masterLink) setState(st int32) bool {
	r := &l.h.repl
	r.mu.Lock()
	if r.link != l {
		r.mu.Unlock()
		return false
	}
	switch prev := r.state.Swap(st); {
	case st == linkConnected:
		r.downSince.Store(0)
	case prev == linkConnected:
		r.downSince.Store(time.Now().Unix())
	}
	r.mu.Unlock()
	l.h.updateReplGuard()
	return true
}

// touch records activity from the primary.
func (l *masterLink) touch() { l.h.repl.lastIO.Store(time.Now().UnixMilli()) }

// fullSync receives the snapshot into a temporary file in the working
// directory, as Redis does, and loads it in place of the data set; the
// history becomes the primary's from resync.Offset. A snapshot cut short
// leaves the data set as it was.
func (l *masterLink) fullSync(conn *repl.Conn, resync repl.Resync) error {
	h, r := l.h, &l.h.repl
	log := h.opts.Logger
	l.setState(linkTransfer)
	log.Info("full resync from the primary", "primary", l.addr(), "replid", resync.ID, "offset", resync.Offset)
	tmp := fmt.Sprintf("temp-%d.%d.rdb", time.Now().Unix(), os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("creating %s for the snapshot: %w", tmp, err)
	}
	defer os.Remove(tmp) // renamed away when the load succeeds
	n, err := conn.ReadPayload(f, l.touch, func(n int64, p repl.Payload) {
		r.syncTotal.Store(max(p.Length, 0))
		r.syncRead.Store(n)
		l.touch()
	})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the snapshot from the primary broke off after %d bytes; the old data set stays: %w", n, err)
	}
	if l.stopped.Load() {
		return errors.New("stopped")
	}
	st, err := h.loadSyncPayload(tmp)
	if err != nil {
		return fmt.Errorf("the snapshot from the primary (%d bytes) does not load; the old data set stays: %w", n, err)
	}
	// Redis keeps the snapshot as its dump.rdb. Shoal does so only with a
	// save policy: without one (its default) no dump.rdb is left behind to
	// be loaded by the next start in that directory, as Redis deletes it
	// with rdb-del-sync-files when nothing is persisted.
	if h.params.Get("save") != "" {
		if err := os.Rename(tmp, h.params.Get("dbfilename")); err != nil {
			log.Warn("keeping the primary's snapshot as dbfilename failed", "err", err)
		}
	}
	r.mu.Lock()
	if r.link != l {
		r.mu.Unlock()
		return errors.New("stopped")
	}
	r.id, r.id2, r.secondOffset = resync.ID, repl.NoID, -1
	r.offset.Store(resync.Offset)
	r.readOffset.Store(resync.Offset)
	// A new backlog from the primary's offset, as Redis's replica creates
	// one after a full sync: the stream that follows enters it.
	p := &h.primary
	p.mu.Lock()
	p.backlog = repl.NewBacklog(int(p.backlogSize), resync.Offset)
	p.mu.Unlock()
	r.mu.Unlock()
	l.streamDB = st.ReplStreamDB
	if l.streamDB < 0 || l.streamDB >= len(h.dbs) {
		l.streamDB = 0
	}
	// This node's replicas followed the old data set: they come back and
	// sync from the new one.
	h.dropReplicas(errNewHistory)
	log.Info("MASTER <-> REPLICA sync: finished with success", "bytes", n, "keys", st.Keys, "expired_skipped", st.Expired)
	return nil
}

// continued takes up the history after +CONTINUE: a new ID from the
// primary (it was promoted since) moves ours to id2, as Redis does.
func (l *masterLink) continued(resync repl.Resync) {
	r := &l.h.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.link != l {
		return
	}
	newID := resync.ID != "" && resync.ID != r.id
	if newID {
		r.id2, r.secondOffset, r.id = r.id, r.offset.Load()+1, resync.ID
	}
	p := &l.h.primary
	p.mu.Lock()
	if p.backlog == nil { // restarted from a snapshot with its history (repl-id)
		p.backlog = repl.NewBacklog(int(p.backlogSize), r.offset.Load())
	}
	p.mu.Unlock()
	r.readOffset.Store(r.offset.Load())
	l.h.opts.Logger.Info("MASTER <-> REPLICA sync: partial resynchronization accepted", "primary", l.addr(), "replid", r.id, "offset", r.offset.Load())
	if newID {
		// This node's replicas reconnect to learn the new ID (PSYNC2).
		defer l.h.dropReplicas(errNewHistory)
	}
}

// stream reads the primary's commands and applies them until the link
// fails, acknowledging the offset every second.
func (l *masterLink) stream(conn *repl.Conn) error {
	r := &l.h.repl
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 64<<10)
	l.lastAck = time.Time{}
	for !l.stopped.Load() {
		if time.Since(l.lastAck) >= ackEvery {
			if err := l.ack(conn); err != nil {
				return err
			}
		}
		n, err := conn.Read(chunk, ackEvery)
		if n > 0 {
			l.touch()
			r.readOffset.Add(int64(n))
			buf = append(buf, chunk[:n]...)
			used, aerr := l.apply(conn, buf)
			buf = buf[:copy(buf, buf[used:])]
			if aerr != nil {
				return aerr
			}
			if cap(buf) > 1<<20 && len(buf) < 64<<10 {
				buf = append(make([]byte, 0, 64<<10), buf...)
			}
		}
		if errors.Is(err, repl.ErrNoData) {
			if idle := time.Since(time.UnixMilli(r.lastIO.Load())); idle > conn.Timeout {
				return fmt.Errorf("no data from the primary for %v (repl-timeout)", idle.Round(time.Second))
			}
		} else if err != nil {
			return err
		}
	}
	return errors.New("stopped")
}

// ack sends REPLCONF ACK with the offset applied.
func (l *masterLink) ack(conn *repl.Conn) error {
	l.lastAck = time.Now()
	return conn.Ack(l.h.repl.offset.Load())
}
