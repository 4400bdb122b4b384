package kv

import (
	"github.com/shoalkv/shoal/internal/targetconn"
)

// The MIGRATE side that talks to the target, over package targetconn's
// connections: one exchange (the pipeline written, then one reply line
// per command read), with Redis's retry (once, on a fresh connection, when
// nothing was read and the error was not a timeout: a cached connection
// the target closed), and Redis's cache of target connections, which also
// remembers the database last selected so that SELECT is sent only when
// it changes. It runs on the migration's goroutine, or on the loop inside
// EXEC or a script.

// migrateConns is every Handler's cache of target connections, by
// (Handler, host:port).
var migrateConns targetconn.Cache

// transfer sends m's keys to the target and reads its answers: the
// client's reply, and the keys it restored.
func (h *Handler) transfer(m *migration) migrateResult {
	if port, _, _, _ := h.listener(); port != 0 && targetconn.Atoi(m.port) == port && targetconn.IsLocal(m.host) {
		// This server itself. Redis, blocked in the command, cannot
		// answer itself and times out; Shoal could, and with REPLACE into
		// the same database would then delete the key it had restored.
		return migrateResult{reply: errorLine(errMigrateReading)}
	}
	key := targetconn.Key{Owner: h, Addr: m.host + ":" + m.port}
	mayRetry := true
	for {
		c := migrateConns.Take(key)
		if c == nil {
			var err error
			if c, err = targetconn.Dial(m.host, m.port, m.timeout); err != nil {
				if !targetconn.RefusedAfterConnect(err) {
					return migrateResult{reply: errorLine(errMigrateConnect)}
				}
				if !mayRetry {
					return migrateResult{reply: errorLine(errMigrateWriting)}
				}
				mayRetry = false
				continue
			}
		}
		res, retry := m.exchange(key, c, h.now(), mayRetry)
		if !retry {
			return res
		}
		mayRetry = false
	}
}

func errorLine(msg string) []byte { return []byte("-" + msg + "\r\n") }

// exchange writes the pipeline to c and reads the replies, as Redis's
// migrateCommand does: the first error of AUTH, SELECT or a RESTORE is the
// reply (and the keys restored before and after it are still deleted);
// a failed read ends it. It reports retry when the caller should try once
// more on a fresh connection: c is closed then. c goes back to the cache
// unless its reads failed.
func (m *migration) exchange(key targetconn.Key, c *targetconn.Conn, now int64, mayRetry bool) (res migrateResult, retry bool) {
	selectDB := c.LastDB != m.db
	buf, sent := m.appendRestores(nil, selectDB, now)
	if err := c.Write(buf, m.timeout); err != nil {
		return failed(c, err, errMigrateWriting, mayRetry)
	}
	var authLine, selectLine []byte
	var err error
	if m.auth {
		if authLine, err = c.ReadLine(m.timeout); err != nil {
			return failed(c, err, errMigrateReading, mayRetry)
		}
	}
	if selectDB {
		if selectLine, err = c.ReadLine(m.timeout); err != nil {
			return failed(c, err, errMigrateReading, mayRetry)
		}
	}
	targetErr := false
	j := 0
	for ; j < len(sent); j++ {
		var line []byte
		if line, err = c.ReadLine(m.timeout); err != nil {
			break
		}
		switch {
		case isErrorLine(authLine) || isErrorLine(selectLine) || isErrorLine(line):
			if !targetErr {
				targetErr = true
				c.LastDB = -1
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
		_ = c.Close()
		if !targetErr && j == 0 && mayRetry && !targetconn.IsTimeout(err) {
			return res, true
		}
		if !targetErr {
			res.reply = errorLine(errMigrateReading)
		}
		return res, false
	}
	if !targetErr {
		c.LastDB = m.db
		res.reply = []byte("+OK\r\n")
	}
	migrateConns.Put(key, c)
	return res, false
}

// failed ends an exchange whose write, or AUTH's or SELECT's read, failed:
// nothing was restored. It closes c and asks for the retry if one is due.
func failed(c *targetconn.Conn, err error, msg string, mayRetry bool) (migrateResult, bool) {
	_ = c.Close()
	if mayRetry && !targetconn.IsTimeout(err) {
		return migrateResult{}, true
	}
	return migrateResult{reply: errorLine(msg)}, false
}

func isErrorLine(line []byte) bool { return len(line) > 0 && line[0] == '-' }
