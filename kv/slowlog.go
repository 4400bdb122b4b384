package kv

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/config"
)

// SLOWLOG: the commands that ran longer than slowlog-log-slower-than
// microseconds (-1: none, 0: all), the newest slowlog-max-len of them, as
// Redis keeps them: an id that RESET does not restart, the unix time, the
// duration, the arguments (at most 32, each cut at 128 bytes, passwords
// redacted), the client's address and name.
//
// What is timed: every command that is not flagged fast (the O(N) ones an
// operator looks for), and the fast ones (GET, SET, INCR…) one in
// timedEvery, as commandstats already times them — unless the threshold
// is below Redis's default of 10 ms, when every command is timed: reading
// the clock twice per GET costs about a tenth of a pipelined GET, a price
// paid only by who asks for it. Commands a script or the AOF replay runs
// are not logged (Redis logs the EVAL), nor EXEC itself (flag
// skip_slowlog): the commands of a transaction are, one by one.

// The subcommands are in redis-server's order (COMMAND INFO lists them so).
var _ = registerFamily(family{commands: []*command{
	{
		name: "slowlog", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"Slow log commands.", "2.2.12", "server", "Depends on subcommand."},
	},
	{
		name: "slowlog|len", arity: 2, fn: cmdSlowlogLen,
		flags: "admin loading stale", acl: "@admin @slow @dangerous", tips: "request_policy:all_nodes response_policy:agg_sum nondeterministic_output",
		doc: commandDoc{"Returns the number of entries in the slow log.", "2.2.12", "server", "O(1)"},
	},
	{
		name: "slowlog|get", arity: -2, fn: cmdSlowlogGet,
		flags: "admin loading stale", acl: "@admin @slow @dangerous", tips: "request_policy:all_nodes nondeterministic_output",
		doc: commandDoc{"Returns the newest entries of the slow log (10 by default, -1: all).", "2.2.12", "server", "O(N) where N is the number of entries returned"},
	},
	{
		name: "slowlog|reset", arity: 2, fn: cmdSlowlogReset,
		flags: "admin loading stale", acl: "@admin @slow @dangerous", tips: "request_policy:all_nodes response_policy:all_succeeded",
		doc: commandDoc{"Empties the slow log.", "2.2.12", "server", "O(N) where N is the number of entries in the slowlog"},
	},
	{
		name: "slowlog|help", arity: 2, fn: cmdSlowlogHelp,
		flags: "loading stale", acl: "@slow",
		doc: commandDoc{"Describes the SLOWLOG subcommands.", "6.2.0", "server", "O(1)"},
	},
}})

// Redis's bounds on what an entry keeps of a command.
const (
	slowlogMaxArgs   = 32
	slowlogMaxString = 128
	// slowlogTimeAll is the threshold (µs) below which fast commands are
	// timed every time rather than sampled: Redis's default.
	slowlogTimeAll = 10000
)

type slowlogEntry struct {
	id     int64
	unix   int64
	micros int64
	args   [][]byte
	addr   string
	name   string
}

// slowlog is the Handler's slow log. thresholdNanos and timeAll are read
// by dispatch on every loop; the entries are under mu.
type slowlog struct {
	thresholdNanos  atomic.Int64 // -1: off
	thresholdMicros atomic.Int64
	timeAll         atomic.Bool // time fast commands too, not one in timedEvery
	maxLen          atomic.Int64

	mu      sync.Mutex
	nextID  int64
	entries []slowlogEntry // oldest first
}

func (s *slowlog) setThreshold(micros int64) {
	s.thresholdMicros.Store(micros)
	switch {
	case micros < 0:
		s.thresholdNanos.Store(-1)
	case micros > math.MaxInt64/1000:
		s.thresholdNanos.Store(math.MaxInt64)
	default:
		s.thresholdNanos.Store(micros * 1000)
	}
	s.timeAll.Store(micros >= 0 && micros < slowlogTimeAll)
}

// trim drops the oldest entries past maxLen. Under mu. As Redis, a lower
// slowlog-max-len takes effect at the next entry.
func (s *slowlog) trim() {
	if over := int64(len(s.entries)) - s.maxLen.Load(); over > 0 {
		n := copy(s.entries, s.entries[over:])
		clear(s.entries[n:])
		s.entries = s.entries[:n]
	}
}

// times reports whether dispatch must time cmd for the slow log. A
// command that is not fast is timed even with the log off: it may be the
// CONFIG SET that turns it on, which Redis logs.
func (s *slowlog) times(cmd *command) bool {
	return !cmd.fast || s.timeAll.Load()
}

// record logs the command cl ran in nanos if that is past the threshold.
func (h *Handler) recordSlow(cl *client, cmd *command, args [][]byte, nanos int64) {
	s := &h.slowlog
	t := s.thresholdNanos.Load()
	if t < 0 || nanos < t || cl.conn == nil || cmd.skipSlowlog || s.maxLen.Load() == 0 {
		return
	}
	e := slowlogEntry{
		unix:   time.Now().Unix(),
		micros: nanos / 1000,
		addr:   cl.addr,
		name:   cl.getName(),
	}
	n := min(len(args), slowlogMaxArgs)
	e.args = make([][]byte, n)
	for i := range n {
		switch {
		case i == slowlogMaxArgs-1 && len(args) > slowlogMaxArgs:
			e.args[i] = fmt.Appendf(nil, "... (%d more arguments)", len(args)-slowlogMaxArgs+1)
		case argRedacted(cmd, args, i):
			e.args[i] = []byte("(redacted)")
		case len(args[i]) > slowlogMaxString:
			e.args[i] = fmt.Appendf(append([]byte(nil), args[i][:slowlogMaxString]...),
				"... (%d more bytes)", len(args[i])-slowlogMaxString)
		default:
			e.args[i] = append([]byte(nil), args[i]...)
		}
	}
	s.mu.Lock()
	e.id = s.nextID
	s.nextID++
	s.entries = append(s.entries, e)
	s.trim()
	s.mu.Unlock()
}

// ownSlowlog takes slowlog-log-slower-than and slowlog-max-len over from
// the settings table.
func (h *Handler) ownSlowlog() {
	s, p := &h.slowlog, h.params
	s.setThreshold(atoi64(p.Get("slowlog-log-slower-than")))
	s.maxLen.Store(atoi64(p.Get("slowlog-max-len")))
	p.Own("slowlog-log-slower-than", config.Owner{
		Get: func() string { return strconv.FormatInt(s.thresholdMicros.Load(), 10) },
		Set: func(v string) { s.setThreshold(atoi64(v)) },
	})
	p.Own("slowlog-max-len", config.Owner{
		Get: func() string { return strconv.FormatInt(s.maxLen.Load(), 10) },
		Set: func(v string) { s.maxLen.Store(atoi64(v)) },
	})
}

func cmdSlowlogGet(h *Handler, cl *client, args [][]byte) {
	count := int64(10)
	if len(args) > 3 {
		cl.writeError(sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(args[1], 128) + "'. Try SLOWLOG HELP."))
		return
	}
	if len(args) == 3 {
		n, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil || n < -1 {
			cl.writeError("ERR count should be greater than or equal to -1")
			return
		}
		if n == -1 {
			n = math.MaxInt64
		}
		count = n
	}
	s := &h.slowlog
	s.mu.Lock()
	n := int(min(count, int64(len(s.entries))))
	entries := make([]slowlogEntry, n)
	for i := range n {
		entries[i] = s.entries[len(s.entries)-1-i] // newest first
	}
	s.mu.Unlock()
	cl.writeArray(n)
	for _, e := range entries {
		cl.writeArray(6)
		cl.writeInt(e.id)
		cl.writeInt(e.unix)
		cl.writeInt(e.micros)
		cl.writeArray(len(e.args))
		for _, a := range e.args {
			cl.writeBulk(a)
		}
		cl.writeBulkStr(e.addr)
		cl.writeBulkStr(e.name)
	}
}

func cmdSlowlogLen(h *Handler, cl *client, _ [][]byte) {
	s := &h.slowlog
	s.mu.Lock()
	n := len(s.entries)
	s.mu.Unlock()
	cl.writeInt(int64(n))
}

func cmdSlowlogReset(h *Handler, cl *client, _ [][]byte) {
	s := &h.slowlog
	s.mu.Lock()
	s.entries = nil
	s.mu.Unlock()
	cl.writeOK()
}

func cmdSlowlogHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "SLOWLOG", []string{
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
	})
}
