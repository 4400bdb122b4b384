package kv

import (
	"math"
	"reflect"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
)

// Conversions between RESP replies and Lua values, as Redis 7.0's
// script_lua.c does them.
//
// A command's reply to redis.call (RESP2): integer → number, bulk string →
// string, null bulk or null array → false, array → table, status →
// {ok=...}, error → {err=...}. After redis.setresp(3) also map →
// {map={...}}, set → {set={member=true}}, null → nil, boolean → boolean,
// double → {double=n}, big number → {big_number=s}, verbatim string →
// {verbatim_string={format=f, string=s}}; attributes are skipped.
//
// A script's result to its caller: number → integer (truncated), string →
// bulk, table → array up to its first nil, or the reply its err, ok,
// double, big_number, verbatim_string, map or set field makes, true →
// integer 1 and false → null (after setresp(3): RESP3 booleans, :1 and :0
// for a RESP2 caller), anything else → null.

// luaMaxReply bounds a script's reply: tables that share tables can make
// a reply of exponential size (a variable for the tests).
var luaMaxReply = luaMaxString

// writeLuaReply writes a script's result v to cl. resp3 is the script's
// redis.setresp(3).
func writeLuaReply(cl *client, v lua.LValue, resp3 bool) {
	w := luaReplyWriter{cl: cl, resp3: resp3, start: len(cl.out)}
	w.value(v, 1)
	if w.failure != "" {
		cl.out = cl.out[:w.start]
		cl.writeError(w.failure)
	}
}

// luaReplyWriter writes one result. path is the tables being written,
// outermost first: a table inside itself would nest without end.
type luaReplyWriter struct {
	cl      *client
	resp3   bool
	start   int
	path    []*lua.LTable
	failure string // set: stop, and answer this error instead
}

func (w *luaReplyWriter) value(v lua.LValue, depth int) {
	cl := w.cl
	if w.failure != "" {
		return
	}
	if depth > luaMaxReplyDepth {
		cl.out = resp.AppendError(cl.out, "ERR reached lua stack limit")
		return
	}
	if len(cl.out)-w.start > luaMaxReply {
		w.failure = "ERR Script reply is larger than " + strconv.Itoa(luaMaxReply) + " bytes"
		return
	}
	switch x := v.(type) {
	case lua.LString:
		cl.writeBulk([]byte(x))
	case lua.LNumber:
		cl.writeInt(luaInteger(float64(x)))
	case lua.LBool:
		switch {
		case w.resp3 && cl.proto >= 3:
			cl.out = resp.AppendBool(cl.out, bool(x))
		case w.resp3 || bool(x):
			cl.writeInt(boolInt(bool(x)))
		default:
			cl.writeNull()
		}
	case *lua.LTable:
		for _, t := range w.path {
			if t == x {
				w.failure = "ERR Script returned a table that contains itself, which has no reply"
				return
			}
		}
		w.path = append(w.path, x)
		w.table(x, depth)
		w.path = w.path[:len(w.path)-1]
	default:
		cl.writeNull()
	}
}

// table writes a table: an error, a status, a RESP3 type, or an array.
func (w *luaReplyWriter) table(t *lua.LTable, depth int) {
	cl := w.cl
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		cl.out = resp.AppendError(cl.out, string(s))
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		cl.writeStatus(string(s))
		return
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		if cl.proto >= 3 {
			cl.out = resp.AppendDouble(cl.out, float64(n))
		} else {
			cl.out = resp.AppendFloatBulk(cl.out, float64(n))
		}
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		text := strings.NewReplacer("\r", " ", "\n", " ").Replace(string(s))
		if cl.proto >= 3 {
			cl.out = resp.AppendBigNumber(cl.out, text)
		} else {
			cl.writeBulkStr(text)
		}
		return
	}
	if v, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		format, okFormat := v.RawGetString("format").(lua.LString)
		text, okText := v.RawGetString("string").(lua.LString)
		if okFormat && okText {
			if cl.proto >= 3 {
				cl.out = resp.AppendVerbatim(cl.out, string(format), []byte(text))
			} else {
				cl.writeBulk([]byte(text))
			}
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		cl.writeMap(tableSize(m))
		m.ForEach(func(k, v lua.LValue) {
			w.value(k, depth+1)
			w.value(v, depth+1)
		})
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		cl.writeSet(tableSize(s))
		s.ForEach(func(k, _ lua.LValue) { w.value(k, depth+1) })
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	cl.writeArray(n)
	for i := 1; i <= n; i++ {
		w.value(t.RawGetInt(i), depth+1)
	}
}

func tableSize(t *lua.LTable) int {
	n := 0
	t.ForEach(func(_, _ lua.LValue) { n++ })
	return n
}

// luaInteger is C's (long long) cast of a Lua number on x86-64: truncated,
// and the minimum for what has no integer (NaN, out of range).
func luaInteger(f float64) int64 {
	if math.IsNaN(f) || f >= 0x1p63 || f < -0x1p63 {
		return math.MinInt64
	}
	return int64(f)
}

// replyToLua converts the reply in buf (one whole reply, as a command
// wrote it) into a Lua value. isErr reports an error reply: the value is
// then its {err=...} table, as for a reply that does not parse.
func replyToLua(L *lua.LState, buf []byte) (v lua.LValue, isErr bool) {
	if v, ok := integerReply(buf); ok {
		return v, false
	}
	if string(buf) == "+OK\r\n" {
		return fieldTable(L, "ok", luaOK), false
	}
	v, _, isErr, err := convertReply(L, buf)
	if err != nil {
		return errorTable(L, "ERR the command's reply could not be read: "+err.Error()), true
	}
	return v, isErr
}

// luaOK is the text of the status reply most writes answer, made once.
var luaOK lua.LValue = lua.LString("OK")

// okPool is the EVAL state's {ok="OK"} tables, the reply of most writes,
// handed out again from run to run: making one costs gopher-lua eight
// allocations (a table, its maps and key list), about as much as the rest
// of a SET from a script. Nothing of a run outlives it (globals are
// read-only, KEYS and ARGV are refilled: scriptArray), so no script sees a
// table twice; within a run each call gets a table of its own, as in Redis,
// and a table the last run changed is replaced.
type okPool struct {
	tables []*lua.LTable
	used   int // handed out in this run
}

// okPoolMax bounds the tables kept: a run that gets more makes the rest.
const okPoolMax = 64

// next returns an {ok="OK"} table no one else holds in this run.
func (p *okPool) next(L *lua.LState) *lua.LTable {
	if p.used < len(p.tables) {
		t := p.tables[p.used]
		if !pristineOK(t) {
			t = fieldTable(L, "ok", luaOK)
			p.tables[p.used] = t
		}
		p.used++
		return t
	}
	t := fieldTable(L, "ok", luaOK)
	if len(p.tables) < okPoolMax {
		p.tables = append(p.tables, t)
		p.used++
	}
	return t
}

// The indexes of gopher-lua's LTable fields that pristineOK reads (-1: not
// found, and then no table is taken for pristine).
var (
	lTableArray = sliceField("array")
	lTableKeys  = sliceField("keys")
)

func sliceField(name string) int {
	f, ok := reflect.TypeFor[lua.LTable]().FieldByName(name)
	if !ok || len(f.Index) != 1 || f.Type.Kind() != reflect.Slice {
		return -1
	}
	return f.Index[0]
}

// pristineOK reports whether t is {ok="OK"} as fieldTable made it: no
// metatable, no array element, and no key but ok ever set (gopher-lua keeps
// the keys a table ever had in a list that only grows, so a table whose
// fields came and went is not taken again, lest that list grow run by run).
func pristineOK(t *lua.LTable) bool {
	if lTableArray < 0 || lTableKeys < 0 || t.Metatable != lua.LNil {
		return false
	}
	v := reflect.ValueOf(t).Elem()
	return v.Field(lTableArray).Len() == 0 && v.Field(lTableKeys).Len() == 1 && t.RawGetString("ok") == luaOK
}

// integerReply converts buf if it is one integer reply and nothing else,
// the reply scripts get most (INCR, EXPIRE, DEL, EXISTS...), without the
// general reader.
func integerReply(buf []byte) (lua.LValue, bool) {
	if len(buf) < 4 || buf[0] != ':' || buf[len(buf)-2] != '\r' || buf[len(buf)-1] != '\n' {
		return nil, false
	}
	n, ok := ascii.ParseInt(buf[1 : len(buf)-2])
	if !ok {
		return nil, false
	}
	return lua.LNumber(n), true
}

// convertReply converts the reply at the front of buf and returns its
// length.
func convertReply(L *lua.LState, buf []byte) (v lua.LValue, n int, isErr bool, err error) {
	r, n, err := resp.ReadReply(buf)
	if err != nil {
		return nil, 0, false, err
	}
	// elems converts the n elements after the header, calling put with
	// each (key and value for a map).
	elems := func(count int, put func(i int, v lua.LValue)) error {
		for i := 0; i < count; i++ {
			v, m, _, err := convertReply(L, buf[n:])
			if err != nil {
				return err
			}
			n += m
			put(i, v)
		}
		return nil
	}
	switch r.Kind {
	case '+':
		if string(r.Data) == "OK" {
			return fieldTable(L, "ok", luaOK), n, false, nil
		}
		return fieldTable(L, "ok", lua.LString(r.Data)), n, false, nil
	case '-', '!':
		t := errorTable(L, "-"+string(r.Data))
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t, n, true, nil
	case ':':
		return lua.LNumber(r.Int), n, false, nil
	case '$':
		if r.IsNull() {
			return lua.LFalse, n, false, nil
		}
		return lua.LString(r.Data), n, false, nil
	case '_':
		return lua.LNil, n, false, nil
	case '#':
		return lua.LBool(r.Int == 1), n, false, nil
	case ',':
		f, _ := strconv.ParseFloat(string(r.Data), 64)
		return fieldTable(L, "double", lua.LNumber(f)), n, false, nil
	case '(':
		return fieldTable(L, "big_number", lua.LString(r.Data)), n, false, nil
	case '=':
		format, text := r.Verbatim()
		inner := L.CreateTable(0, 2)
		inner.RawSetString("format", lua.LString(format))
		inner.RawSetString("string", lua.LString(text))
		return fieldTable(L, "verbatim_string", inner), n, false, nil
	case '*', '>':
		if r.IsNull() {
			return lua.LFalse, n, false, nil
		}
		t := L.CreateTable(min(r.Len, 1024), 0)
		err := elems(r.Len, func(i int, v lua.LValue) { t.RawSetInt(i+1, v) })
		return t, n, false, err
	case '%':
		m := L.NewTable()
		var key lua.LValue
		err := elems(2*r.Len, func(i int, v lua.LValue) {
			if i%2 == 0 {
				key = v
			} else if key != lua.LNil {
				m.RawSet(key, v)
			}
		})
		return fieldTable(L, "map", m), n, false, err
	case '~':
		set := L.NewTable()
		err := elems(r.Len, func(_ int, v lua.LValue) {
			if v != lua.LNil {
				set.RawSet(v, lua.LTrue)
			}
		})
		return fieldTable(L, "set", set), n, false, err
	case '|':
		// The attribute's pairs are skipped; the reply it describes follows.
		if err := elems(2*r.Len, func(int, lua.LValue) {}); err != nil {
			return nil, 0, false, err
		}
		v, m, isErr, err := convertReply(L, buf[n:])
		return v, n + m, isErr, err
	}
	return lua.LNil, n, false, nil
}

func fieldTable(L *lua.LState, field string, v lua.LValue) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString(field, v)
	return t
}

// errorTable is Redis's luaPushErrorBuff: {err="CODE message"} from
// "-CODE message" (a leading "-" and a first word give the code) or from a
// plain message, which gets the code ERR.
func errorTable(L *lua.LState, text string) *lua.LTable {
	code, msg := "ERR", text
	if rest, ok := strings.CutPrefix(text, "-"); ok {
		if c, m, found := strings.Cut(rest, " "); found {
			code, msg = c, m
		} else {
			msg = rest
		}
	}
	msg = strings.Trim(msg, "\r\n")
	return fieldTable(L, "err", lua.LString(code+" "+msg))
}
