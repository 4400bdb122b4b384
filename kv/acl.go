package kv

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/internal/ascii"
)

// ACL users as Redis 7.0 has them: a user is a name, on/off, passwords
// (SHA-256 hashes) or nopass, and selectors: the root one (the rules
// written outside parentheses) and any number more, "(...)". A selector
// allows commands (a bitset by command id: +get, -@dangerous, +config|get,
// the deprecated first-arg form +select|0), keys by pattern (~p, %R~p,
// %W~p, allkeys) and channels by pattern (&p, allchannels); a command runs
// if any selector allows it.
//
// A user's rules are an immutable aclRules value that ACL SETUSER replaces
// whole, so that a connection authenticated as the user reads them with
// one atomic load per command and never a lock; the user itself (aclUser)
// stays the same object for the connections that point at it.

// aclCategories are Redis 7.0's command categories, in ACL CAT's order.
var aclCategories = [...]string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
	"dangerous", "connection", "transaction", "scripting",
}

// aclCategory returns the bit of a category name (without the @), 0 for
// none.
func aclCategory(name string) uint32 {
	for i, c := range aclCategories {
		if strings.EqualFold(name, c) {
			return 1 << i
		}
	}
	return 0
}

// Key permissions of a key pattern (%R~, %W~, ~ is both).
const (
	aclRead  uint8 = 1
	aclWrite uint8 = 2
	aclRW          = aclRead | aclWrite
)

// keyPattern is a key or channel pattern; pat is pattern as bytes, for
// matching without converting.
type keyPattern struct {
	pattern string
	pat     []byte
	perm    uint8 // keys only
}

func newPattern(p string, perm uint8) keyPattern {
	return keyPattern{pattern: p, pat: []byte(p), perm: perm}
}

// aclSelector is one set of command, key and channel rules.
type aclSelector struct {
	root        bool
	allCommands bool // +@all and nothing removed since: no bit to test
	future      bool // +@all or allcommands was the last of -@all/+@all: describes as "+@all ..."
	allKeys     bool
	allChannels bool
	allowed     []uint64         // by command id (statsID)
	firstArgs   map[int][]string // +select|0: first arguments allowed of an otherwise denied command
	keys        []keyPattern     // in the order added
	channels    []keyPattern     // in the order added
}

// aclRules is everything a user is, published whole (aclUser.rules).
type aclRules struct {
	enabled   bool
	nopass    bool
	sanitize  uint8    // 0, aclSanitizeSkip or aclSanitize
	passwords []string // hex SHA-256, in the order added
	selectors []*aclSelector
	// unrestricted: the root selector allows every command, key and
	// channel, so the check per command is this one flag.
	unrestricted bool
}

const (
	aclSanitizeSkip uint8 = 1
	aclSanitize     uint8 = 2
)

// aclUser is one user. Connections authenticated as it point at it; its
// rules change under them.
type aclUser struct {
	name  string
	rules atomic.Pointer[aclRules]
}

func (u *aclUser) load() *aclRules { return u.rules.Load() }

// newSelector returns a selector that allows nothing.
func newSelector(root bool) *aclSelector {
	return &aclSelector{root: root, allowed: make([]uint64, aclWords())}
}

// aclWords is the length of a command bitset.
func aclWords() int { return (len(commandsByID) + 63) / 64 }

func (s *aclSelector) clone() *aclSelector {
	c := &aclSelector{
		root: s.root, allCommands: s.allCommands, future: s.future, allKeys: s.allKeys, allChannels: s.allChannels,
		allowed:  append([]uint64(nil), s.allowed...),
		keys:     append([]keyPattern(nil), s.keys...),
		channels: append([]keyPattern(nil), s.channels...),
	}
	if len(s.firstArgs) > 0 {
		c.firstArgs = make(map[int][]string, len(s.firstArgs))
		for id, a := range s.firstArgs {
			c.firstArgs[id] = append([]string(nil), a...)
		}
	}
	return c
}

func (r *aclRules) clone() *aclRules {
	c := *r
	c.passwords = append([]string(nil), r.passwords...)
	c.selectors = make([]*aclSelector, len(r.selectors))
	for i, s := range r.selectors {
		c.selectors[i] = s.clone()
	}
	return &c
}

// newRules returns a new user's rules: off, no password, nothing allowed.
func newRules() *aclRules {
	return &aclRules{selectors: []*aclSelector{newSelector(true)}}
}

// defaultRules are the default user's at startup: on, nopass, everything.
func defaultRules() *aclRules {
	r := newRules()
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		_ = r.apply(op)
	}
	r.finish()
	return r
}

// finish computes the derived fields once the rules are complete.
func (r *aclRules) finish() {
	root := r.selectors[0]
	r.unrestricted = root.allCommands && root.allKeys && root.allChannels
}

func (s *aclSelector) bit(id int) bool {
	return id < len(s.allowed)*64 && s.allowed[id/64]&(1<<(id%64)) != 0
}

func (s *aclSelector) setBit(id int, on bool) {
	if id >= len(s.allowed)*64 {
		return
	}
	if on {
		s.allowed[id/64] |= 1 << (id % 64)
		return
	}
	s.allowed[id/64] &^= 1 << (id % 64)
	s.allCommands = false
}

// changeCommand allows or denies cmd and, for a container, its
// subcommands, and forgets its first-args.
func (s *aclSelector) changeCommand(cmd *command, on bool) {
	s.setBit(cmd.statsID, on)
	delete(s.firstArgs, cmd.statsID)
	for _, sub := range cmd.subOrder {
		s.setBit(sub.statsID, on)
	}
}

// changeCategory allows or denies every command of the category: a
// container in it with all its subcommands, then the subcommands in it.
func (s *aclSelector) changeCategory(cat uint32, on bool) {
	cats := aclCommandCategories()
	for _, cmd := range commandOrder {
		if cats[cmd.statsID]&cat != 0 {
			s.changeCommand(cmd, on)
		}
		for _, sub := range cmd.subOrder {
			if cats[sub.statsID]&cat != 0 {
				s.changeCommand(sub, on)
			}
		}
	}
}

func (s *aclSelector) setAll(on bool) {
	v := uint64(0)
	if on {
		v = ^v
	}
	for i := range s.allowed {
		s.allowed[i] = v
	}
	s.allCommands, s.future = on, on
	s.firstArgs = nil
}

// aclError is why a rule was refused, as Redis's ACLSetUserStringError
// words it.
type aclError string

const (
	aclErrUnknown      aclError = "Unknown command or category name in ACL"
	aclErrSyntax       aclError = "Syntax error"
	aclErrKeysAfterAll aclError = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	aclErrChanAfterAll aclError = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
	aclErrNoSuchPass   aclError = "The password you are trying to remove from the user does not exist"
	aclErrBadHash      aclError = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	aclErrFirstArgSub  aclError = "Allowing first-arg of a subcommand is not supported"
)

// applySelector applies one selector rule.
func (s *aclSelector) apply(op string) aclError {
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.allKeys, s.keys = true, nil
	case strings.EqualFold(op, "resetkeys"):
		s.allKeys, s.keys = false, nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.allChannels, s.channels = true, nil
	case strings.EqualFold(op, "resetchannels"):
		s.allChannels, s.channels = false, nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		s.setAll(true)
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		s.setAll(false)
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		if s.allChannels {
			return aclErrChanAfterAll
		}
		if hasSpaceOrNul(op[1:]) {
			return aclErrSyntax
		}
		for _, c := range s.channels {
			if c.pattern == op[1:] {
				return ""
			}
		}
		s.channels = append(s.channels, newPattern(op[1:], 0))
	case len(op) >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@':
		cat := aclCategory(op[2:])
		if cat == 0 {
			return aclErrUnknown
		}
		s.changeCategory(cat, op[0] == '+')
	case op[0] == '+':
		return s.allowCommand(op[1:])
	case op[0] == '-':
		cmd := aclLookup(op[1:])
		if cmd == nil {
			return aclErrUnknown
		}
		s.changeCommand(cmd, false)
	default:
		return aclErrSyntax
	}
	return ""
}

func (s *aclSelector) addKeyPattern(op string) aclError {
	if s.allKeys {
		return aclErrKeysAfterAll
	}
	perm, at := aclRW, 1
	if op[0] == '%' {
		perm = 0
		for ; at < len(op); at++ {
			c := op[at]
			switch {
			case (c == 'R' || c == 'r') && perm&aclRead == 0:
				perm |= aclRead
				continue
			case (c == 'W' || c == 'w') && perm&aclWrite == 0:
				perm |= aclWrite
				continue
			case c == '~':
				at++
			default:
				return aclErrSyntax
			}
			break
		}
	}
	pattern := op[min(at, len(op)):]
	if perm == 0 || hasSpaceOrNul(pattern) {
		return aclErrSyntax
	}
	for i := range s.keys {
		if s.keys[i].pattern == pattern {
			s.keys[i].perm |= perm
			s.allKeys = false
			return ""
		}
	}
	s.keys = append(s.keys, newPattern(pattern, perm))
	s.allKeys = false
	return ""
}

// allowCommand applies +name: a command, a subcommand, or a first-arg.
func (s *aclSelector) allowCommand(name string) aclError {
	cut := strings.LastIndexByte(name, '|')
	if cut < 0 {
		cmd := aclLookup(name)
		if cmd == nil {
			return aclErrUnknown
		}
		s.changeCommand(cmd, true)
		return ""
	}
	parent := aclLookup(name[:cut])
	switch {
	case parent == nil:
		return aclErrUnknown
	case parent.parent != nil:
		return aclErrFirstArgSub
	case cut == len(name)-1:
		return aclErrSyntax
	case parent.subs != nil:
		sub := aclLookup(name)
		if sub == nil {
			return aclErrUnknown
		}
		s.changeCommand(sub, true)
		return ""
	}
	arg := name[cut+1:]
	for _, a := range s.firstArgs[parent.statsID] {
		if strings.EqualFold(a, arg) {
			return ""
		}
	}
	if s.firstArgs == nil {
		s.firstArgs = make(map[int][]string)
	}
	s.firstArgs[parent.statsID] = append(s.firstArgs[parent.statsID], arg)
	return ""
}

// aclLookup finds a command or "parent|sub" by name, any case.
func aclLookup(name string) *command {
	parent, sub, isSub := strings.Cut(strings.ToLower(name), "|")
	cmd := commands[parent]
	if cmd == nil || !isSub {
		return cmd
	}
	if cmd.subs == nil || strings.Contains(sub, "|") {
		return nil
	}
	return cmd.subs[sub]
}

// apply applies one user rule (ACLSetUser).
func (r *aclRules) apply(op string) aclError {
	if op == "" {
		return ""
	}
	switch {
	case strings.EqualFold(op, "on"):
		r.enabled = true
	case strings.EqualFold(op, "off"):
		r.enabled = false
	case strings.EqualFold(op, "skip-sanitize-payload"):
		r.sanitize = aclSanitizeSkip
	case strings.EqualFold(op, "sanitize-payload"):
		r.sanitize = aclSanitize
	case strings.EqualFold(op, "nopass"):
		r.nopass, r.passwords = true, nil
	case strings.EqualFold(op, "resetpass"):
		r.nopass, r.passwords = false, nil
	case op[0] == '>' || op[0] == '#':
		hash := op[1:]
		if op[0] == '>' {
			hash = hashPassword(op[1:])
		} else if !validPasswordHash(hash) {
			return aclErrBadHash
		}
		r.nopass = false
		for _, p := range r.passwords {
			if p == hash {
				return ""
			}
		}
		r.passwords = append(r.passwords, hash)
	case op[0] == '<' || op[0] == '!':
		hash := op[1:]
		if op[0] == '<' {
			hash = hashPassword(op[1:])
		} else if !validPasswordHash(hash) {
			return aclErrBadHash
		}
		for i, p := range r.passwords {
			if p == hash {
				r.passwords = append(r.passwords[:i:i], r.passwords[i+1:]...)
				return ""
			}
		}
		return aclErrNoSuchPass
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(false)
		for _, sop := range splitSelector(op[1 : len(op)-1]) {
			if err := s.apply(sop); err != "" {
				return err
			}
		}
		r.selectors = append(r.selectors, s)
	case strings.EqualFold(op, "clearselectors"):
		r.selectors = r.selectors[:1]
	case strings.EqualFold(op, "reset"):
		root := newSelector(true)
		*r = aclRules{sanitize: aclSanitize, selectors: []*aclSelector{root}}
	default:
		return r.selectors[0].apply(op)
	}
	return ""
}

// splitSelector splits the inside of "(...)" into rules on spaces, as
// Redis's sdssplitargs does for the plain (unquoted) rules selectors hold.
func splitSelector(s string) []string {
	return strings.Fields(s)
}

// mergeSelectorArgs joins a selector written over several arguments,
// "(+get" "~k)", into one, as Redis does; it returns the index of an
// unclosed one's start, or -1.
func mergeSelectorArgs(args []string) ([]string, int) {
	out := make([]string, 0, len(args))
	open := -1
	var sel strings.Builder
	for i, op := range args {
		if open < 0 && op != "" && op[0] == '(' && op[len(op)-1] != ')' {
			open = i
			sel.Reset()
			sel.WriteString(op)
			continue
		}
		if open >= 0 {
			sel.WriteByte(' ')
			sel.WriteString(op)
			if op != "" && op[len(op)-1] == ')' {
				out = append(out, sel.String())
				open = -1
			}
			continue
		}
		out = append(out, op)
	}
	return out, open
}

func hashPassword(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:])
}

func validPasswordHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// hasSpaceOrNul is Redis's ACLStringHasSpaces: isspace or NUL.
func hasSpaceOrNul(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// aclCommandCategories returns every command's categories as bits, by
// id, computed once from the table's acl fields.
func aclCommandCategories() []uint32 {
	aclTablesOnce.Do(buildACLTables)
	return aclCats
}

var (
	aclTablesOnce sync.Once
	aclCats       []uint32
	aclKeyPerms   [][]uint8 // by id, one per key spec: what the key needs
	aclChannels   []uint8   // by id: how the command names channels
)

// How a command names channels (Redis's commands_with_channels).
const (
	chanNone      uint8 = iota
	chanPublish         // the first argument, published to
	chanSubscribe       // every argument, subscribed to
	chanPattern         // every argument, a pattern subscribed to
)

func buildACLTables() {
	aclCats = make([]uint32, len(commandsByID))
	aclKeyPerms = make([][]uint8, len(commandsByID))
	aclChannels = make([]uint8, len(commandsByID))
	for id, cmd := range commandsByID {
		for _, w := range strings.Fields(cmd.acl) {
			aclCats[id] |= aclCategory(strings.TrimPrefix(w, "@"))
		}
		for _, ks := range cmd.keySpecs {
			aclKeyPerms[id] = append(aclKeyPerms[id], keyPermOf(ks.flags))
		}
		if cmd.destFlags != "" { // last: what keysOf's later keys need
			aclKeyPerms[id] = append(aclKeyPerms[id], keyPermOf(cmd.destFlags))
		}
		switch cmd.name {
		case "publish", "spublish":
			aclChannels[id] = chanPublish
		case "subscribe", "ssubscribe":
			aclChannels[id] = chanSubscribe
		case "psubscribe":
			aclChannels[id] = chanPattern
		}
	}
}

// keyPermOf is what a key of a spec with these flags needs: read for
// access, write for insert, delete or update.
func keyPermOf(flags string) uint8 {
	var p uint8
	if hasFlag(flags, "access") {
		p |= aclRead
	}
	if hasFlag(flags, "insert") || hasFlag(flags, "delete") || hasFlag(flags, "update") {
		p |= aclWrite
	}
	return p
}

// setKeyPerm is SET's key's need by its arguments (variable_flags): an
// update, and a read too with GET.
func setKeyPerm(args [][]byte) uint8 {
	for _, a := range args[min(3, len(args)):] {
		if ascii.EqualFold(a, "get") {
			return aclRW
		}
	}
	return aclWrite
}
