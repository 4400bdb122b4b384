package kv

// The HTTP and frame fronts have no AUTH with a user name: they serve as
// the default user. A request passes its password check (requirepass is
// the default user's password; HTTP sends it as a Bearer token or Basic
// credentials) and then, as the RESP command it stands for (GET, SET, DEL,
// INCRBY, PING), the default user's command and key rules. A second port
// is never a way around the ACL.

// FrontDenied returns why the default user may not run cmd on key, in the
// words of RESP's -NOPERM, or "" when it may. Refusals are not written to
// ACL LOG: a front request has no client to describe.
func (h *Handler) FrontDenied(cmd FrontCommand, key []byte) string {
	r := h.acl.def.load()
	if r.unrestricted || cmd < 0 || int(cmd) >= len(commandsByID) {
		return ""
	}
	c := commandsByID[cmd]
	args := [2][]byte{nil, key}
	n := 2
	if len(c.keySpecs) == 0 {
		n = 1
	}
	switch reason, _ := r.check(c, args[:n]); reason {
	case aclOK:
		return ""
	case aclDeniedCmd:
		return "NOPERM this user has no permissions to run the '" + c.name + "' command"
	default:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	}
}
