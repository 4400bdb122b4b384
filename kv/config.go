package kv

import (
	"cmp"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/store"
)

// settings are the values kv itself owns in the settings table: what
// CONFIG SET changes in kv. mu guards them: AUTH reads the password on any
// loop.
type settings struct {
	mu        sync.Mutex
	password  string
	logLevel  string
	fsyncIdle string // appendfsync while no file is attached
}

func (s *settings) get(field *string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *field
}

// ownSettings makes h.params read and apply the settings whose facts live
// in kv and in the store, rather than keep copies of them (the edge's are
// taken over when it boots: ownListener). A
// value given on the command line is applied here (Table.Own); the others
// keep what Options and the store were created with.
func (h *Handler) ownSettings(o Options) {
	p, st, s := h.params, h.shared, &h.cfg
	s.password = o.RequirePass
	h.setDefaultPassword(o.RequirePass)
	h.protectedMode.Store(!o.DisableProtectedMode)
	s.logLevel = p.Get("loglevel")
	if o.LogLevel != nil {
		s.logLevel = levelName(o.LogLevel.Level())
	}

	p.Own("maxmemory", config.Owner{
		Get: func() string { return strconv.FormatInt(st.MaxMemory(), 10) },
		Set: func(v string) { st.SetMaxMemory(atoi64(v)) },
	})
	p.Own("maxmemory-policy", config.Owner{
		Get: func() string { return st.Policy().String() },
		Set: func(v string) {
			pol, err := store.ParsePolicy(v)
			if err != nil {
				panic("kv: the settings table offers a policy the store lacks: " + err.Error())
			}
			st.SetPolicy(pol)
		},
	})
	p.Own("maxmemory-samples", config.Owner{
		Get: func() string { return strconv.FormatInt(st.Samples(), 10) },
		Set: func(v string) { st.SetSamples(atoi64(v)) },
	})
	// hz and active-expire-effort drive the store's active expirer. An
	// embedder that switched it off (store.Options.ActiveExpireInterval < 0)
	// still reads Redis's default hz until it sets one.
	p.Own("hz", config.Owner{
		Get: func() string { hz, _ := st.ActiveExpire(); return strconv.Itoa(cmp.Or(hz, 10)) },
		Set: func(v string) { st.SetHz(int(atoi64(v))) },
	})
	p.Own("active-expire-effort", config.Owner{
		Get: func() string { _, e := st.ActiveExpire(); return strconv.Itoa(e) },
		Set: func(v string) { st.SetExpireEffort(int(atoi64(v))) },
	})
	p.Own("lfu-log-factor", config.Owner{
		Get: func() string { f, _ := st.LFU(); return strconv.FormatInt(f, 10) },
		Set: func(v string) { _, d := st.LFU(); st.SetLFU(atoi64(v), d) },
	})
	p.Own("lfu-decay-time", config.Owner{
		Get: func() string { _, d := st.LFU(); return strconv.FormatInt(d, 10) },
		Set: func(v string) { f, _ := st.LFU(); st.SetLFU(f, atoi64(v)) },
	})
	p.Own("requirepass", config.Owner{
		Get: func() string { return s.get(&s.password) },
		Set: func(v string) {
			s.mu.Lock()
			s.password = v
			s.mu.Unlock()
			h.setDefaultPassword(v) // as Redis: requirepass is the default user's password

		},
	})
	p.Own("protected-mode", config.Owner{
		Get: func() string { return config.FormatYesNo(h.protectedMode.Load()) },
		Set: func(v string) { h.protectedMode.Store(v == "yes") },
	})
	p.Own("loglevel", config.Owner{
		Get: func() string { return s.get(&s.logLevel) },
		Set: func(v string) {
			lvl, _ := ParseLogLevel(v)
			s.mu.Lock()
			s.logLevel = v
			s.mu.Unlock()
			if o.LogLevel != nil {
				o.LogLevel.Set(lvl)
			}
		},
	})
	p.Own("proto-max-bulk-len", config.Owner{Get: func() string { return strconv.FormatInt(o.Limits.MaxBulkLen, 10) }})

	h.ownAOFSettings()
	h.ownOutputLimits()
	h.ownTrackingSettings()
	h.ownNotifySettings() // the store's hook for the keys it removes serves both
	h.initDeletionLog()   // and its log of them, for the file and replicas
	h.ownSlowlog()
	h.ownLatencyTracking()
	h.ownEncodings()
	h.ownACLSettings()
}

// ownListener makes h.params read the listener's settings from the edge
// that runs h: the port it bound (also for ":0"), the bind address,
// maxclients after any cap, the idle timeout. Until then the table's
// values stand.
func (h *Handler) ownListener() {
	p := h.params
	p.Own("port", config.Owner{Get: func() string { port, _, _, _ := h.listener(); return strconv.Itoa(port) }})
	p.Own("bind", config.Owner{Get: func() string {
		if _, bind, _, _ := h.listener(); bind != "" {
			return bind
		}
		return h.bind
	}})
	p.Own("maxclients", config.Owner{
		Get: func() string { _, _, n, _ := h.listener(); return strconv.Itoa(n) },
		Set: func(v string) {
			if e := h.edge.Load(); e != nil {
				n, _ := strconv.Atoi(v)
				// A value given at startup over the descriptor limit was
				// lowered, with a warning (cmd/shoal); Check refuses one
				// from CONFIG SET.
				if room, err := config.MaxClientsRoom(); err == nil {
					n = min(n, room)
				}
				(*e).SetMaxClients(n)
			}
		},
		Check: func(v string) error {
			n, _ := strconv.Atoi(v)
			return config.CheckMaxClients(n)
		},
	})
	p.Own("timeout", config.Owner{Get: func() string {
		_, _, _, idle := h.listener()
		return strconv.FormatInt(int64(idle.Seconds()), 10)
	}})
}

// atoi64 reads an integer the settings table has already validated.
func atoi64(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic("kv: the settings table passed a non-integer: " + v)
	}
	return n
}

// ParseLogLevel maps a Redis log level name (debug, verbose, notice, warning,
// nothing; any case) onto the slog level Shoal logs at: verbose and notice are
// both Info, nothing is above Error. CONFIG SET loglevel and cmd/shoal's
// --loglevel both parse through it.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "verbose", "notice":
		return slog.LevelInfo, nil
	case "warning":
		return slog.LevelWarn, nil
	case "nothing":
		return slog.LevelError + 4, nil
	}
	return 0, fmt.Errorf("log level %q: want debug, verbose, notice, warning or nothing", s)
}

func levelName(l slog.Level) string {
	switch {
	case l <= slog.LevelDebug:
		return "debug"
	case l <= slog.LevelInfo:
		return "notice"
	case l <= slog.LevelWarn:
		return "warning"
	}
	return "nothing"
}

func cmdConfigGet(h *Handler, cl *client, args [][]byte) {
	patterns := make([]string, 0, len(args)-2)
	for _, a := range args[2:] {
		patterns = append(patterns, string(a))
	}
	names, values := h.params.Match(patterns, func(pattern, name string) bool {
		return store.Match([]byte(pattern), []byte(name))
	})
	cl.writeMap(len(names))
	for i := range names {
		cl.writeBulkStr(names[i])
		cl.writeBulkStr(values[i])
	}
}

func cmdConfigSet(h *Handler, cl *client, args [][]byte) {
	if len(args)%2 != 0 { // fewer than four arguments never get here (arity)
		cl.writeError("ERR syntax error")
		return
	}
	pairs := make([]string, 0, len(args)-2)
	for _, a := range args[2:] {
		pairs = append(pairs, string(a))
	}
	if err := h.params.Set(pairs...); err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	cl.writeOK()
}

func cmdConfigResetStat(h *Handler, cl *client, _ [][]byte) {
	h.commandsBase.Store(h.clients.commands())
	h.totalConnections.Store(0)
	h.errors.reset()
	h.cmdStats.reset()
	cl.writeOK()
}

// cmdConfigRewrite implements CONFIG REWRITE: the file the server started
// from takes the values in use (config.Table.RewriteFile).
func cmdConfigRewrite(h *Handler, cl *client, _ [][]byte) {
	if h.opts.ConfigFile == "" {
		cl.writeError(errNoConfigFile)
		return
	}
	if err := h.params.RewriteFile(h.opts.ConfigFile); err != nil {
		h.opts.Logger.Warn("CONFIG REWRITE failed", "path", h.opts.ConfigFile, "err", err)
		cl.writeError("ERR Rewriting config file: " + err.Error())
		return
	}
	h.opts.Logger.Info("CONFIG REWRITE executed with success", "path", h.opts.ConfigFile)
	cl.writeOK()
}

func cmdConfigHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "CONFIG", []string{
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Fails: Shoal runs without a config file.",
	})
}

// ownEncodings makes the encoding thresholds' rows read and change the
// store's limits (store.EncodingLimits: the process's, as a server's).
func (h *Handler) ownEncodings() {
	fields := map[string]func(l *store.EncodingLimits) *int64{
		"hash-max-listpack-entries": func(l *store.EncodingLimits) *int64 { return &l.HashMaxListpackEntries },
		"hash-max-listpack-value":   func(l *store.EncodingLimits) *int64 { return &l.HashMaxListpackValue },
		"set-max-intset-entries":    func(l *store.EncodingLimits) *int64 { return &l.SetMaxIntsetEntries },
		"zset-max-listpack-entries": func(l *store.EncodingLimits) *int64 { return &l.ZSetMaxListpackEntries },
		"zset-max-listpack-value":   func(l *store.EncodingLimits) *int64 { return &l.ZSetMaxListpackValue },
		"list-max-listpack-size":    func(l *store.EncodingLimits) *int64 { return &l.ListMaxListpackSize },
		"stream-node-max-bytes":     func(l *store.EncodingLimits) *int64 { return &l.StreamNodeMaxBytes },
		"stream-node-max-entries":   func(l *store.EncodingLimits) *int64 { return &l.StreamNodeMaxEntries },
	}
	// A new server starts from its own table's values, not from what an
	// earlier server in the process left.
	l := store.Encodings()
	for name, field := range fields {
		*field(&l) = h.params.Int(name)
	}
	if err := store.SetEncodings(l); err != nil {
		panic("kv: the settings table holds encodings the store refuses: " + err.Error())
	}
	for name, field := range fields {
		h.params.Own(name, config.Owner{
			Get: func() string {
				l := store.Encodings()
				return strconv.FormatInt(*field(&l), 10)
			},
			Set: func(v string) {
				l := store.Encodings()
				*field(&l) = atoi64(v)
				if err := store.SetEncodings(l); err != nil {
					panic("kv: the settings table let through " + name + " " + v + ": " + err.Error())
				}
			},
		})
	}
}
