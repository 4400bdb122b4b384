package kv

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/internal/ascii"
)

// MONITOR: every command any client runs, on any loop or in a transaction,
// is sent to the monitoring clients as Redis formats it,
//
//	+1700000000.123456 [0 127.0.0.1:50000] "set" "k" "v"
//
// (time, database, client address, the arguments quoted as Redis's
// sdscatrepr), after it ran. Admin commands are not shown and AUTH's and
// HELLO's credentials are "(redacted)", as in Redis 7.0. A monitor's
// lines go through its subscriber mailbox and count against the replica
// class's output limit, Redis's class for monitors, so a monitor that
// does not read is closed instead of holding memory without bound. Lines
// from different loops arrive in the order they were delivered, which
// for commands running at the same instant on two loops is either.

var _ = registerFamily(family{commands: []*command{
	{
		name: "monitor", arity: 1, fn: cmdMonitor,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Streams every command the server runs to this connection.", "1.0.0", "server", noComplexity},
	},
}})

// monitors is the Handler's registry of monitoring clients.
type monitors struct {
	active atomic.Int64 // monitoring clients: dispatch's fast test
	mu     sync.Mutex
	list   []*client
}

// monitoring reports whether cl is a monitor (CLIENT LIST's O flag).
func (cl *client) monitoring() bool {
	s := cl.sess.Load()
	return s != nil && s.monitor.Load()
}

func cmdMonitor(h *Handler, cl *client, _ [][]byte) {
	if cl.monitoring() {
		return // as Redis: a second MONITOR is ignored, unanswered
	}
	s := cl.sessionOf()
	sub := cl.subscriberOf()
	s.monitor.Store(true)
	cl.noteClass(sub)
	m := &h.monitors
	m.mu.Lock()
	m.list = append(m.list, cl)
	m.mu.Unlock()
	m.active.Add(1)
	cl.writeOK()
}

// stopMonitor takes cl out of the monitors (its close, RESET).
func (h *Handler) stopMonitor(cl *client) {
	s := cl.sess.Load()
	if s == nil || !s.monitor.Load() {
		return
	}
	s.monitor.Store(false)
	m := &h.monitors
	m.mu.Lock()
	for i, c := range m.list {
		if c == cl {
			m.list = append(m.list[:i], m.list[i+1:]...)
			break
		}
	}
	m.mu.Unlock()
	m.active.Add(-1)
	if sub := s.sub.Load(); sub != nil {
		cl.noteClass(sub)
	}
}

// scriptAddr is the address MONITOR shows for the commands a script or a
// function runs, as Redis: "[0 lua]".
const scriptAddr = "lua"

// feedMonitors sends the command cl ran to every monitor; dispatch calls
// it while any is active. Admin commands are too dangerous to show, as in
// Redis; EVAL and FCALL (flag skip_monitor) are shown by themselves
// before the commands they run (feedScriptCall); the AOF replay is not
// shown.
func (h *Handler) feedMonitors(cl *client, cmd *command, args [][]byte) {
	if hasWord(cmd.flags, "admin") || hasWord(cmd.flags, "skip_monitor") || (cl.conn == nil && cl.addr != scriptAddr) {
		return
	}
	h.feedMonitorLine(cl, cmd, args)
}

// feedScriptCall shows an EVAL or FCALL to the monitors as it starts, so
// that the commands it runs follow it, as Redis does.
func (h *Handler) feedScriptCall(cl *client, cmd *command, args [][]byte) {
	if h.monitors.active.Load() != 0 && cl.conn != nil {
		h.feedMonitorLine(cl, cmd, args)
	}
}

func (h *Handler) feedMonitorLine(cl *client, cmd *command, args [][]byte) {
	now := time.Now()
	line := make([]byte, 0, 64)
	line = append(line, '+')
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	usec := strconv.AppendInt(nil, int64(now.Nanosecond()/1000), 10)
	for i := len(usec); i < 6; i++ {
		line = append(line, '0')
	}
	line = append(line, usec...)
	line = append(line, " ["...)
	line = strconv.AppendInt(line, int64(cl.selected.Load()), 10)
	line = append(line, ' ')
	if cl.unixSocket { // Redis names the socket, not the peer (it has no name)
		line = append(line, "unix:"...)
		line = append(line, strings.TrimSuffix(cl.addr, ":0")...)
	} else {
		line = append(line, cl.addr...)
	}
	line = append(line, ']')
	for i, a := range args {
		line = append(line, ' ')
		if argRedacted(cmd, args, i) {
			line = append(line, `"(redacted)"`...)
			continue
		}
		line = appendRepr(line, a)
	}
	line = append(line, "\r\n"...)
	limit := h.outLimits.replicaHard.Load()
	m := &h.monitors
	m.mu.Lock()
	list := append([]*client(nil), m.list...)
	m.mu.Unlock()
	for _, mon := range list {
		if s := mon.sess.Load(); s != nil {
			if sub := s.sub.Load(); sub != nil {
				sub.deliverRaw(line, limit)
			}
		}
	}
}

// argRedacted reports whether MONITOR and SLOWLOG hide argument i of a
// command, as Redis does: AUTH's user and password, ACL SETUSER's user and
// rules, those after HELLO's and MIGRATE's AUTH or AUTH2, and the value of
// a password CONFIG SET sets.
func argRedacted(cmd *command, args [][]byte, i int) bool {
	switch cmd.name {
	case "auth":
		return i >= 1
	case "acl|setuser": // the name and the rules, which may hold passwords
		return i >= 2
	case "hello":
		// HELLO's options follow the protocol version, parsed as Redis's
		// helloCommand does: SETNAME skips its name (which may be "auth"),
		// AUTH with two more arguments hides both, anything else ends it.
		for j := 2; j < len(args) && j <= i; j++ {
			more := len(args) - 1 - j
			switch {
			case ascii.EqualFold(args[j], "auth") && more >= 2:
				if i == j+1 || i == j+2 {
					return true
				}
				j += 2
			case ascii.EqualFold(args[j], "setname") && more >= 1:
				j++
			default:
				return false
			}
		}
	case "migrate":
		// MIGRATE's options follow host, port, key, db and timeout, as
		// Redis's migrateCommand parses them: KEYS ends them (the rest
		// are key names, "auth" too), and so does an unknown word.
		for j := 6; j < len(args) && j <= i; j++ {
			more := len(args) - 1 - j
			switch {
			case ascii.EqualFold(args[j], "copy"), ascii.EqualFold(args[j], "replace"):
			case ascii.EqualFold(args[j], "auth") && more >= 1:
				if i == j+1 {
					return true
				}
				j++
			case ascii.EqualFold(args[j], "auth2") && more >= 2:
				if i == j+1 || i == j+2 {
					return true
				}
				j += 2
			default:
				return false
			}
		}
	case "config|set":
		return i >= 3 && i%2 == 1 && (ascii.EqualFold(args[i-1], "requirepass") || ascii.EqualFold(args[i-1], "masterauth"))
	}
	return false
}

// appendRepr appends a quoted as Redis's sdscatrepr: in double quotes,
// with \\ \" \n \r \t \a \b escaped and other unprintable bytes as \xHH.
func appendRepr(b, a []byte) []byte {
	b = append(b, '"')
	for _, c := range a {
		switch c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		default:
			if c < 0x20 || c >= 0x7f {
				const hex = "0123456789abcdef"
				b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}
