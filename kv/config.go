package kv

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/shoalkv/shoal/internal/ascii"

	"github.com/shoalkv/shoal/store"
)

// config holds the parameters CONFIG GET reports and CONFIG SET changes.
// mu guards the mutable values; the Handler reads requirePass on AUTH only.
type config struct {
	mu       sync.Mutex
	h        *Handler
	password string
	logLevel string
	params   []configParam
}

// configParam is one CONFIG parameter. set is nil for parameters that
// cannot change while Shoal runs.
type configParam struct {
	name string
	get  func(c *config) string
	set  func(c *config, v string, apply bool) error // validates; changes only if apply
}

func (c *config) init(h *Handler, o Options) {
	c.h = h
	c.password = o.RequirePass
	h.authRequired.Store(o.RequirePass != "")
	h.protectedMode.Store(!o.DisableProtectedMode)
	c.logLevel = "notice"
	if o.LogLevel != nil {
		c.logLevel = levelName(o.LogLevel.Level())
	}
	static := func(name, v string) configParam {
		return configParam{name: name, get: func(*config) string { return v }}
	}
	c.params = []configParam{
		{name: "maxmemory", get: func(c *config) string { return strconv.FormatInt(c.h.store.MaxMemory(), 10) }, set: setMaxMemory},
		{name: "maxmemory-policy", get: func(c *config) string { return c.h.store.Policy().String() }, set: setPolicy},
		{name: "requirepass", get: func(c *config) string { return c.password }, set: setRequirePass},
		{name: "loglevel", get: func(c *config) string { return c.logLevel }, set: setLogLevel},
		{name: "protected-mode", get: func(c *config) string { return yesNo(c.h.protectedMode.Load()) }, set: setProtectedMode},
		{name: "maxclients", get: func(c *config) string { _, _, n, _ := c.h.listener(); return strconv.Itoa(n) }},
		{name: "port", get: func(c *config) string { p, _, _, _ := c.h.listener(); return strconv.Itoa(p) }},
		{name: "bind", get: func(c *config) string { _, b, _, _ := c.h.listener(); return b }},
		{name: "timeout", get: func(c *config) string {
			_, _, _, idle := c.h.listener()
			return strconv.FormatInt(int64(idle.Seconds()), 10)
		}},
		static("databases", "1"),
		static("proto-max-bulk-len", strconv.FormatInt(o.Limits.MaxBulkLen, 10)),
		{name: "save", get: func(*config) string { return "" }, set: onlyValue("save", "")},
	}
	c.params = append(c.params, aofParams()...)
}

// requirePass returns the current password ("" when none is required).
func (c *config) requirePass() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.password
}

func (c *config) find(name string) *configParam {
	for i := range c.params {
		if strings.EqualFold(c.params[i].name, name) {
			return &c.params[i]
		}
	}
	return nil
}

func setMaxMemory(c *config, v string, apply bool) error {
	n, err := ParseMemory(v)
	if err != nil {
		return fmt.Errorf("argument must be a memory value")
	}
	if !apply {
		return nil
	}
	c.h.store.SetMaxMemory(n)
	return nil
}

func setPolicy(c *config, v string, apply bool) error {
	p, err := store.ParsePolicy(v)
	if err != nil {
		return fmt.Errorf("argument(s) must be one of the following: noeviction, allkeys-random, allkeys-lru, volatile-lru, volatile-ttl")
	}
	if !apply {
		return nil
	}
	c.h.store.SetPolicy(p)
	return nil
}

func setRequirePass(c *config, v string, apply bool) error {
	if !apply {
		return nil
	}
	c.password = v
	c.h.authRequired.Store(v != "")
	return nil
}

func setProtectedMode(c *config, v string, apply bool) error {
	var on bool
	switch strings.ToLower(v) {
	case "yes":
		on = true
	case "no":
	default:
		return fmt.Errorf("argument must be 'yes' or 'no'")
	}
	if apply {
		c.h.protectedMode.Store(on)
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func setLogLevel(c *config, v string, apply bool) error {
	lvl, err := ParseLogLevel(v)
	if err != nil {
		return fmt.Errorf("argument(s) must be one of the following: debug, verbose, notice, warning, nothing")
	}
	if !apply {
		return nil
	}
	c.logLevel = strings.ToLower(v)
	if c.h.opts.LogLevel != nil {
		c.h.opts.LogLevel.Set(lvl)
	}
	return nil
}

func onlyValue(name, want string) func(*config, string, bool) error {
	return func(_ *config, v string, _ bool) error {
		if !strings.EqualFold(v, want) {
			return fmt.Errorf("shoal keeps no data on disk; %s only accepts %q", name, want)
		}
		return nil
	}
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

// ParseMemory parses a Redis memory value: a non-negative integer with an
// optional unit, b, k (1000), kb (1024), m, mb, g or gb, in any case, as in
// redis.conf ("100mb", "1gb").
func ParseMemory(s string) (int64, error) {
	lower := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mul    int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}}
	mul := int64(1)
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			lower, mul = strings.TrimSuffix(lower, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(lower, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid memory value %q: want a non-negative number with an optional unit (b, k, kb, m, mb, g, gb)", s)
	}
	if n > (1<<63-1)/mul {
		return 0, fmt.Errorf("memory value %q overflows 64 bits", s)
	}
	return n * mul, nil
}

func cmdConfigGet(h *Handler, cl *client, args [][]byte) {
	c := &h.cfg
	c.mu.Lock()
	var names, values []string
	for i := range c.params {
		p := &c.params[i]
		for _, pat := range args[2:] {
			if !hasGlob(pat) && strings.EqualFold(string(pat), p.name) {
				// Redis answers an exact name with the name as given.
				names = append(names, string(pat))
				values = append(values, p.get(c))
				break
			}
			if store.Match(ascii.AppendLower(nil, pat), []byte(p.name)) {
				names = append(names, p.name)
				values = append(values, p.get(c))
				break
			}
		}
	}
	c.mu.Unlock()
	cl.writeMap(len(names))
	for i := range names {
		cl.writeBulkStr(names[i])
		cl.writeBulkStr(values[i])
	}
}

func cmdConfigSet(h *Handler, cl *client, args [][]byte) {
	if len(args)%2 != 0 {
		cl.writeError(errWrongArgs("config|set"))
		return
	}
	c := &h.cfg
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	type change struct {
		p *configParam
		v string
	}
	var changes []change
	for i := 2; i < len(args); i += 2 {
		name := string(args[i])
		p := c.find(name)
		if p == nil {
			cl.writeError(sanitizeError("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'"))
			return
		}
		if p.set == nil {
			cl.writeError(sanitizeError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - can't set immutable config"))
			return
		}
		if seen[p.name] {
			cl.writeError(sanitizeError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - duplicate parameter"))
			return
		}
		seen[p.name] = true
		changes = append(changes, change{p, string(args[i+1])})
	}
	// Validate everything first so a bad value changes nothing, as in
	// Redis 7's atomic multi-parameter CONFIG SET.
	for _, ch := range changes {
		if err := ch.p.set(c, ch.v, false); err != nil {
			cl.writeError(sanitizeError("ERR CONFIG SET failed (possibly related to argument '" + ch.p.name + "') - " + err.Error()))
			return
		}
	}
	for _, ch := range changes {
		_ = ch.p.set(c, ch.v, true)
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

func cmdConfigRewrite(_ *Handler, cl *client, _ [][]byte) {
	cl.writeError(errNoConfigFile)
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

func hasGlob(b []byte) bool {
	return strings.ContainsAny(string(b), "*?[")
}
