package kv

import (
	"fmt"
	"strings"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// command is everything Shoal knows about one command, written once in its
// table entry (table.go's commandTable or a family's table, see
// registerFamily): what COMMAND INFO reports (name, arity, flags, key
// positions, ACL categories, tips and key specs, exactly as redis-server
// 7.0 reports them), the function that runs it, how the append-only file
// logs it, and what COMMAND DOCS reports. indexFamilies checks every entry
// is complete and consistent and links subcommands to their parents.
type command struct {
	name     string      // lower case; subcommands are "parent|sub"
	arity    int         // Redis arity: n exact, -n at least n (the name counts)
	fn       handlerFunc // for a container command, runs only without a subcommand
	flags    string      // space-separated, in COMMAND INFO's order
	acl      string      // space-separated ACL categories
	tips     string      // space-separated request/response policies
	firstKey int
	lastKey  int
	step     int
	keySpecs []keySpec
	doc      commandDoc
	log      logRule // how the AOF logs it (aof.go); set exactly on commands with the write flag

	// Derived by indexFamilies from the fields above.
	noAuth bool // runs before AUTH (flag no_auth)
	logged bool // write flag: logged to the append-only file (aof.go)
	reads  bool // readonly flag: waits for the log under appendfsync always (aof.go)
	// keysOf, when set, finds a movable-keys command's keys instead of its
	// key specs, as Redis's getkeys procedure does for a command whose
	// spec is incomplete (MIGRATE: the key, or those after KEYS).
	keysOf func(dst []int, args [][]byte) []int
	// mayLog: a read that logs the effect it leaves, if any (PFCOUNT's
	// cached cardinality; aof.go's callMayLog).
	mayLog bool
	// destFlags, when set, are the key-spec flags of every key keysOf
	// finds after the first (a STORE destination: "OW update"), as
	// Redis's getkeys procedures flag them; the first key, and every key
	// when it is empty, has keySpecs[0]'s.
	destFlags string

	// movableKeys: the key count is an argument (flag movablekeys; aof.go
	// locks the stripes of the keys keyPositions finds).
	movableKeys bool
	fast        bool // flag fast: timed for the slow log only when asked (slowlog.go)
	skipSlowlog bool // flag skip_slowlog (EXEC: its commands are logged instead)
	// pausesOnWrite: CLIENT PAUSE WRITE holds it (flags write or
	// may_replicate; pause.go).
	pausesOnWrite bool
	parent        *command            // set on subcommands
	subs          map[string]*command // container commands (CLIENT, CONFIG, COMMAND)
	subOrder      []*command          // subs in table order, for COMMAND INFO
	statsID       int                 // index into commandsByID and the per-loop counters
}

// keySpec is a Redis 7 key specification: an "index" begin-search, or with
// keyword set a "keyword" one (MIGRATE's KEYS), then a "range" find-keys
// step or, with keynum set, a "keynum" one (ZUNION, ZMPOP: the key count
// is an argument).
type keySpec struct {
	notes   string
	unknown bool   // begin-search and find-keys "unknown" (SORT's BY, GET and STORE): finds no key
	flags   string // space-separated
	index   int
	keyword string // begin-search by keyword: the keys follow it
	from    int    // keyword: where the search starts; negative counts from the end, backwards
	lastKey int
	keyStep int
	limit   int

	keynum      bool
	keynumIdx   int // keynum: the count's position, relative to index
	firstKeyIdx int // keynum: the first key's position, relative to index
}

// keyPositions appends the argument positions of the keys of a command
// whose key specs are all "index" + "keynum" (movable keys: ZUNION,
// ZMPOP, ...); a count that is not a positive integer or runs past args
// yields no keys, since the command will refuse it.
func (c *command) keyPositions(dst []int, args [][]byte) []int {
	if c.keysOf != nil {
		return c.keysOf(dst, args)
	}
	for _, ks := range c.keySpecs {
		if ks.unknown {
			continue
		}
		if ks.keyword != "" {
			dst = ks.keywordPositions(dst, args)
			continue
		}
		if !ks.keynum {
			if ks.index < len(args) {
				dst = append(dst, ks.index) // the destination of *STORE
			}
			continue
		}
		at := ks.index + ks.keynumIdx
		if at >= len(args) {
			continue
		}
		n, ok := ascii.ParseInt(args[at])
		first := ks.index + ks.firstKeyIdx
		if !ok || n < 1 || n > int64(len(args)-first) {
			continue
		}
		for i := 0; i < int(n); i += ks.keyStep {
			dst = append(dst, first+i)
		}
	}
	return dst
}

// foundKeyFlags returns the key-spec flags of the i-th key keysOf found.
func (c *command) foundKeyFlags(i int) string {
	if i > 0 && c.destFlags != "" {
		return c.destFlags
	}
	return c.keySpecs[0].flags
}

// keywordPositions appends the positions of the keys after ks's keyword
// (a range to the end), searching for it as Redis does: from ks.from,
// forwards, or backwards when negative.
func (ks keySpec) keywordPositions(dst []int, args [][]byte) []int {
	at := ks.keywordAt(args)
	if at < 0 {
		return dst
	}
	for i := at + 1; i < len(args); i += max(ks.keyStep, 1) {
		dst = append(dst, i)
	}
	return dst
}

// keywordAt returns the position of ks's keyword in args, -1 if absent.
func (ks keySpec) keywordAt(args [][]byte) int {
	if ks.from < 0 {
		for i := len(args) + ks.from; i > 0; i-- {
			if ascii.EqualFold(args[i], ks.keyword) {
				return i
			}
		}
		return -1
	}
	for i := ks.from; i < len(args); i++ {
		if ascii.EqualFold(args[i], ks.keyword) {
			return i
		}
	}
	return -1
}

// handlerFunc executes one command whose name and arity were already checked.
// args[0] is the command name; args are valid only during the call.
type handlerFunc func(h *Handler, cl *client, args [][]byte)

// commandDoc is what COMMAND DOCS reports; redis-cli uses it for hints.
type commandDoc struct {
	summary    string
	since      string
	group      string
	complexity string // noComplexity where Redis's docs give none
}

// noComplexity is the complexity of a command Redis documents without one
// (MONITOR): COMMAND DOCS leaves the field out.
const noComplexity = "(none)"

// maxCommandName bounds the stack buffer used to lower-case a command name
// without allocating; longer names cannot be commands.
const maxCommandName = 32

var (
	commands     map[string]*command // top-level commands by lower-case name
	commandOrder []*command          // top-level commands in table order
	dispatchIdx  commandIndex        // commands again, for the per-request lookup
	commandsByID []*command          // every command and subcommand, by statsID
)

// family is one registration of commands: the core commandTable, or a data
// type's table kept in that type's own file (kv/hash.go, kv/list.go, ...)
// with the AOF rewriter of its kind (rewrite.go), so that a new type is one
// registerFamily call. A family of commands over other families' types
// (MULTI, pub/sub, the blocking sorted-set pops) has no kind.
type family struct {
	kind     store.Kind  // the collection kind rewrite rebuilds; KindNone without one
	rewrite  rewriteFunc // appends the commands that rebuild one value of kind
	commands []*command
}

// families is every registered family, in COMMAND's order: the core table,
// then registerFamily's in the order Go initializes the files.
var families = []family{{commands: commandTable}}

// registerFamily adds a data type's family. Call it from a package-level
// variable, var _ = registerFamily(family{...}): those are initialized
// before init indexes families.
func registerFamily(f family) bool {
	families = append(families, f)
	return true
}

func init() {
	set, err := indexFamilies(families)
	if err != nil {
		panic("kv: " + err.Error())
	}
	set.install()
}

// commandSet is families indexed: the commands the package serves and the
// rewriters of their kinds. Its commands are copies of the table entries,
// so indexing never changes a table, and a test can index the real
// families plus one of its own and install that for a while.
type commandSet struct {
	byName    map[string]*command // top-level commands by lower-case name
	order     []*command          // top-level commands in table order
	byID      []*command          // every command and subcommand, by statsID
	dispatch  commandIndex
	rewriters map[store.Kind]rewriteFunc
}

// install makes s the package's commands (commands, commandOrder,
// dispatchIdx, commandsByID) and rewriters.
func (s *commandSet) install() {
	commands, commandOrder, dispatchIdx, commandsByID = s.byName, s.order, s.dispatch, s.byID
	rewriters = s.rewriters
}

// indexFamilies checks every family (a rewriter exactly when it has a
// collection kind, one family per kind) and every entry (see checkEntry),
// links subcommands to their parents and numbers the commands in order.
func indexFamilies(fams []family) (*commandSet, error) {
	n := 0
	for _, f := range fams {
		n += len(f.commands)
	}
	set := &commandSet{
		byName:    make(map[string]*command, n),
		byID:      make([]*command, 0, n),
		rewriters: make(map[store.Kind]rewriteFunc),
	}
	for _, f := range fams {
		if err := set.addRewriter(f); err != nil {
			return nil, err
		}
		for _, entry := range f.commands {
			// One allocation each, like the table's entries: in the
			// 256-byte size class each command starts a cache line, and
			// the fields dispatch reads fall in its first and last.
			cmd := new(command)
			*cmd = *entry
			if err := checkEntry(cmd); err != nil {
				return nil, err
			}
			if err := set.add(cmd); err != nil {
				return nil, err
			}
		}
	}
	return set, nil
}

// addRewriter records the rewriter of f's kind.
func (s *commandSet) addRewriter(f family) error {
	collection := f.kind != store.KindNone && f.kind != store.KindString
	var first string
	if len(f.commands) > 0 {
		first = f.commands[0].name
	}
	switch {
	case f.rewrite == nil && collection:
		return fmt.Errorf("the family of %q has kind %s but no AOF rewriter", first, f.kind)
	case f.rewrite != nil && !collection:
		return fmt.Errorf("the family of %q has an AOF rewriter but no collection kind for it", first)
	case s.rewriters[f.kind] != nil:
		return fmt.Errorf("the family of %q registers a second AOF rewriter for kind %s", first, f.kind)
	case f.rewrite != nil:
		s.rewriters[f.kind] = f.rewrite
	}
	return nil
}

// checkEntry refuses an entry that lacks a piece (a function, ACL
// categories, any of the four docs fields, key specs exactly when it has
// keys) or whose log rule does not fit it, and derives its flag fields.
func checkEntry(cmd *command) error {
	if cmd.fn == nil || cmd.acl == "" || cmd.doc.summary == "" || cmd.doc.since == "" || cmd.doc.group == "" || cmd.doc.complexity == "" {
		return fmt.Errorf("command table entry %q lacks its function, ACL categories or docs", cmd.name)
	}
	cmd.noAuth = hasWord(cmd.flags, "no_auth")
	cmd.logged = hasWord(cmd.flags, "write")
	cmd.reads = hasWord(cmd.flags, "readonly")
	cmd.movableKeys = hasWord(cmd.flags, "movablekeys")
	cmd.fast = hasWord(cmd.flags, "fast")
	cmd.skipSlowlog = hasWord(cmd.flags, "skip_slowlog")
	cmd.pausesOnWrite = cmd.logged || hasWord(cmd.flags, "may_replicate")
	if (cmd.firstKey != 0) != (len(cmd.keySpecs) != 0) && !cmd.movableKeys {
		return fmt.Errorf("command table entry %q has key positions without key specs or the reverse", cmd.name)
	}
	switch {
	case cmd.log >= numLogRules:
		return fmt.Errorf("command table entry %q has log rule %d, which does not exist", cmd.name, cmd.log)
	case cmd.logged && cmd.log == logNone:
		return fmt.Errorf("command table entry %q has the write flag but no log rule: say how the append-only file logs it (log: logAsIs, ...)", cmd.name)
	case !cmd.logged && cmd.log != logNone:
		return fmt.Errorf("command table entry %q has a log rule but not the write flag; only writes are logged", cmd.name)
	case cmd.log.readsKeyAt1() && cmd.firstKey != 1:
		return fmt.Errorf("command table entry %q: its log rule reads the key at position 1, but its first key is at %d", cmd.name, cmd.firstKey)
	case cmd.log == logDelAbsent && cmd.firstKey == 0 && !cmd.movableKeys:
		return fmt.Errorf("command table entry %q: log rule logDelAbsent needs key positions or movable keys", cmd.name)
	}
	return nil
}

// add links cmd to its parent (a subcommand) or enters it by name, and
// numbers it.
func (s *commandSet) add(cmd *command) error {
	if parentName, sub, ok := strings.Cut(cmd.name, "|"); ok {
		parent := s.byName[parentName]
		if parent == nil {
			return fmt.Errorf("subcommand %q before its parent", cmd.name)
		}
		cmd.parent = parent
		if parent.subs == nil {
			parent.subs = make(map[string]*command)
		}
		if parent.subs[sub] != nil {
			return fmt.Errorf("subcommand %q listed twice", cmd.name)
		}
		parent.subs[sub] = cmd
		parent.subOrder = append(parent.subOrder, cmd)
	} else {
		if s.byName[cmd.name] != nil {
			return fmt.Errorf("command %q listed twice", cmd.name)
		}
		s.byName[cmd.name] = cmd
		s.order = append(s.order, cmd)
		s.dispatch.add(cmd)
	}
	cmd.statsID = len(s.byID)
	s.byID = append(s.byID, cmd)
	return nil
}

// hasWord reports whether the space-separated list has w as one of its words.
func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
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
		buf[i] = ascii.Lower(name[i])
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
		if ascii.EqualFold(name, c.name) {
			return c
		}
		i = (i + 1) & (commandIndexSize - 1)
	}
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

// Subcommands returns the subcommands of a container command, "parent|sub"
// each, in table order; nil for a command without subcommands.
func Subcommands(name string) []string {
	cmd := dispatchIdx.find([]byte(name))
	if cmd == nil {
		return nil
	}
	var names []string
	for _, sub := range cmd.subOrder {
		names = append(names, sub.name)
	}
	return names
}
