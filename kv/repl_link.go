package kv

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
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
	conn   net.Conn // the current connection, nil between attempts

	cl      *client // the primary's client: its commands run as this client
	pending int64   // bytes of a transaction applied but not yet counted (MULTI ... EXEC)
	lastAck time.Time
}

func newMasterLink(h *Handler, host string, port int, prev *masterLink) *masterLink {
	l := &masterLink{h: h, host: host, port: port, prev: prev, quit: make(chan struct{}), done: make(chan struct{})}
	l.cl = &client{h: h, proto: 2, authed: true, valueDigits: 1, conn: &masterConn{link: l},
		id: h.clients.nextID.Add(1), addr: net.JoinHostPort(host, strconv.Itoa(port)), createdAt: nowMillis()}
	l.cl.parser.Limits = &h.opts.Limits
	l.cl.stats = h.cmdStats.forLoop(-1)
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
			r.downSince.Store(time.Now().Unix())
		}
		r.state.Store(linkConnect)
		h.updateReplGuard()
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
	r.state.Store(linkConnecting)
	timeout := time.Duration(h.params.Int("repl-timeout")) * time.Second
	conn, err := net.DialTimeout("tcp", l.addr(), timeout)
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
	r.state.Store(linkHandshake)
	br := bufio.NewReaderSize(conn, 1<<20)
	resync, err := l.handshake(conn, br, timeout)
	if err != nil {
		return err
	}
	if resync.Full {
		if err := l.fullSync(conn, br, resync, timeout); err != nil {
			return err
		}
	} else {
		l.continued(resync)
	}
	l.resetClient()
	if resync.Full {
		l.cl.selected.Store(0)
	}
	// While connected the primary is a client of ours, as in Redis: CLIENT
	// LIST shows it, CLIENT KILL TYPE master drops the link.
	h.clients.add(l.cl)
	defer h.clients.remove(l.cl)
	r.state.Store(linkConnected)
	r.synced.Store(true)
	r.downSince.Store(0)
	h.updateReplGuard()
	h.opts.Logger.Info("MASTER <-> REPLICA sync: the stream is flowing", "primary", l.addr(), "offset", r.offset.Load())
	return l.stream(conn, br, timeout)
}

// handshake runs PING, AUTH, REPLCONF and PSYNC as redis-server's replica
// does, and returns the primary's answer to PSYNC.
func (l *masterLink) handshake(conn net.Conn, br *bufio.Reader, timeout time.Duration) (repl.Resync, error) {
	h, r := l.h, &l.h.repl
	ask := func(args ...string) (string, error) {
		var b []byte
		b = resp.AppendArrayHeader(b, len(args))
		for _, a := range args {
			b = resp.AppendBulkString(b, a)
		}
		_ = conn.SetDeadline(time.Now().Add(timeout))
		if _, err := conn.Write(b); err != nil {
			return "", err
		}
		line, err := repl.ReadLine(br, l.touch)
		if err == nil {
			l.touch()
		}
		return line, err
	}
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
	if o := r.offset.Load(); o > 0 {
		r.mu.Lock()
		id, off = r.id, strconv.FormatInt(o+1, 10)
		r.mu.Unlock()
	}
	if reply, err = ask("PSYNC", id, off); err != nil {
		return repl.Resync{}, fmt.Errorf("PSYNC: %w", err)
	}
	return repl.ParsePSYNCReply(reply)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && ascii.EqualFold([]byte(s[:len(prefix)]), prefix)
}

// touch records activity from the primary.
func (l *masterLink) touch() { l.h.repl.lastIO.Store(time.Now().UnixMilli()) }

// fullSync receives the snapshot into a temporary file in the working
// directory, as Redis does, and loads it in place of the data set; the
// history becomes the primary's from resync.Offset. A snapshot cut short
// leaves the data set as it was.
func (l *masterLink) fullSync(conn net.Conn, br *bufio.Reader, resync repl.Resync, timeout time.Duration) error {
	h, r := l.h, &l.h.repl
	log := h.opts.Logger
	r.state.Store(linkTransfer)
	log.Info("full resync from the primary", "primary", l.addr(), "replid", resync.ID, "offset", resync.Offset)
	_ = conn.SetDeadline(time.Now().Add(timeout))
	header, err := repl.ReadLine(br, func() {
		l.touch()
		_ = conn.SetDeadline(time.Now().Add(timeout))
	})
	if err != nil {
		return fmt.Errorf("reading the snapshot's header: %w", err)
	}
	payload, err := repl.ParsePayloadHeader(header)
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("temp-%d.%d.rdb", time.Now().Unix(), os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("creating %s for the snapshot: %w", tmp, err)
	}
	defer os.Remove(tmp) // renamed away when the load succeeds
	r.syncTotal.Store(max(payload.Length, 0))
	r.syncRead.Store(0)
	n, err := repl.CopyPayload(f, br, payload, func(n int64) {
		r.syncRead.Store(n)
		l.touch()
		_ = conn.SetDeadline(time.Now().Add(timeout))
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
	if err := os.Rename(tmp, h.params.Get("dbfilename")); err != nil {
		log.Warn("keeping the primary's snapshot as dbfilename failed", "err", err)
	}
	r.mu.Lock()
	r.id, r.id2, r.secondOffset = resync.ID, repl.NoID, -1
	r.offset.Store(resync.Offset)
	r.readOffset.Store(resync.Offset)
	r.mu.Unlock()
	log.Info("MASTER <-> REPLICA sync: finished with success", "bytes", n, "keys", st.Keys, "expired_skipped", st.Expired)
	return nil
}

// continued takes up the history after +CONTINUE: a new ID from the
// primary (it was promoted since) moves ours to id2, as Redis does.
func (l *masterLink) continued(resync repl.Resync) {
	r := &l.h.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if resync.ID != "" && resync.ID != r.id {
		r.id2, r.secondOffset, r.id = r.id, r.offset.Load()+1, resync.ID
	}
	r.readOffset.Store(r.offset.Load())
	l.h.opts.Logger.Info("MASTER <-> REPLICA sync: partial resynchronization accepted", "primary", l.addr(), "replid", r.id, "offset", r.offset.Load())
}

// stream reads the primary's commands and applies them until the link
// fails, acknowledging the offset every second.
func (l *masterLink) stream(conn net.Conn, br *bufio.Reader, timeout time.Duration) error {
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
		_ = conn.SetReadDeadline(time.Now().Add(ackEvery))
		n, err := br.Read(chunk)
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
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if idle := time.Since(time.UnixMilli(r.lastIO.Load())); idle > timeout {
					return fmt.Errorf("no data from the primary for %v (repl-timeout)", idle.Round(time.Second))
				}
				continue
			}
			return err
		}
	}
	return errors.New("stopped")
}

// ack sends REPLCONF ACK with the offset applied.
func (l *masterLink) ack(conn net.Conn) error {
	l.lastAck = time.Now()
	var b []byte
	b = resp.AppendArrayHeader(b, 3)
	b = resp.AppendBulkString(b, "REPLCONF")
	b = resp.AppendBulkString(b, "ACK")
	b = resp.AppendBulkString(b, strconv.FormatInt(l.h.repl.offset.Load(), 10))
	_ = conn.SetWriteDeadline(time.Now().Add(time.Duration(l.h.params.Int("repl-timeout")) * time.Second))
	_, err := conn.Write(b)
	return err
}
