package kv

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The MIGRATE side that talks to the target: one exchange (the pipeline
// written in 64 KiB chunks, then one reply line per command read), with
// Redis's retry (once, on a fresh connection, when nothing was read and
// the error was not a timeout: a cached connection the target closed), and
// Redis's cache of target connections (migrate_cached_sockets: at most 64,
// each closed after 10 s unused), which also remembers the database last
// selected so that SELECT is sent only when it changes. Everything here
// runs on the migration's goroutine, or on the loop inside EXEC or a
// script; a connection is taken out of the cache while one MIGRATE uses
// it, so no two use one at a time.

const (
	migrateCacheMax  = 64
	migrateCacheIdle = 10 * time.Second
	migrateChunk     = 64 << 10
	migrateLineMax   = 1024 // the longest reply line kept, as Redis's buffer
)

// migrateSocket is a connection to a MIGRATE target.
type migrateSocket struct {
	conn   net.Conn
	rd     *bufio.Reader
	lastDB int64 // the database selected on it; -1: unknown, SELECT next time
	idle   *time.Timer
}

// socketKey names a cached connection: the Handler's (tests run several
// in a process) to host:port as MIGRATE's arguments spell them.
type socketKey struct {
	h    *Handler
	addr string
}

var migrateSockets struct {
	mu sync.Mutex
	m  map[socketKey]*migrateSocket
}

// takeSocket takes the cached connection to key out of the cache, or
// returns nil.
func takeSocket(key socketKey) *migrateSocket {
	c := &migrateSockets
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.m[key]
	if s != nil {
		delete(c.m, key)
		s.idle.Stop()
	}
	return s
}

// putSocket caches s for key, for 10 s; if one is cached already, or the
// cache is full and no other can go, s is closed instead.
func putSocket(key socketKey, s *migrateSocket) {
	c := &migrateSockets
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[key] != nil {
		_ = s.conn.Close()
		return
	}
	if c.m == nil {
		c.m = make(map[socketKey]*migrateSocket)
	}
	if len(c.m) >= migrateCacheMax {
		for k, old := range c.m { // a random one, as Redis evicts
			delete(c.m, k)
			old.idle.Stop()
			_ = old.conn.Close()
			break
		}
	}
	c.m[key] = s
	s.idle = time.AfterFunc(migrateCacheIdle, func() {
		c.mu.Lock()
		mine := c.m[key] == s
		if mine {
			delete(c.m, key)
		}
		c.mu.Unlock()
		if mine {
			_ = s.conn.Close()
		}
	})
}

// dialMigrate connects to host and port (read as C's atoi reads it, as
// Redis does: "x" is port 0, which fails).
func dialMigrate(host, port string, timeout time.Duration) (*migrateSocket, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(atoiPrefix(port))))
	if err != nil {
		return nil, err
	}
	return &migrateSocket{conn: conn, rd: bufio.NewReaderSize(conn, 4096), lastDB: -1}, nil
}

// atoiPrefix is C's atoi: leading blanks, a sign, then digits as far as
// they go; 0 when there are none.
func atoiPrefix(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<20; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// errEmptyLine: the target sent an empty line, which Redis's reader takes
// for a failed read too.
var errEmptyLine = errors.New("empty reply line")

// readLine reads one reply line within timeout, without its CR LF; a
// longer line than Redis keeps is cut, the rest read and dropped.
func (s *migrateSocket) readLine(timeout time.Duration) ([]byte, error) {
	_ = s.conn.SetReadDeadline(time.Now().Add(timeout))
	var line []byte
	for {
		part, err := s.rd.ReadSlice('\n')
		if room := migrateLineMax - 1 - len(line); room > 0 {
			line = append(line, part[:min(len(part), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	if len(line) == 0 {
		return nil, errEmptyLine
	}
	return line, nil
}

// refusedAfterConnect reports whether Redis would have seen err only at
// its first write: its connect is non-blocking and succeeds once the
// socket turns writable, which a refused or unreachable peer makes it,
// so such a target is a write error (retried once), not a connect error.
// A name that does not resolve, or a timeout, fails the connect itself.
func refusedAfterConnect(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH)
}

func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// transfer sends m's keys to the target and reads its answers: the
// client's reply, and the keys it restored.
func (h *Handler) transfer(m *migration) migrateResult {
	if h.isSelf(m.host, m.port) {
		// Redis, blocked in the command, cannot answer itself and times
		// out; Shoal could, and with REPLACE into the same database would
		// then delete the key it had just restored.
		return migrateResult{reply: errorLine(errMigrateReading)}
	}
	key := socketKey{h, m.host + ":" + m.port}
	mayRetry := true
	for {
		s := takeSocket(key)
		if s == nil {
			var err error
			if s, err = dialMigrate(m.host, m.port, m.timeout); err != nil {
				if !refusedAfterConnect(err) {
					return migrateResult{reply: errorLine(errMigrateConnect)}
				}
				if !mayRetry {
					return migrateResult{reply: errorLine(errMigrateWriting)}
				}
				mayRetry = false
				continue
			}
		}
		res, retry := m.exchange(key, s, h.now(), mayRetry)
		if !retry {
			return res
		}
		mayRetry = false
	}
}

func errorLine(msg string) []byte { return []byte("-" + msg + "\r\n") }

// exchange writes the pipeline to s and reads the replies, as Redis's
// migrateCommand does: the first error of AUTH, SELECT or a RESTORE is the
// reply (and the keys restored before and after it are still deleted);
// a failed read ends it. It reports retry when the caller should try once
// more on a fresh connection: s is closed then. s goes back to the cache
// unless its reads failed.
func (m *migration) exchange(key socketKey, s *migrateSocket, now int64, mayRetry bool) (res migrateResult, retry bool) {
	selectDB := s.lastDB != m.db
	buf, sent := m.appendRestores(nil, selectDB, now)
	for pos := 0; pos < len(buf); {
		n := min(len(buf)-pos, migrateChunk)
		_ = s.conn.SetWriteDeadline(time.Now().Add(m.timeout))
		if _, err := s.conn.Write(buf[pos : pos+n]); err != nil {
			return m.failed(s, err, errMigrateWriting, mayRetry)
		}
		pos += n
	}
	var authLine, selectLine []byte
	var err error
	if m.auth {
		if authLine, err = s.readLine(m.timeout); err != nil {
			return m.failed(s, err, errMigrateReading, mayRetry)
		}
	}
	if selectDB {
		if selectLine, err = s.readLine(m.timeout); err != nil {
			return m.failed(s, err, errMigrateReading, mayRetry)
		}
	}
	targetErr := false
	j := 0
	for ; j < len(sent); j++ {
		var line []byte
		if line, err = s.readLine(m.timeout); err != nil {
			break
		}
		switch {
		case isErrorLine(authLine) || isErrorLine(selectLine) || isErrorLine(line):
			if !targetErr {
				targetErr = true
				s.lastDB = -1
				first := line
				if isErrorLine(authLine) {
					first = authLine
				} else if isErrorLine(selectLine) {
					first = selectLine
				}
				res.reply = errorLine(errTargetReplied + string(first[1:]))
			}
		case !m.copy:
			res.acked = append(res.acked, sent[j])
		}
	}
	if err != nil {
		_ = s.conn.Close()
		if !targetErr && j == 0 && mayRetry && !isTimeout(err) {
			return res, true
		}
		if !targetErr {
			res.reply = errorLine(errMigrateReading)
		}
		return res, false
	}
	if !targetErr {
		s.lastDB = m.db
		res.reply = []byte("+OK\r\n")
	}
	putSocket(key, s)
	return res, false
}

// failed ends an exchange whose write, or AUTH's or SELECT's read, failed:
// nothing was restored. It closes s and asks for the retry if one is due.
func (m *migration) failed(s *migrateSocket, err error, msg string, mayRetry bool) (migrateResult, bool) {
	_ = s.conn.Close()
	if mayRetry && !isTimeout(err) {
		return migrateResult{}, true
	}
	return migrateResult{reply: errorLine(msg)}, false
}

func isErrorLine(line []byte) bool { return len(line) > 0 && line[0] == '-' }

// isSelf reports whether host and port name this server's own RESP
// listener: its port, at a loopback, unspecified or local address.
func (h *Handler) isSelf(host, port string) bool {
	ours, _, _, _ := h.listener()
	if ours == 0 || atoiPrefix(port) != ours {
		return false
	}
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		var err error
		if ips, err = net.LookupIP(host); err != nil {
			return false
		}
	}
	local, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsUnspecified() {
			return true
		}
		for _, a := range local {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}
