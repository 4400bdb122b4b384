package kv

import (
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// Why the ACL refused a command, in Redis's order of relevance (with
// several selectors the highest is reported).
const (
	aclOK = iota
	aclDeniedCmd
	aclDeniedKey
	aclDeniedAuth
	aclDeniedChannel
)

// check returns why r refuses cmd with args (aclOK: it may run) and, for
// a key or channel, its argument position. Nothing here allocates: it runs
// before every command of a restricted user.
func (r *aclRules) check(cmd *command, args [][]byte) (reason, pos int) {
	reason = aclDeniedCmd
	for _, s := range r.selectors {
		res, p := s.check(cmd, args)
		if res == aclOK {
			return aclOK, 0
		}
		if res > reason || (res == reason && p > pos) {
			reason, pos = res, p
		}
	}
	return reason, pos
}

func (s *aclSelector) check(cmd *command, args [][]byte) (int, int) {
	aclTablesOnce.Do(buildACLTables)
	id := cmd.statsID
	if !s.allCommands && !cmd.noAuth && !s.bit(id) && !s.firstArgAllowed(id, args) {
		return aclDeniedCmd, 0
	}
	if !s.allKeys && len(cmd.keySpecs) > 0 && id < len(aclKeyPerms) {
		if pos := s.deniedKey(cmd, args); pos > 0 {
			return aclDeniedKey, pos
		}
	}
	if !s.allChannels && id < len(aclChannels) && aclChannels[id] != chanNone {
		if pos := s.deniedChannel(aclChannels[id], args); pos > 0 {
			return aclDeniedChannel, pos
		}
	}
	return aclOK, 0
}

func (s *aclSelector) firstArgAllowed(id int, args [][]byte) bool {
	if len(args) < 2 || len(s.firstArgs) == 0 {
		return false
	}
	for _, a := range s.firstArgs[id] {
		if ascii.EqualFold(args[1], a) {
			return true
		}
	}
	return false
}

// deniedKey returns the position of the first key of args the selector
// may not touch as the command would, 0 if there is none.
func (s *aclSelector) deniedKey(cmd *command, args [][]byte) int {
	perms := aclKeyPerms[cmd.statsID]
	if cmd.keysOf != nil {
		var buf [8]int
		for i, p := range cmd.keysOf(buf[:0], args) {
			perm := perms[0]
			if i > 0 && cmd.destFlags != "" {
				perm = perms[len(perms)-1]
			}
			if !s.keyAllowed(args[p], perm) {
				return p
			}
		}
		return 0
	}
	for i := range cmd.keySpecs {
		ks := &cmd.keySpecs[i]
		perm := perms[i]
		if i == 0 && cmd.name == "set" {
			perm = setKeyPerm(args) // variable_flags: a read too with GET
		}
		first, last, step := ks.span(args)
		for p := first; p <= last; p += step {
			if !s.keyAllowed(args[p], perm) {
				return p
			}
		}
	}
	return 0
}

// span returns the argument positions of ks's keys in args as first, last
// and step (first > last: none), as keySpec.positions finds them.
func (ks *keySpec) span(args [][]byte) (first, last, step int) {
	step = max(ks.keyStep, 1)
	switch {
	case ks.keyword != "":
		at := ks.keywordAt(args)
		if at < 0 {
			return 1, 0, 1
		}
		return at + 1, len(args) - 1, step
	case ks.keynum:
		at := ks.index + ks.keynumIdx
		if at >= len(args) {
			return 1, 0, 1
		}
		n, ok := ascii.ParseInt(args[at])
		first = ks.index + ks.firstKeyIdx
		if !ok || n < 0 || n > int64(len(args)-first) {
			return 1, 0, 1
		}
		return first, first + int(n) - 1, step
	}
	last = ks.index + ks.lastKey
	if ks.lastKey < 0 {
		last = len(args) + ks.lastKey
	}
	return ks.index, min(last, len(args)-1), step
}

func (s *aclSelector) keyAllowed(key []byte, perm uint8) bool {
	for i := range s.keys {
		k := &s.keys[i]
		if k.perm&perm == perm && store.Match(k.pat, key) {
			return true
		}
	}
	return false
}

// deniedChannel returns the position of the first channel of args the
// selector may not use, 0 if there is none. A PSUBSCRIBE pattern must be
// one of the selector's patterns as written; a channel must match one.
func (s *aclSelector) deniedChannel(how uint8, args [][]byte) int {
	last := len(args) - 1
	if how == chanPublish {
		last = min(1, last)
	}
	for p := 1; p <= last; p++ {
		if !s.channelAllowed(args[p], how == chanPattern) {
			return p
		}
	}
	return 0
}

func (s *aclSelector) channelAllowed(ch []byte, literal bool) bool {
	for i := range s.channels {
		c := &s.channels[i]
		if literal {
			if c.pattern == string(ch) {
				return true
			}
			continue
		}
		if store.Match(c.pat, ch) {
			return true
		}
	}
	return false
}

// userChannelAllowed reports whether any of r's selectors allows ch.
func (r *aclRules) channelAllowed(ch []byte, literal bool) bool {
	for _, s := range r.selectors {
		if s.allChannels || s.channelAllowed(ch, literal) {
			return true
		}
	}
	return false
}

// aclRefuses checks cmd against cl's user before it runs; on a refusal it
// answers -NOPERM as Redis's processCommand does (or, for a command of a
// transaction being executed, as execCommand does), logs it and reports
// true. dispatch calls it only for a user that is not unrestricted.
func (h *Handler) aclRefuses(cl *client, r *aclRules, cmd *command, args [][]byte, counters *commandCounters) bool {
	reason, pos := r.check(cmd, args)
	if reason == aclOK {
		return false
	}
	s := cl.sess.Load()
	ctx := aclCtxToplevel
	if s != nil && (s.multi || s.execing) {
		ctx = aclCtxMulti
	}
	h.aclLogDenied(cl, cl, reason, ctx, cmd, args, pos)
	counters.rejected.Add(1)
	if s != nil && s.execing {
		cl.writeError("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + execDeniedReasons[reason])
		cl.failed = true
		return true
	}
	var msg string
	switch reason {
	case aclDeniedCmd:
		msg = "NOPERM this user has no permissions to run the '" + cmd.name + "' command"
	case aclDeniedKey:
		msg = "NOPERM this user has no permissions to access one of the keys used as arguments"
	default:
		msg = "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	cl.reject(cmd, msg)
	return true
}

var execDeniedReasons = [...]string{
	aclDeniedCmd:     "no permission to execute the command or subcommand",
	aclDeniedKey:     "no permission to touch the specified keys",
	aclDeniedAuth:    "no permission",
	aclDeniedChannel: "no permission to access one of the channels used as arguments",
}

// scriptDeniedReasons are Redis's getAclErrorMessage, after "The user
// executing the script ".
var scriptDeniedReasons = [...]string{
	aclDeniedCmd:     "can't run this command or subcommand",
	aclDeniedKey:     "can't access at least one of the keys mentioned in the command arguments",
	aclDeniedAuth:    "lacking the permissions for the command",
	aclDeniedChannel: "can't publish to the channel mentioned in the command",
}

// scriptACLRefuses is the ACL check of a script's redis.call, on behalf of
// the client that runs the script: the error text, "" to run it.
func (h *Handler) scriptACLRefuses(caller *client, args [][]byte) string {
	u := caller.aclUser()
	if u == nil {
		return ""
	}
	r := u.load()
	if r.unrestricted {
		return ""
	}
	cmd := dispatchIdx.find(args[0])
	if cmd != nil && cmd.subs != nil && len(args) >= 2 {
		cmd = lookupName(cmd.subs, args[1])
	}
	if cmd == nil {
		return ""
	}
	reason, pos := r.check(cmd, args)
	if reason == aclOK {
		return ""
	}
	h.aclLogDenied(caller, caller, reason, aclCtxLua, cmd, args, pos)
	return "The user executing the script " + scriptDeniedReasons[reason]
}

// readsAnyKey reports whether cl's user may run cmd with args under a
// selector that reads every key (allkeys, or a read pattern "*"), as
// Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess asks before SORT's BY
// and GET name keys no key spec lists.
func (cl *client) readsAnyKey(cmd *command, args [][]byte) bool {
	u := cl.aclUser()
	if u == nil {
		return true
	}
	r := u.load()
	if r.unrestricted {
		return true
	}
	for _, s := range r.selectors {
		if res, _ := s.check(cmd, args); res != aclOK {
			continue
		}
		if s.allKeys {
			return true
		}
		for _, k := range s.keys {
			if k.perm&aclRead == aclRead && k.pattern == "*" {
				return true
			}
		}
	}
	return false
}
