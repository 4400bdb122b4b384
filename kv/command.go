package kv

import (
	"strings"
)

// commandMeta is the static description of one command as COMMAND INFO
// reports it.
type commandMeta struct {
	name     string // lower case; subcommands are "parent|sub"
	arity    int    // Redis arity: n exact, -n at least n (the name counts)
	flags    []string
	firstKey int
	lastKey  int
	step     int
	acl      []string
	tips     []string
	keySpecs []keySpec
}

// keySpec is a Redis 7 key specification; every command Shoal implements
// uses an "index" begin-search and a "range" find-keys step.
type keySpec struct {
	notes   string
	flags   []string
	index   int
	lastKey int
	keyStep int
	limit   int
}

// handlerFunc executes one command whose name and arity were already checked.
// args[0] is the command name; args are valid only during the call.
type handlerFunc func(h *Handler, cl *client, args [][]byte)

// command is a commandMeta joined with its implementation.
type command struct {
	commandMeta
	fn       handlerFunc
	noAuth   bool                // runs before AUTH (flag no_auth)
	parent   *command            // set on subcommands
	subs     map[string]*command // container commands (CLIENT, CONFIG, COMMAND)
	subOrder []*command          // subs in table order, for COMMAND INFO
	doc      commandDoc
	statsID  int // index into commandsByID and the per-loop counters
}

// commandDoc is what COMMAND DOCS reports; redis-cli uses it for hints.
type commandDoc struct {
	summary    string
	since      string
	group      string
	complexity string
}

// maxCommandName bounds the stack buffer used to lower-case a command name
// without allocating; longer names cannot be commands.
const maxCommandName = 32

var (
	commands     map[string]*command // top-level commands by lower-case name
	commandOrder []*command          // top-level commands in table order
	dispatchIdx  commandIndex        // commands again, for the per-request lookup
	commandsByID []*command          // every command and subcommand, by statsID
)

func init() {
	commands = make(map[string]*command, len(commandTable))
	for i := range commandTable {
		meta := commandTable[i]
		cmd := &command{commandMeta: meta, fn: implementations[meta.name], doc: docs[meta.name], statsID: len(commandsByID)}
		commandsByID = append(commandsByID, cmd)
		if cmd.fn == nil {
			panic("kv: no implementation for command " + meta.name)
		}
		for _, f := range meta.flags {
			if f == "no_auth" {
				cmd.noAuth = true
			}
		}
		if parentName, sub, ok := strings.Cut(meta.name, "|"); ok {
			parent := commands[parentName]
			if parent == nil {
				panic("kv: subcommand before its parent: " + meta.name)
			}
			cmd.parent = parent
			if parent.subs == nil {
				parent.subs = make(map[string]*command)
			}
			parent.subs[sub] = cmd
			parent.subOrder = append(parent.subOrder, cmd)
			continue
		}
		commands[meta.name] = cmd
		commandOrder = append(commandOrder, cmd)
		dispatchIdx.add(cmd)
	}
	for name := range implementations {
		if lookupName(commands, name) == nil && !strings.Contains(name, "|") {
			panic("kv: implementation without table entry: " + name)
		}
	}
}

// lookupName finds name case-insensitively without allocating: the name is
// lower-cased into a stack buffer and the map index with string(bytes) does
// not copy.
func lookupName[S ~string | ~[]byte](m map[string]*command, name S) *command {
	if len(name) > maxCommandName {
		return nil
	}
	var buf [maxCommandName]byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return m[string(buf[:len(name)])]
}

// commandIndexSize is a power of two well above the number of commands,
// so probe runs stay short and there is always an empty slot to stop at.
const commandIndexSize = 256

// commandIndex finds a top-level command by name, case-insensitively, on
// every request. A Go map needs the name lower-cased into a buffer and then
// hashed in full (a fifth of the handler's time for GET in the profile);
// this open-addressed table hashes only the length and the first and last
// bytes, then confirms with one case-folding compare, usually at the first
// slot.
type commandIndex struct {
	slots [commandIndexSize]*command
}

// commandSlot is the home slot of a name. Or-ing 0x20 lower-cases ASCII
// letters; for other bytes it merely perturbs the hash, and the compare in
// find decides.
func commandSlot(length int, first, last byte) int {
	return (length*37 + int(first|0x20)*11 + int(last|0x20)) & (commandIndexSize - 1)
}

func (ix *commandIndex) add(c *command) {
	i := commandSlot(len(c.name), c.name[0], c.name[len(c.name)-1])
	for ix.slots[i] != nil {
		i = (i + 1) & (commandIndexSize - 1)
	}
	ix.slots[i] = c
}

// find returns the command named name in any case, or nil.
func (ix *commandIndex) find(name []byte) *command {
	if len(name) == 0 {
		return nil
	}
	i := commandSlot(len(name), name[0], name[len(name)-1])
	for {
		c := ix.slots[i]
		if c == nil {
			return nil
		}
		if len(c.name) == len(name) && equalLower(name, c.name) {
			return c
		}
		i = (i + 1) & (commandIndexSize - 1)
	}
}

// equalLower reports whether b equals the lower-case ASCII word w, ignoring
// b's case; len(b) == len(w).
func equalLower(b []byte, w string) bool {
	for i := 0; i < len(w); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// arityOK reports whether argc arguments (name included) satisfy arity.
func arityOK(arity, argc int) bool {
	if arity >= 0 {
		return argc == arity
	}
	return argc >= -arity
}

// fullName is the name Redis uses in arity errors: "get", "client|setname".
func (c *command) fullName() string { return c.name }

// unknownCommandError formats Redis's reply for an unknown command: the name
// and the first arguments quoted, at most about 128 bytes of them, with CR
// and LF replaced by spaces and each string cut at a NUL as C's %s does.
func unknownCommandError(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(cString(args[0], 128))
	b.WriteString("', with args beginning with: ")
	quoted := 0
	for _, a := range args[1:] {
		if quoted >= 128 {
			break
		}
		s := cString(a, 128-quoted)
		b.WriteByte('\'')
		b.WriteString(s)
		b.WriteString("' ")
		quoted += len(s) + 3
	}
	return sanitizeError(b.String())
}

// unknownSubcommandError is Redis's reply for "CLIENT FOO".
func unknownSubcommandError(parent string, sub []byte) string {
	return sanitizeError("ERR unknown subcommand '" + cString(sub, 128) + "'. Try " +
		strings.ToUpper(parent) + " HELP.")
}

// cString returns b as C's "%.*s" would print it: cut at the first NUL and at
// most max bytes.
func cString(b []byte, max int) string {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	return string(b)
}

// sanitizeError replaces CR and LF, which would break the RESP error line,
// with spaces, as Redis does for errors that echo user input.
func sanitizeError(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// CommandNames returns the names of the top-level commands Shoal
// implements, in COMMAND's order.
func CommandNames() []string {
	names := make([]string, len(commandOrder))
	for i, c := range commandOrder {
		names[i] = c.name
	}
	return names
}
