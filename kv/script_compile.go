package kv

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// Compiling scripts: the shebang line of Redis 7.0, gopher-lua's parser
// and compiler, and the checks that keep a hostile body from crashing the
// process.

// parseShebang reads a "#!lua [flags=a,b]" first line as Redis 7.0's
// evalExtractShebangFlags does. n is the length of the line without its
// newline, 0 without a shebang.
func parseShebang(body []byte) (flags scriptFlags, n int, errText string) {
	if len(body) < 2 || body[0] != '#' || body[1] != '!' {
		return flags, 0, ""
	}
	n = strings.IndexByte(string(body), '\n')
	if n < 0 {
		return flags, 0, "ERR Invalid script shebang"
	}
	parts := strings.Fields(string(body[:n]))
	if parts[0] != "#!lua" {
		return flags, 0, "ERR Unexpected engine in script shebang: " + parts[0]
	}
	flags.shebang = true
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return flags, 0, "ERR Unknown lua shebang option: " + p
		}
		if list == "" {
			continue
		}
		for _, f := range strings.Split(list, ",") {
			switch f {
			case "no-writes":
				flags.noWrites = true
			case "allow-oom":
				flags.allowOOM = true
			case "allow-stale", "no-cluster", "allow-cross-slot-keys":
				// Shoal has no replicas or cluster: nothing to allow.
			default:
				return flags, 0, "ERR Unexpected flag in script shebang: " + f
			}
		}
	}
	return flags, n, ""
}

// chunkID is how Lua 5.1 names a chunk loaded from a string in messages
// (luaO_chunkid): [string "first line..."].
func chunkID(src string) string {
	line, _, cut := strings.Cut(src, "\n")
	if len(line) > 45 {
		line, cut = line[:45], true
	}
	if cut {
		line += "..."
	}
	return `[string "` + line + `"]`
}

// compileScript compiles a script body (a shebang line becomes a comment,
// so line numbers stay those of the body) and returns it with Redis's
// error text on failure.
func compileScript(sha string, body []byte) (*luaScript, string) {
	flags, n, errText := parseShebang(body)
	if errText != "" {
		return nil, errText
	}
	src := body
	if n > 0 {
		src = append([]byte("--"), body[2:]...)
	}
	proto, msg := compileLua(src, luaChunkName)
	if msg != "" {
		return nil, "ERR Error compiling script (new function): " + msg
	}
	return &luaScript{sha: sha, proto: proto, flags: flags}, ""
}

// compileLua parses and compiles src; a failure is a message in Lua's
// form, "name:line: what".
func compileLua(src []byte, name string) (proto *lua.FunctionProto, msg string) {
	defer func() {
		if r := recover(); r != nil {
			proto, msg = nil, fmt.Sprintf("%s: %v", name, r)
		}
	}()
	chunk, err := parse.Parse(bytes.NewReader(src), name)
	if err != nil {
		return nil, parseErrorText(err, name, src)
	}
	if syntaxTooDeep(chunk, luaMaxSyntaxNest) {
		return nil, fmt.Sprintf("%s: chunk has too many syntax levels (more than %d)", name, luaMaxSyntaxNest)
	}
	proto, err = lua.Compile(chunk, name)
	if err != nil {
		if ce, ok := err.(*lua.CompileError); ok {
			return nil, fmt.Sprintf("%s:%d: %s", name, ce.Line, ce.Message)
		}
		return nil, fmt.Sprintf("%s: %v", name, err)
	}
	// gopher-lua gives the main chunk Lua 5.0's "arg" table, made at every
	// call, where no name can reach it; Lua 5.1's main chunk has none.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, ""
}

// parseErrorText formats a gopher-lua syntax error as Lua does:
// "user_script:1: syntax error near '<eof>'".
func parseErrorText(err error, name string, src []byte) string {
	pe, ok := err.(*parse.Error)
	if !ok {
		return fmt.Sprintf("%s: %v", name, err)
	}
	line, near := pe.Pos.Line, pe.Token
	if line == parse.EOF {
		line, near = bytes.Count(src, []byte("\n"))+1, "<eof>"
	}
	return fmt.Sprintf("%s:%d: %s near '%s'", name, line, pe.Message, near)
}

// syntaxTooDeep reports whether the syntax tree nests deeper than limit
// nodes. gopher-lua's compiler recurses once per level, so a script of
// a million nested parentheses or operators would exhaust the goroutine's
// stack, which Go cannot recover from; Lua 5.1 refuses such chunks too
// ("too many syntax levels"). The walk itself keeps its own stack.
func syntaxTooDeep(chunk []ast.Stmt, limit int) bool {
	type node struct {
		v     reflect.Value
		depth int
	}
	stack := []node{{reflect.ValueOf(chunk), 0}}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v := n.v; v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				stack = append(stack, node{v.Elem(), n.depth})
			}
		case reflect.Pointer:
			if v.IsNil() {
				continue
			}
			if n.depth+1 > limit {
				return true
			}
			stack = append(stack, node{v.Elem(), n.depth + 1})
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				switch f := v.Field(i); f.Kind() {
				case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Struct:
					stack = append(stack, node{f, n.depth})
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				stack = append(stack, node{v.Index(i), n.depth})
			}
		}
	}
	return false
}
