package kv

import (
	"github.com/shoalkv/shoal/internal/ascii"
)

// ACL LOG: the refusals of the ACL (commands, keys, channels) and failed
// authentications, newest first, as Redis 7.0 keeps them. A refusal like
// one of the ten newest entries (same reason, context, object and user,
// within a minute) counts there instead of adding an entry.

// Where a refusal happened (the log's context).
const (
	aclCtxToplevel = iota
	aclCtxMulti
	aclCtxLua
)

var aclContexts = [...]string{aclCtxToplevel: "toplevel", aclCtxMulti: "multi", aclCtxLua: "lua"}

var aclReasons = [...]string{aclDeniedCmd: "command", aclDeniedKey: "key", aclDeniedAuth: "auth", aclDeniedChannel: "channel"}

// aclLogGrouping is how far apart in time two refusals may be and still
// count in one entry (Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA).
const aclLogGrouping = 60000

type aclLogEntry struct {
	count    int64
	reason   int
	context  int
	object   string
	username string
	ctime    int64  // unix ms of the last refusal counted
	cinfo    string // CLIENT LIST line of the last refused client
}

// aclLogDenied logs a refusal of cmd for cl (whose client info is shown:
// for a script, the caller).
func (h *Handler) aclLogDenied(cl, shown *client, reason, ctx int, cmd *command, args [][]byte, pos int) {
	object := cmd.name
	if reason != aclDeniedCmd && pos < len(args) {
		object = string(args[pos])
	}
	h.aclLog(shown, reason, ctx, cl.aclUserName(cl.aclUser()), object)
}

// aclLog adds an entry or counts it in a matching one.
func (h *Handler) aclLog(cl *client, reason, ctx int, username, object string) {
	now := nowMillis()
	cinfo := string(appendClientInfo(nil, cl, now))
	a := &h.acl
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := 0; i < len(a.log) && i < 10; i++ {
		e := a.log[i]
		if e.reason == reason && e.context == ctx && e.object == object && e.username == username && abs64(now-e.ctime) <= aclLogGrouping {
			e.count++
			e.ctime, e.cinfo = now, cinfo
			copy(a.log[1:i+1], a.log[:i])
			a.log[0] = e
			return
		}
	}
	e := &aclLogEntry{count: 1, reason: reason, context: ctx, object: object, username: username, ctime: now, cinfo: cinfo}
	a.log = append(a.log, nil)
	copy(a.log[1:], a.log)
	a.log[0] = e
	h.trimACLLogLocked()
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func (h *Handler) trimACLLog() {
	h.acl.mu.Lock()
	h.trimACLLogLocked()
	h.acl.mu.Unlock()
}

func (h *Handler) trimACLLogLocked() {
	a := &h.acl
	if max := a.logMax.Load(); int64(len(a.log)) > max {
		clear(a.log[max:])
		a.log = a.log[:max]
	}
}

// cmdACLLog implements ACL LOG [count | RESET].
func cmdACLLog(h *Handler, cl *client, args [][]byte) {
	count := int64(10)
	if len(args) == 3 {
		if ascii.EqualFold(args[2], "reset") {
			h.acl.mu.Lock()
			h.acl.log = nil
			h.acl.mu.Unlock()
			cl.writeOK()
			return
		}
		n, ok := ascii.ParseInt(args[2])
		if !ok {
			cl.writeError(errNotInteger)
			return
		}
		count = max(n, 0)
	}
	now := nowMillis()
	h.acl.mu.Lock()
	entries := make([]aclLogEntry, 0, min(int(count), len(h.acl.log)))
	for _, e := range h.acl.log[:min(int64(len(h.acl.log)), count)] {
		entries = append(entries, *e)
	}
	h.acl.mu.Unlock()
	cl.writeArray(len(entries))
	for _, e := range entries {
		cl.writeMap(7)
		cl.writeBulkStr("count")
		cl.writeInt(e.count)
		cl.writeBulkStr("reason")
		cl.writeBulkStr(aclReasons[e.reason])
		cl.writeBulkStr("context")
		cl.writeBulkStr(aclContexts[e.context])
		cl.writeBulkStr("object")
		cl.writeBulkStr(e.object)
		cl.writeBulkStr("username")
		cl.writeBulkStr(e.username)
		cl.writeBulkStr("age-seconds")
		cl.writeScore(float64(now-e.ctime) / 1000)
		cl.writeBulkStr("client-info")
		cl.writeBulkStr(e.cinfo)
	}
}
