package kv

import (
	"crypto/subtle"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/shoalkv/shoal/config"
)

// aclState is a Handler's users and ACL log. mu guards the user map and
// the log; a user's rules are read without it (aclUser.rules).
type aclState struct {
	mu    sync.Mutex
	users map[string]*aclUser
	// def is the default user: new connections start as it. ACL LOAD
	// copies the file's default user into it rather than replace it.
	def *aclUser
	// defaultNames are the names of a new connection: none, and the
	// default user.
	defaultNames *clientNames
	log          []*aclLogEntry // newest first
	logMax       atomic.Int64   // acllog-max-len
	file         atomic.Pointer[string]
}

// initACL makes the default user, before the settings are applied
// (requirepass sets its password).
func (h *Handler) initACL() {
	a := &h.acl
	a.def = &aclUser{name: "default"}
	a.def.rules.Store(defaultRules())
	a.users = map[string]*aclUser{"default": a.def}
	a.defaultNames = &clientNames{user: a.def}
}

// ownACLSettings owns acllog-max-len and aclfile.
func (h *Handler) ownACLSettings() {
	a := &h.acl
	p := h.params
	a.logMax.Store(p.Int("acllog-max-len"))
	p.Own("acllog-max-len", config.Owner{
		Get: func() string { return strconv.FormatInt(a.logMax.Load(), 10) },
		Set: func(v string) { a.logMax.Store(atoi64(v)); h.trimACLLog() },
	})
	file := p.Get("aclfile")
	a.file.Store(&file)
	p.Own("aclfile", config.Owner{
		Get: func() string { return *a.file.Load() },
		Set: func(v string) { a.file.Store(&v) },
	})
}

// refreshAuthRequired recomputes whether connections must authenticate:
// unless the default user is on and nopass, as Redis's authRequired.
func (h *Handler) refreshAuthRequired() {
	r := h.acl.def.load()
	h.authRequired.Store(!(r.enabled && r.nopass))
}

// setDefaultPassword applies requirepass to the default user as Redis
// does: resetpass, then the password, or nopass for none.
func (h *Handler) setDefaultPassword(p string) {
	a := &h.acl
	a.mu.Lock()
	r := a.def.load().clone()
	_ = r.apply("resetpass")
	if p == "" {
		_ = r.apply("nopass")
	} else {
		_ = r.apply(">" + p)
	}
	r.finish()
	a.def.rules.Store(r)
	a.mu.Unlock()
	h.refreshAuthRequired()
}

// user returns the user called name, nil if there is none.
func (h *Handler) user(name []byte) *aclUser {
	h.acl.mu.Lock()
	defer h.acl.mu.Unlock()
	return h.acl.users[string(name)]
}

// credentialsMatch reports whether pass is one of r's passwords (any, if
// nopass), in time independent of where they differ.
func (r *aclRules) credentialsMatch(pass []byte) bool {
	if !r.enabled {
		return false
	}
	if r.nopass {
		return true
	}
	hashed := hashPassword(string(pass))
	ok := 0
	for _, p := range r.passwords {
		ok |= subtle.ConstantTimeCompare([]byte(hashed), []byte(p))
	}
	return ok == 1
}

// authenticate checks user/pass and, if they match, makes cl that user,
// authenticated. A failure is logged (reason auth, the object the command
// name as sent) as Redis does.
func (h *Handler) authenticate(cl *client, cmdName, user, pass []byte) bool {
	if u := h.user(user); u != nil && u.load().credentialsMatch(pass) {
		cl.setUser(u)
		cl.setAuthed(true)
		return true
	}
	ctx := aclCtxToplevel
	if s := cl.sess.Load(); s != nil && s.multi {
		ctx = aclCtxMulti
	}
	h.aclLog(cl, aclDeniedAuth, ctx, string(user), string(cmdName))
	return false
}

// setUser applies ops to the user called name, making it if needed: all
// of them or, on the first error, none. It returns Redis's error text.
func (h *Handler) setUser(name string, ops []string) string {
	if hasSpaceOrNul(name) {
		return "ERR Usernames can't contain spaces or null characters"
	}
	merged, open := mergeSelectorArgs(ops)
	if open >= 0 {
		return "ERR Unmatched parenthesis in acl selector starting at '" + ops[open] + "'."
	}
	a := &h.acl
	a.mu.Lock()
	u := a.users[name]
	var r *aclRules
	if u != nil {
		r = u.load().clone()
	} else {
		r = newRules()
	}
	for _, op := range merged {
		if err := r.apply(op); err != "" {
			a.mu.Unlock()
			return "ERR Error in ACL SETUSER modifier '" + cString([]byte(op), len(op)) + "': " + string(err)
		}
	}
	r.finish()
	var old *aclRules
	if u == nil {
		u = &aclUser{name: name}
		a.users[name] = u
	} else {
		old = u.load()
	}
	u.rules.Store(r)
	a.mu.Unlock()
	if u == a.def {
		h.refreshAuthRequired()
	}
	if old != nil {
		h.killRevokedSubscribers(u, r)
	}
	return ""
}

// delUsers deletes the named users and disconnects the clients
// authenticated as them, as Redis does; it returns how many existed.
func (h *Handler) delUsers(cl *client, names [][]byte) int {
	a := &h.acl
	var gone []*aclUser
	a.mu.Lock()
	for _, n := range names {
		if u := a.users[string(n)]; u != nil {
			delete(a.users, string(n))
			gone = append(gone, u)
		}
	}
	a.mu.Unlock()
	h.disconnectUsers(cl, gone)
	return len(gone)
}

// disconnectUsers closes the connections authenticated as users that are
// gone. A command of theirs that races the close finds nothing allowed.
func (h *Handler) disconnectUsers(cl *client, gone []*aclUser) {
	if len(gone) == 0 {
		return
	}
	for _, u := range gone {
		r := newRules()
		r.finish()
		u.rules.Store(r)
	}
	for _, other := range h.clients.snapshot() {
		for _, u := range gone {
			if other.userIs(u) {
				h.disconnect(cl, other)
				break
			}
		}
	}
}

// userIs reports whether cl is authenticated as u.
func (cl *client) userIs(u *aclUser) bool { return cl.aclUser() == u }

// aclUser is the user cl is authenticated as, nil for a client Shoal runs
// itself.
func (cl *client) aclUser() *aclUser {
	if n := cl.names.Load(); n != nil {
		return n.user
	}
	return nil
}

// setUser makes cl u. Only cl's loop calls it.
func (cl *client) setUser(u *aclUser) {
	cl.updateNames(func(n *clientNames) { n.user = u })
}

// disconnect closes other's connection after its current command, or
// cl's own after this reply.
func (h *Handler) disconnect(cl, other *client) {
	if other == cl {
		cl.closeAfterReply = true
		return
	}
	if conn := other.conn; conn != nil {
		_ = conn.Run(func() { _ = conn.Close() })
	}
}

// usersSorted returns the users by name, the order of Redis's rax.
func (h *Handler) usersSorted() []*aclUser {
	h.acl.mu.Lock()
	list := make([]*aclUser, 0, len(h.acl.users))
	for _, u := range h.acl.users {
		list = append(list, u)
	}
	h.acl.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	return list
}

// killRevokedSubscribers closes the connections of u subscribed to a
// channel or pattern its new rules no longer allow, as Redis 7.0's
// ACLKillPubsubClientsIfNeeded.
func (h *Handler) killRevokedSubscribers(u *aclUser, r *aclRules) {
	for _, s := range r.selectors {
		if s.allChannels {
			return
		}
	}
	for _, other := range h.clients.snapshot() {
		s := other.sess.Load()
		if !other.userIs(u) || s == nil || other.conn == nil {
			continue
		}
		sub := s.sub.Load()
		if sub == nil || sub.counts[0].Load()+sub.counts[1].Load()+sub.counts[2].Load() == 0 {
			continue
		}
		conn := other.conn
		// The subscriptions belong to the client's loop: look there.
		_ = conn.Run(func() {
			if subscribedOutside(sub, r) {
				_ = conn.Close()
			}
		})
	}
}

// subscribedOutside reports whether sub holds a channel or pattern r does
// not allow. Only sub's loop may call it.
func subscribedOutside(sub *subscriber, r *aclRules) bool {
	for sp, set := range sub.channels {
		for name := range set {
			if !r.channelAllowed([]byte(name), space(sp) == spacePattern) {
				return true
			}
		}
	}
	return false
}

// aclUserName is the name CLIENT LIST and ACL LOG show for a client of
// user u: for a client Shoal runs itself, "default".
func (cl *client) aclUserName(u *aclUser) string {
	if u != nil {
		return u.name
	}
	return "default"
}

// userNameIs reports whether name is a user's name; Redis's CLIENT KILL
// USER refuses unknown ones.
func (h *Handler) userNamed(name string) *aclUser {
	h.acl.mu.Lock()
	defer h.acl.mu.Unlock()
	return h.acl.users[name]
}
