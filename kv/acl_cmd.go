package kv

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"

	"github.com/shoalkv/shoal/internal/ascii"
)

// The ACL command. The subcommands are in redis-server's order (COMMAND
// INFO lists them so).
var _ = registerFamily(family{commands: []*command{
	{
		name: "acl", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"A container for the commands of ACL users.", "6.0.0", "server", "Depends on subcommand."},
	},
	{
		name: "acl|help", arity: 2, fn: cmdACLHelp,
		flags: "loading stale", acl: "@slow",
		doc: commandDoc{"Describes the ACL subcommands.", "6.0.0", "server", "O(1)"},
	},
	{
		name: "acl|deluser", arity: -3, fn: cmdACLDelUser,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Deletes users and disconnects the clients authenticated as them.", "6.0.0", "server", "O(1) amortized time considering the typical user."},
	},
	{
		name: "acl|cat", arity: -2, fn: cmdACLCat,
		flags: "noscript loading stale", acl: "@slow",
		doc: commandDoc{"Lists the ACL categories, or the commands of one.", "6.0.0", "server", "O(1) since the categories and commands are a fixed set."},
	},
	{
		name: "acl|log", arity: -2, fn: cmdACLLog,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Lists the recent refusals of the ACL and failed authentications.", "6.0.0", "server", "O(N) with N being the number of entries shown."},
	},
	{
		name: "acl|getuser", arity: 3, fn: cmdACLGetUser,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Returns a user's flags, passwords and rules.", "6.0.0", "server", "O(N). Where N is the number of password, command and pattern rules that the user has."},
	},
	{
		name: "acl|genpass", arity: -2, fn: cmdACLGenPass,
		flags: "noscript loading stale", acl: "@slow",
		doc: commandDoc{"Returns random hex digits, a password of 256 bits or the bits asked.", "6.0.0", "server", "O(1)"},
	},
	{
		name: "acl|setuser", arity: -3, fn: cmdACLSetUser,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Creates a user or changes its rules.", "6.0.0", "server", "O(N). Where N is the number of rules provided."},
	},
	{
		name: "acl|users", arity: 2, fn: cmdACLUsers,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Lists the users' names.", "6.0.0", "server", "O(N). Where N is the number of configured users."},
	},
	{
		name: "acl|list", arity: 2, fn: cmdACLList,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Lists the users as rules, in the ACL file's format.", "6.0.0", "server", "O(N). Where N is the number of configured users."},
	},
	{
		name: "acl|whoami", arity: 2, fn: cmdACLWhoAmI,
		flags: "noscript loading stale", acl: "@slow",
		doc: commandDoc{"Returns the user the connection is authenticated as.", "6.0.0", "server", "O(1)"},
	},
	{
		name: "acl|save", arity: 2, fn: cmdACLSave,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Writes the users to the aclfile.", "6.0.0", "server", "O(N). Where N is the number of configured users."},
	},
	{
		name: "acl|dryrun", arity: -4, fn: cmdACLDryRun,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Tells whether a user may run a command, without running it.", "7.0.0", "server", "O(1)."},
	},
	{
		name: "acl|load", arity: 2, fn: cmdACLLoad,
		flags: aclAdminFlags, acl: aclAdminCats,
		doc: commandDoc{"Replaces the users with those of the aclfile.", "6.0.0", "server", "O(N). Where N is the number of configured users."},
	},
}})

const (
	aclAdminFlags = "admin noscript loading stale"
	aclAdminCats  = "@admin @slow @dangerous"
)

func cmdACLSetUser(h *Handler, cl *client, args [][]byte) {
	ops := make([]string, len(args)-3)
	for i, a := range args[3:] {
		ops[i] = string(a)
	}
	if msg := h.setUser(string(args[2]), ops); msg != "" {
		cl.writeError(sanitizeError(msg))
		return
	}
	cl.writeOK()
}

func cmdACLDelUser(h *Handler, cl *client, args [][]byte) {
	for _, n := range args[2:] {
		if string(n) == "default" {
			cl.writeError("ERR The 'default' user cannot be removed")
			return
		}
	}
	cl.writeInt(int64(h.delUsers(cl, args[2:])))
}

func cmdACLGetUser(h *Handler, cl *client, args [][]byte) {
	u := h.user(args[2])
	if u == nil {
		cl.writeNull()
		return
	}
	cl.writeUser(u.load())
}

func cmdACLUsers(h *Handler, cl *client, _ [][]byte) {
	users := h.usersSorted()
	cl.writeArray(len(users))
	for _, u := range users {
		cl.writeBulkStr(u.name)
	}
}

func cmdACLList(h *Handler, cl *client, _ [][]byte) {
	users := h.usersSorted()
	cl.writeArray(len(users))
	for _, u := range users {
		cl.writeBulkStr("user " + u.name + " " + u.load().describe())
	}
}

func cmdACLWhoAmI(_ *Handler, cl *client, _ [][]byte) {
	if u := cl.aclUser(); u != nil {
		cl.writeBulkStr(u.name)
		return
	}
	cl.writeNull()
}

func cmdACLCat(_ *Handler, cl *client, args [][]byte) {
	if len(args) == 2 {
		cl.writeArray(len(aclCategories))
		for _, c := range aclCategories {
			cl.writeBulkStr(c)
		}
		return
	}
	if len(args) != 3 {
		cl.writeError(aclSyntaxError(args[1]))
		return
	}
	cat := aclCategory(string(args[2]))
	if cat == 0 {
		name := args[2][:min(len(args[2]), 128)]
		cl.writeError(sanitizeError("ERR Unknown category '" + cString(name, len(name)) + "'"))
		return
	}
	cats := aclCommandCategories()
	var names []string
	for _, cmd := range commandOrder {
		if cats[cmd.statsID]&cat != 0 {
			names = append(names, cmd.name)
		}
		for _, sub := range cmd.subOrder {
			if cats[sub.statsID]&cat != 0 {
				names = append(names, sub.name)
			}
		}
	}
	cl.writeArray(len(names))
	for _, n := range names {
		cl.writeBulkStr(n)
	}
}

// aclGenPassMaxBits bounds ACL GENPASS's argument, as Redis.
const aclGenPassMaxBits = 4096

func cmdACLGenPass(_ *Handler, cl *client, args [][]byte) {
	if len(args) > 3 {
		cl.writeError(aclSyntaxError(args[1]))
		return
	}
	bits := int64(256)
	if len(args) == 3 {
		n, ok := ascii.ParseInt(args[2])
		if !ok {
			cl.writeError(errNotInteger)
			return
		}
		bits = n
	}
	if bits <= 0 || bits > aclGenPassMaxBits {
		cl.writeError("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to " + strconv.Itoa(aclGenPassMaxBits))
		return
	}
	chars := (bits + 3) / 4
	raw := make([]byte, (chars+1)/2)
	_, _ = rand.Read(raw)
	cl.writeBulkStr(hex.EncodeToString(raw)[:chars])
}

func cmdACLDryRun(h *Handler, cl *client, args [][]byte) {
	u := h.user(args[2])
	if u == nil {
		cl.writeError(sanitizeError("ERR User '" + string(args[2]) + "' not found"))
		return
	}
	cmdArgs := args[3:]
	cmd := dispatchIdx.find(cmdArgs[0])
	if cmd != nil && cmd.subs != nil && len(cmdArgs) >= 2 {
		cmd = lookupName(cmd.subs, cmdArgs[1])
	}
	if cmd == nil {
		cl.writeError(sanitizeError("ERR Command '" + string(cmdArgs[0]) + "' not found"))
		return
	}
	if !arityOK(cmd.arity, len(cmdArgs)) {
		cl.writeError(errWrongArgs(cmd.name))
		return
	}
	reason, pos := u.load().check(cmd, cmdArgs)
	switch reason {
	case aclOK:
		cl.writeOK()
	case aclDeniedCmd:
		cl.writeBulkStr("This user has no permissions to run the '" + cmd.name + "' command")
	case aclDeniedKey:
		cl.writeBulkStr("This user has no permissions to access the '" + string(cmdArgs[pos]) + "' key")
	default:
		cl.writeBulkStr("This user has no permissions to access the '" + string(cmdArgs[pos]) + "' channel")
	}
}

func cmdACLHelp(_ *Handler, cl *client, _ [][]byte) {
	writeHelp(cl, "ACL", []string{
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
	})
}

// errNoACLFile is ACL LOAD's and SAVE's answer without an aclfile.
const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func cmdACLLoad(h *Handler, cl *client, _ [][]byte) {
	file := *h.acl.file.Load()
	if file == "" {
		cl.writeError(errNoACLFile)
		return
	}
	if err := h.loadACLFile(cl, file); err != "" {
		cl.writeError(sanitizeError("ERR " + err))
		return
	}
	cl.writeOK()
}

func cmdACLSave(h *Handler, cl *client, _ [][]byte) {
	file := *h.acl.file.Load()
	if file == "" {
		cl.writeError(errNoACLFile)
		return
	}
	if err := h.saveACLFile(file); err != nil {
		h.opts.Logger.Warn("ACL SAVE", "err", err)
		cl.writeError("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	cl.writeOK()
}

// aclSyntaxError is Redis's addReplySubcommandSyntaxError for ACL.
func aclSyntaxError(sub []byte) string {
	return sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(sub, 128) + "'. Try ACL HELP.")
}
