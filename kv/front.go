package kv

import (
	"strings"
)

// What the serving edge's other fronts (HTTP, frames) use to serve the
// keyspace as RESP's commands do: the same password and protected mode,
// the exec gate (no EXEC interleaves with a batch), WATCH, and the command
// counters, so INFO and /metrics cover every front. A second port must
// never be a way around AUTH, so the fronts check the same atomics RESP
// does, per request.

// AuthRequired reports whether a password is set (requirepass).
func (h *Handler) AuthRequired() bool { return h.authRequired.Load() }

// PasswordMatches reports whether p is a password of the default user,
// which the fronts serve as (see FrontAllows), in constant time; false
// while it has none (nopass) or is off.
func (h *Handler) PasswordMatches(p []byte) bool {
	r := h.acl.def.load()
	return !r.nopass && r.credentialsMatch(p)
}

// ProtectedMode reports whether Redis's protected mode is on: while it is
// and no password is set, only clients on this host may be served.
func (h *Handler) ProtectedMode() bool { return h.protectedMode.Load() }

// ProtectedModeText is redis-server 7.0's refusal of a client from another
// host under protected mode, word for word (typo included), so that users
// searching for it find Redis's advice; RESP sends it as an error reply,
// the other fronts in their own framing.
const ProtectedModeText = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."

// Logging reports whether writes are logged to an append-only file. Writes
// over the fronts bypass the command path that logs them, so a front
// refuses them while this is on rather than acknowledge writes a restart
// would lose.
func (h *Handler) Logging() bool { return h.aof != nil }

// Touch tells WATCH that key was written outside a command.
func (h *Handler) Touch(key []byte) { h.touchKey(key) }

// Wrote tells WATCH, client-side caching and keyspace notifications that a
// front's cmd (SET, DEL or INCRBY, as FrontCommandOf names them) changed
// key in database 0, as the command would have: "set" (then "expire" when
// the SET gave a TTL), "del" for a key that existed, "incrby". A front
// calls it instead of Touch after such a write. It cannot tell a new key
// from an old one, so the fronts publish no "new".
func (h *Handler) Wrote(cmd FrontCommand, key []byte, expires bool) {
	h.touchKeyIn(0, key)
	if h.pubsub.events.active.Load() == 0 || cmd < 0 || int(cmd) >= len(commandsByID) {
		return
	}
	switch commandsByID[cmd].name {
	case "set":
		h.notifyDB(nil, 0, evString, "set", key)
		if expires {
			h.notifyDB(nil, 0, evGeneric, "expire", key)
		}
	case "del":
		h.notifyDB(nil, 0, evGeneric, "del", key)
	case "incrby":
		h.notifyDB(nil, 0, evString, "incrby", key)
	}
}

// FrontCommand is the Redis command a front's request is counted as in
// INFO commandstats and /metrics (GET, SET, DEL, INCRBY, PING).
type FrontCommand int

// NoCommand marks a front request that ran no command (a /healthz, a 404).
const NoCommand FrontCommand = noID

// FrontCommandOf returns the FrontCommand of the top-level command name.
// It panics for a name Shoal does not serve: fronts call it at setup.
func FrontCommandOf(name string) FrontCommand {
	cmd := commands[strings.ToLower(name)]
	if cmd == nil {
		panic("kv: no command " + name)
	}
	return FrontCommand(cmd.statsID)
}

// FrontBatch is one read's worth of front requests on one loop. It holds
// the loop's exec gate, as RESP's batches do, so no EXEC runs meanwhile;
// End releases it.
type FrontBatch struct {
	ls *loopState
	h  *Handler
}

// BeginFrontBatch enters loop's exec gate for a batch of front requests.
func (h *Handler) BeginFrontBatch(loop int) FrontBatch {
	ls := h.cmdStats.forLoop(loop)
	ls.gate.enter()
	return FrontBatch{ls: ls, h: h}
}

// End leaves the exec gate.
func (b FrontBatch) End() { b.ls.gate.leave() }

// Start begins one request; one in 16 per loop is timed.
func (b FrontBatch) Start() FrontTimer { return FrontTimer{t: b.ls.begin(b.h)} }

// FrontTimer is one front request being counted.
type FrontTimer struct{ t frontTimer }

// Done charges the request to cmd (nothing for NoCommand), failed or not.
func (t FrontTimer) Done(cmd FrontCommand, failed bool) { t.t.end(int(cmd), failed) }
