package kv

import (
	"github.com/shoalkv/shoal/internal/ascii"
)

// Connection commands: PING ECHO QUIT HELLO AUTH SELECT RESET and CLIENT.

func cmdPing(_ *Handler, cl *client, args [][]byte) {
	if cl.proto == 2 && cl.subscribed() {
		pingSubscribed(cl, args) // pubsub.go
		return
	}
	switch len(args) {
	case 1:
		cl.out = append(cl.out, "+PONG\r\n"...)
	case 2:
		cl.writeBulk(args[1])
	default:
		cl.writeError(errWrongArgs("ping"))
	}
}

func cmdEcho(_ *Handler, cl *client, args [][]byte) { cl.writeBulk(args[1]) }

func cmdQuit(_ *Handler, cl *client, _ [][]byte) {
	cl.writeOK()
	cl.closeAfterReply = true
}

func cmdAuth(h *Handler, cl *client, args [][]byte) {
	if len(args) > 3 {
		cl.writeError(errSyntax)
		return
	}
	user, pass := []byte("default"), args[1]
	if len(args) == 2 {
		if h.acl.def.load().nopass {
			cl.writeError(errAuthNoPass)
			return
		}
	} else {
		user, pass = args[1], args[2]
	}
	if !h.authenticate(cl, args[0], user, pass) { // acl_users.go
		cl.writeError(errWrongPass)
		return
	}
	cl.writeOK()
}

func cmdHello(h *Handler, cl *client, args [][]byte) {
	ver := int64(0)
	next := 1
	if len(args) >= 2 {
		v, ok := ascii.ParseInt(args[1])
		if !ok {
			cl.writeError(errProtoVersion)
			return
		}
		if v < 2 || v > 3 {
			cl.writeError(errNoProto)
			return
		}
		ver = v
		next = 2
	}
	var user, pass, name []byte
	hasName := false
	for j := next; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case ascii.EqualFold(args[j], "AUTH") && more >= 2:
			user, pass = args[j+1], args[j+2]
			j += 2
		case ascii.EqualFold(args[j], "SETNAME") && more >= 1:
			name, hasName = args[j+1], true
			if !validClientName(name) {
				cl.writeError(errClientName)
				return
			}
			j++
		default:
			cl.writeError(sanitizeError("ERR Syntax error in HELLO option '" + cString(args[j], len(args[j])) + "'"))
			return
		}
	}
	if user != nil && !h.authenticate(cl, args[0], user, pass) {
		cl.writeError(errWrongPass)
		return
	}
	if !cl.authed && h.authRequired.Load() {
		cl.writeError(errHelloNoAuth)
		return
	}
	if hasName {
		cl.setName(string(name))
	}
	if ver != 0 {
		cl.proto = uint8(ver)
		cl.protoShown.Store(int32(ver))
	}
	cl.writeMap(7)
	cl.writeBulkStr("server")
	cl.writeBulkStr("redis")
	cl.writeBulkStr("version")
	cl.writeBulkStr(Version)
	cl.writeBulkStr("proto")
	cl.writeInt(int64(cl.proto))
	cl.writeBulkStr("id")
	cl.writeInt(cl.id)
	cl.writeBulkStr("mode")
	cl.writeBulkStr("standalone")
	cl.writeBulkStr("role")
	if host, _ := h.masterAddr(); host != "" {
		cl.writeBulkStr("replica")
	} else {
		cl.writeBulkStr("master")
	}
	cl.writeBulkStr("modules")
	cl.writeArray(0)
}

func cmdReset(h *Handler, cl *client, _ [][]byte) {
	h.stopTracking(cl)
	h.stopMonitor(cl)
	if s := cl.sess.Load(); s != nil {
		h.endSession(cl, s) // discard, unwatch, unsubscribe (multi.go, pubsub.go)
	}
	cl.proto = 2
	cl.selected.Store(0)
	cl.protoShown.Store(2)
	cl.setName("")
	// As Redis's clientSetDefaultAuth: back to the default user,
	// authenticated only if it needs no password.
	cl.setUser(h.acl.def)
	if h.authRequired.Load() {
		cl.setAuthed(false)
	}
	cl.writeStatus("RESET")
}

// validClientName reports whether name has only printable ASCII without
// spaces, as Redis requires.
func validClientName(name []byte) bool {
	for _, c := range name {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

func cmdClientID(_ *Handler, cl *client, _ [][]byte) { cl.writeInt(cl.id) }

func cmdClientSetName(_ *Handler, cl *client, args [][]byte) {
	if !validClientName(args[2]) {
		cl.writeError(errClientName)
		return
	}
	cl.setName(string(args[2]))
	cl.writeOK()
}

func cmdClientGetName(_ *Handler, cl *client, _ [][]byte) {
	name := cl.getName()
	if name == "" {
		cl.writeNull()
		return
	}
	cl.writeBulkStr(name)
}

// cmdClientSetInfo implements Redis 7.2's CLIENT SETINFO LIB-NAME|LIB-VER,
// which go-redis sends after connecting.
func cmdClientSetInfo(_ *Handler, cl *client, args [][]byte) {
	val := string(args[3])
	for _, c := range args[3] {
		if c < '!' || c > '~' {
			cl.writeError("ERR " + string(args[2]) + " cannot contain spaces, newlines or special characters.")
			return
		}
	}
	switch {
	case ascii.EqualFold(args[2], "LIB-NAME"):
		cl.updateNames(func(n *clientNames) { n.libName = val })
	case ascii.EqualFold(args[2], "LIB-VER"):
		cl.updateNames(func(n *clientNames) { n.libVer = val })
	default:
		cl.writeError(sanitizeError("ERR Unrecognized option '" + string(args[2]) + "'"))
		return
	}
	cl.writeOK()
}

func cmdClientInfo(_ *Handler, cl *client, _ [][]byte) {
	line := appendClientInfo(nil, cl, nowMillis())
	cl.writeVerbatim(append(line, '\n'))
}

func cmdClientList(h *Handler, cl *client, args [][]byte) {
	var ids map[int64]bool
	typeFilter := ""
	for i := 2; i < len(args); i++ {
		switch {
		case ascii.EqualFold(args[i], "TYPE") && i+1 < len(args):
			typeFilter = string(args[i+1])
			if !knownClientType(typeFilter) {
				cl.writeError(sanitizeError("ERR Unknown client type '" + typeFilter + "'"))
				return
			}
			i++
		case ascii.EqualFold(args[i], "ID") && i+1 < len(args):
			ids = map[int64]bool{}
			for i++; i < len(args); i++ {
				id, ok := ascii.ParseInt(args[i])
				if !ok {
					cl.writeError("ERR Invalid client ID")
					return
				}
				ids[id] = true
			}
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	now := nowMillis()
	var text []byte
	for _, other := range h.clients.snapshot() {
		if ids != nil && !ids[other.id] {
			continue
		}
		if typeFilter != "" && !clientTypeIs(other, []byte(typeFilter)) {
			continue // a client is pubsub while subscribed, else normal (pubsub.go)
		}
		text = appendClientInfo(text, other, now)
		text = append(text, '\n')
	}
	cl.writeVerbatim(text)
}

func knownClientType(t string) bool {
	for _, k := range []string{"NORMAL", "MASTER", "REPLICA", "SLAVE", "PUBSUB"} {
		if ascii.EqualFold([]byte(t), k) {
			return true
		}
	}
	return false
}

// cmdClientKill implements both forms: CLIENT KILL addr:port (OK or an
// error) and CLIENT KILL <filter> <value> ... (the number killed). A client
// on another loop is closed through Conn.Execute so that only its own loop
// touches it.
func cmdClientKill(h *Handler, cl *client, args [][]byte) {
	var (
		addr, laddr string
		id          int64
		skipMe      = true
		typeFilter  []byte
		user        *aclUser
		oldForm     = len(args) == 3
	)
	if oldForm {
		addr = string(args[2])
		skipMe = false
	} else {
		if len(args)%2 != 0 {
			cl.writeError(errSyntax)
			return
		}
		for i := 2; i < len(args); i += 2 {
			val := args[i+1]
			switch {
			case ascii.EqualFold(args[i], "ID"):
				n, ok := ascii.ParseInt(val)
				if !ok || n <= 0 {
					cl.writeError("ERR client-id should be greater than 0")
					return
				}
				id = n
			case ascii.EqualFold(args[i], "TYPE"):
				if !knownClientType(string(val)) {
					cl.writeError(sanitizeError("ERR Unknown client type '" + string(val) + "'"))
					return
				}
				typeFilter = val
			case ascii.EqualFold(args[i], "USER"):
				if user = h.userNamed(string(val)); user == nil {
					cl.writeError(sanitizeError("ERR No such user '" + string(val) + "'"))
					return
				}
			case ascii.EqualFold(args[i], "ADDR"):
				addr = string(val)
			case ascii.EqualFold(args[i], "LADDR"):
				laddr = string(val)
			case ascii.EqualFold(args[i], "SKIPME"):
				switch {
				case ascii.EqualFold(val, "YES"):
					skipMe = true
				case ascii.EqualFold(val, "NO"):
					skipMe = false
				default:
					cl.writeError(errSyntax)
					return
				}
			default:
				cl.writeError(errSyntax)
				return
			}
		}
	}
	killed := 0
	for _, other := range h.clients.snapshot() {
		if (typeFilter != nil && !clientTypeIs(other, typeFilter)) || (addr != "" && other.addr != addr) || (laddr != "" && other.laddr != laddr) ||
			(id != 0 && other.id != id) || (skipMe && other == cl) || (user != nil && !other.userIs(user)) {
			continue
		}
		if other == cl {
			killed++
			cl.closeAfterReply = true
			continue
		}
		if !h.clients.kill(other) {
			continue // killed already, its close still on its way to its loop
		}
		killed++
		conn := other.conn
		_ = conn.Run(func() { _ = conn.Close() })
	}
	if oldForm {
		if killed == 0 {
			cl.writeError(errNoSuchClient)
			return
		}
		cl.writeOK()
		return
	}
	cl.writeInt(int64(killed))
}

func cmdClientHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "CLIENT", []string{
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR",
		"    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are: ID <client-id>, TYPE NORMAL, USER <username>,",
		"    ADDR <ip:port>, LADDR <ip:port>, SKIPME (YES|NO).",
		"LIST [TYPE NORMAL] [ID <client-id> [...]]",
		"    Return information about client connections.",
		"UNPAUSE",
		"    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETINFO <LIB-NAME|LIB-VER> <value>",
		"    Set client library name or version.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
	})
}

// writeHelp writes a HELP reply in Redis's shape: a header line, the lines,
// and the HELP line, all as simple strings.
func writeHelp(cl *client, cmd string, lines []string) {
	cl.writeArray(len(lines) + 3)
	cl.writeStatus(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		cl.writeStatus(l)
	}
	cl.writeStatus("HELP")
	cl.writeStatus("    Prints this help.")
}
