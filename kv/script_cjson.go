package kv

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The cjson library Redis loads (lua-cjson 2.1.0): encode, decode, the
// settings functions and cjson.null, with lua-cjson's output and error
// texts. Numbers are written in "%.14g" (encode_number_precision); a table
// is an array when its keys are exactly the integers 1..n (holes become
// null, unless excessively sparse), an object otherwise, and {} is an
// object. The settings are the Lua state's, so they last from script to
// script as in Redis. One difference: an object's keys come in
// gopher-lua's iteration order, not Lua 5.1's.
//
// Libraries such as layeh/gopher-json encode through encoding/json, whose
// numbers, escapes ("\/", "\u007f"), empty tables and errors are not
// lua-cjson's, so this follows lua-cjson itself.

// cjsonConfig is the settings of one cjson table.
type cjsonConfig struct {
	sparseConvert   bool
	sparseRatio     int
	sparseSafe      int
	encodeMaxDepth  int
	decodeMaxDepth  int
	encodeInvalid   int // 0 off, 1 on, 2 null
	decodeInvalid   bool
	keepBuffer      bool
	numberPrecision int
	null            *lua.LUserData
}

// cjsonLib makes the table of the cjson library.
func cjsonLib(L *lua.LState) *lua.LTable {
	cfg := &cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000, decodeMaxDepth: 1000,
		decodeInvalid: true, keepBuffer: true, numberPrecision: 14, null: L.NewUserData()}
	t := L.NewTable()
	for name, fn := range map[string]lua.LGFunction{
		"encode": cfg.encode,
		"decode": cfg.decode,
		"encode_sparse_array": func(L *lua.LState) int {
			const name = "encode_sparse_array"
			cjsonArgs(L, 3, name)
			cjsonBool(L, 1, &cfg.sparseConvert, name)
			cjsonInt(L, 2, &cfg.sparseRatio, 0, math.MaxInt32, name)
			cjsonInt(L, 3, &cfg.sparseSafe, 0, math.MaxInt32, name)
			return 3
		},
		"encode_max_depth": func(L *lua.LState) int {
			cjsonArgs(L, 1, "encode_max_depth")
			return cjsonInt(L, 1, &cfg.encodeMaxDepth, 1, math.MaxInt32, "encode_max_depth")
		},
		"decode_max_depth": func(L *lua.LState) int {
			cjsonArgs(L, 1, "decode_max_depth")
			return cjsonInt(L, 1, &cfg.decodeMaxDepth, 1, math.MaxInt32, "decode_max_depth")
		},
		"encode_number_precision": func(L *lua.LState) int {
			cjsonArgs(L, 1, "encode_number_precision")
			return cjsonInt(L, 1, &cfg.numberPrecision, 1, 14, "encode_number_precision")
		},
		"encode_keep_buffer": func(L *lua.LState) int {
			cjsonArgs(L, 1, "encode_keep_buffer")
			return cjsonBool(L, 1, &cfg.keepBuffer, "encode_keep_buffer")
		},
		"encode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgs(L, 1, "encode_invalid_numbers")
			return cjsonEnum(L, 1, &cfg.encodeInvalid, []string{"off", "on", "null"}, "encode_invalid_numbers")
		},
		"decode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgs(L, 1, "decode_invalid_numbers")
			return cjsonBool(L, 1, &cfg.decodeInvalid, "decode_invalid_numbers")
		},
		"new": func(L *lua.LState) int { L.Push(cjsonLib(L)); return 1 },
	} {
		t.RawSetString(name, L.NewFunction(fn))
	}
	t.RawSetString("null", cfg.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// luaArgError is luaL_argerror: "bad argument #n to 'name' (msg)".
func luaArgError(L *lua.LState, n int, name, msg string) {
	L.RaiseError("bad argument #%d to '%s' (%s)", n, name, msg)
}

// cjsonArgs is json_arg_init: at most n arguments.
func cjsonArgs(L *lua.LState, n int, name string) {
	if L.GetTop() > n {
		luaArgError(L, n+1, name, "found too many arguments")
	}
	for L.GetTop() < n {
		L.Push(lua.LNil)
	}
}

// cjsonInt sets *v from argument i unless it is nil, and pushes *v.
func cjsonInt(L *lua.LState, i int, v *int, lo, hi int, name string) int {
	if arg := L.Get(i); arg != lua.LNil {
		f, ok := luaNumberArg(arg)
		if !ok {
			luaArgError(L, i, name, "number expected, got "+arg.Type().String())
		}
		n := int(luaInteger(f))
		if n < lo || n > hi {
			luaArgError(L, 1, name, "expected integer between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
		}
		*v = n
	}
	L.Push(lua.LNumber(*v))
	return 1
}

// cjsonBool sets *v from argument i (a boolean, "on" or "off") unless it
// is nil, and pushes *v.
func cjsonBool(L *lua.LState, i int, v *bool, name string) int {
	n := 0
	if *v {
		n = 1
	}
	cjsonEnum(L, i, &n, []string{"off", "on"}, name)
	*v = n == 1
	return 1
}

// cjsonEnum is json_enum_option with a boolean standing for options 0
// and 1: it pushes a boolean for those, the option's name otherwise.
func cjsonEnum(L *lua.LState, i int, v *int, options []string, name string) int {
	switch x := L.Get(i).(type) {
	case *lua.LNilType:
	case lua.LBool:
		*v = 0
		if x {
			*v = 1
		}
	default:
		s, ok := luaText(x)
		if !ok {
			luaArgError(L, i, name, "string expected, got "+x.Type().String())
		}
		found := false
		for k, o := range options {
			if o == s {
				*v, found = k, true
			}
		}
		if !found {
			luaArgError(L, i, name, "invalid option '"+s+"'")
		}
	}
	if *v <= 1 {
		L.Push(lua.LBool(*v == 1))
	} else {
		L.Push(lua.LString(options[*v]))
	}
	return 1
}

// cjsonEscapes are lua-cjson's escapes of the octets a JSON string may not
// carry as they are, and of "/" and DEL.
var cjsonEscapes = func() [256]string {
	var e [256]string
	for c := 0; c < 0x20; c++ {
		e[c] = `\u00` + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
	}
	e['\b'], e['\t'], e['\n'], e['\f'], e['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	e['"'], e['\\'], e['/'], e[0x7f] = `\"`, `\\`, `\/`, `\u007f`
	return e
}()

// cjsonEncoder writes one value.
type cjsonEncoder struct {
	cfg *cjsonConfig
	L   *lua.LState
	buf []byte
}

func (cfg *cjsonConfig) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		luaArgError(L, 1, "encode", "expected 1 argument")
	}
	e := &cjsonEncoder{cfg: cfg, L: L}
	e.value(L.Get(1), 0)
	if len(e.buf) > luaMaxString {
		L.RaiseError("cjson.encode would make a string of more than %d bytes", luaMaxString)
	}
	L.Push(lua.LString(e.buf))
	return 1
}

func (e *cjsonEncoder) fail(v lua.LValue, reason string) {
	e.L.RaiseError("Cannot serialise %s: %s", v.Type().String(), reason)
}

func (e *cjsonEncoder) value(v lua.LValue, depth int) {
	if len(e.buf) > luaMaxString {
		return // a reply no one could carry: encode raises once it unwinds
	}
	switch x := v.(type) {
	case lua.LString:
		e.buf = append(e.buf, '"')
		for i := 0; i < len(x); i++ {
			if esc := cjsonEscapes[x[i]]; esc != "" {
				e.buf = append(e.buf, esc...)
			} else {
				e.buf = append(e.buf, x[i])
			}
		}
		e.buf = append(e.buf, '"')
	case lua.LNumber:
		e.number(x)
	case lua.LBool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case *lua.LNilType:
		e.buf = append(e.buf, "null"...)
	case *lua.LUserData:
		if x != e.cfg.null {
			e.fail(v, "type not supported")
		}
		e.buf = append(e.buf, "null"...)
	case *lua.LTable:
		depth++
		if depth > e.cfg.encodeMaxDepth {
			e.L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := e.arrayLength(x); n > 0 {
			e.buf = append(e.buf, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					e.buf = append(e.buf, ',')
				}
				e.value(x.RawGetInt(i), depth)
			}
			e.buf = append(e.buf, ']')
			return
		}
		e.buf = append(e.buf, '{')
		first := true
		x.ForEach(func(k, val lua.LValue) {
			if !first {
				e.buf = append(e.buf, ',')
			}
			first = false
			switch key := k.(type) {
			case lua.LNumber:
				e.buf = append(e.buf, '"')
				e.number(key)
				e.buf = append(e.buf, '"', ':')
			case lua.LString:
				e.value(key, depth)
				e.buf = append(e.buf, ':')
			default:
				e.fail(k, "table key must be a number or string")
			}
			e.value(val, depth)
		})
		e.buf = append(e.buf, '}')
	default:
		e.fail(v, "type not supported")
	}
}

// arrayLength is lua_array_length: the largest key if every key is an
// integer from 1 up, -1 for an object; an excessively sparse array is an
// error, or an object with encode_sparse_array(true). The largest key is
// kept in a C int, as lua-cjson keeps it: a key of 2^31 or more makes it
// INT_MIN (x86's conversion), and the table an object.
func (e *cjsonEncoder) arrayLength(t *lua.LTable) int {
	var maxKey int32
	items := 0
	array := true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !array || !ok || n == 0 || math.Floor(float64(n)) != float64(n) || n < 1 {
			array = false
			return
		}
		if float64(n) > float64(maxKey) {
			maxKey = math.MinInt32
			if float64(n) < 1<<31 {
				maxKey = int32(n)
			}
		}
		items++
	})
	if !array {
		return -1
	}
	ratio, safe := e.cfg.sparseRatio, e.cfg.sparseSafe
	if ratio > 0 && int(maxKey) > items*ratio && int(maxKey) > safe {
		if !e.cfg.sparseConvert {
			e.fail(t, "excessively sparse array")
		}
		return -1
	}
	return int(maxKey)
}

func (e *cjsonEncoder) number(n lua.LNumber) {
	f := float64(n)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch e.cfg.encodeInvalid {
		case 0:
			e.fail(n, "must not be NaN or Inf")
		case 2:
			e.buf = append(e.buf, "null"...)
			return
		}
		if math.IsNaN(f) {
			e.buf = append(e.buf, "nan"...)
			return
		}
	}
	e.buf = appendCFloat(e.buf, f, e.cfg.numberPrecision)
}

// Decoding, as lua-cjson's: a token at a time; errors name what was
// expected, what was found and where (from 1).

type cjsonToken int

const (
	tObjBegin cjsonToken = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var cjsonTokenNames = []string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING", "T_NUMBER",
	"T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

// cjsonCharTokens is lua-cjson's ch2token.
var cjsonCharTokens = func() [256]cjsonToken {
	var t [256]cjsonToken
	for i := range t {
		t[i] = tError
	}
	t['{'], t['}'], t['['], t[']'], t[','], t[':'], t[0] = tObjBegin, tObjEnd, tArrBegin, tArrEnd, tComma, tColon, tEnd
	t[' '], t['\t'], t['\n'], t['\r'] = tWhitespace, tWhitespace, tWhitespace, tWhitespace
	for _, c := range "fiInNt\"+-0123456789" {
		t[c] = tUnknown
	}
	return t
}()

type cjsonDecoder struct {
	cfg   *cjsonConfig
	L     *lua.LState
	data  string
	pos   int
	depth int
	// the current token
	kind   cjsonToken
	index  int
	str    string
	num    float64
	truth  bool
	errMsg string
}

func (cfg *cjsonConfig) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		luaArgError(L, 1, "decode", "expected 1 argument")
	}
	data, ok := luaText(L.Get(1))
	if !ok {
		luaArgError(L, 1, "decode", "string expected, got "+L.Get(1).Type().String())
	}
	if len(data) >= 2 && (data[0] == 0 || data[1] == 0) {
		L.RaiseError("JSON parser does not support UTF-16 or UTF-32")
	}
	d := &cjsonDecoder{cfg: cfg, L: L, data: data}
	d.next()
	v := d.value()
	d.next()
	if d.kind != tEnd {
		d.fail("the end")
	}
	L.Push(v)
	return 1
}

func (d *cjsonDecoder) at(i int) byte {
	if i >= len(d.data) {
		return 0
	}
	return d.data[i]
}

func (d *cjsonDecoder) fail(expected string) {
	found := cjsonTokenNames[d.kind]
	if d.kind == tError {
		found = d.errMsg
	}
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, d.index+1)
}

func (d *cjsonDecoder) tokenError(msg string) {
	d.kind, d.index, d.errMsg = tError, d.pos, msg
}

// next reads the next token.
func (d *cjsonDecoder) next() {
	for {
		d.kind = cjsonCharTokens[d.at(d.pos)]
		if d.kind != tWhitespace {
			break
		}
		d.pos++
	}
	d.index = d.pos
	switch d.kind {
	case tError:
		d.tokenError("invalid token")
		return
	case tEnd:
		return
	case tUnknown:
	default:
		d.pos++
		return
	}
	rest := d.data[d.pos:]
	c := d.at(d.pos)
	switch {
	case c == '"':
		d.stringToken()
	case c == '-' || c >= '0' && c <= '9':
		if !d.cfg.decodeInvalid && d.invalidNumber() {
			d.tokenError("invalid number")
			return
		}
		d.numberToken()
	case strings.HasPrefix(rest, "true"):
		d.kind, d.truth = tBoolean, true
		d.pos += 4
	case strings.HasPrefix(rest, "false"):
		d.kind, d.truth = tBoolean, false
		d.pos += 5
	case strings.HasPrefix(rest, "null"):
		d.kind = tNull
		d.pos += 4
	case d.cfg.decodeInvalid && d.invalidNumber():
		d.numberToken()
	default:
		d.tokenError("invalid token")
	}
}

// invalidNumber is json_is_invalid_number: what strtod takes but strict
// JSON does not (a leading +, hexadecimal, leading zeros, inf, nan).
func (d *cjsonDecoder) invalidNumber() bool {
	p := d.pos
	if d.at(p) == '+' {
		return true
	}
	if d.at(p) == '-' {
		p++
	}
	if d.at(p) == '0' {
		c2 := d.at(p + 1)
		return c2|0x20 == 'x' || c2 >= '0' && c2 <= '9'
	}
	if d.at(p) <= '9' {
		return false
	}
	rest := strings.ToLower(d.data[p:min(p+3, len(d.data))])
	return rest == "inf" || rest == "nan"
}

func (d *cjsonDecoder) numberToken() {
	n, f := strtodPrefix(d.data[d.pos:])
	if n == 0 {
		d.tokenError("invalid number")
		return
	}
	d.kind, d.num = tNumber, f
	d.pos += n
}

// strtodPrefix is C's strtod on s: how many bytes of s it reads and the
// number they make (0 bytes: none).
func strtodPrefix(s string) (int, float64) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	word := strings.ToLower(s[i:min(len(s), i+8)])
	switch {
	case strings.HasPrefix(word, "infinity"):
		f, _ := strconv.ParseFloat(s[:i+8], 64)
		return i + 8, f
	case strings.HasPrefix(word, "inf"), strings.HasPrefix(word, "nan"):
		f, _ := strconv.ParseFloat(s[:i+3], 64)
		return i + 3, f
	}
	if i+2 < len(s) && s[i] == '0' && s[i+1]|0x20 == 'x' && isHexDigit(s[i+2]) {
		j := i + 2
		for j < len(s) && isHexDigit(s[j]) {
			j++
		}
		u, err := strconv.ParseUint(s[i+2:j], 16, 64)
		f := float64(u)
		if err != nil {
			f = math.Inf(1)
		}
		if s[0] == '-' {
			f = -f
		}
		return j, f
	}
	j := i
	digits := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j, digits = j+1, digits+1
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j, digits = j+1, digits+1
		}
	}
	if digits == 0 {
		return 0, 0
	}
	if j < len(s) && s[j]|0x20 == 'e' {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && s[k] >= '0' && s[k] <= '9' {
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			j = k
		}
	}
	f, _ := strconv.ParseFloat(s[:j], 64) // out of range gives ±Inf or 0, as strtod
	return j, f
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
}

func (d *cjsonDecoder) stringToken() {
	d.pos++ // the opening quote
	var b strings.Builder
	for {
		c := d.at(d.pos)
		if c == '"' {
			break
		}
		if c == 0 {
			d.tokenError("unexpected end of string")
			return
		}
		if c == '\\' {
			esc := d.at(d.pos + 1)
			if esc == 'u' {
				if !d.unicodeEscape(&b) {
					d.tokenError("invalid unicode escape code")
					return
				}
				continue
			}
			c = cjsonUnescapes[esc]
			if c == 0 {
				d.tokenError("invalid escape code")
				return
			}
			d.pos++
		}
		b.WriteByte(c)
		d.pos++
	}
	d.pos++
	d.kind, d.str = tString, b.String()
}

// cjsonUnescapes are the one-octet escapes a JSON string may have.
var cjsonUnescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (d *cjsonDecoder) hex4(at int) int {
	if at+4 > len(d.data) {
		return -1
	}
	n, err := strconv.ParseUint(d.data[at:at+4], 16, 32)
	if err != nil || strings.ContainsAny(d.data[at:at+4], "+-") {
		return -1
	}
	return int(n)
}

// unicodeEscape appends the UTF-8 of the \uXXXX escape (or surrogate
// pair) at pos and moves past it.
func (d *cjsonDecoder) unicodeEscape(b *strings.Builder) bool {
	cp := d.hex4(d.pos + 2)
	if cp < 0 {
		return false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 || d.at(d.pos+6) != '\\' || d.at(d.pos+7) != 'u' {
			return false
		}
		low := d.hex4(d.pos + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = (cp&0x3FF)<<10 | low&0x3FF + 0x10000
		n = 12
	}
	var buf [4]byte
	b.Write(buf[:utf8.EncodeRune(buf[:], rune(cp))])
	d.pos += n
	return true
}

func (d *cjsonDecoder) descend() {
	d.depth++
	if d.depth > d.cfg.decodeMaxDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

func (d *cjsonDecoder) value() lua.LValue {
	switch d.kind {
	case tString:
		return lua.LString(d.str)
	case tNumber:
		return lua.LNumber(d.num)
	case tBoolean:
		return lua.LBool(d.truth)
	case tNull:
		return d.cfg.null
	case tObjBegin:
		d.descend()
		t := d.L.NewTable()
		d.next()
		if d.kind == tObjEnd {
			d.depth--
			return t
		}
		for {
			if d.kind != tString {
				d.fail("object key string")
			}
			key := d.str
			d.next()
			if d.kind != tColon {
				d.fail("colon")
			}
			d.next()
			t.RawSetString(key, d.value())
			d.next()
			if d.kind == tObjEnd {
				d.depth--
				return t
			}
			if d.kind != tComma {
				d.fail("comma or object end")
			}
			d.next()
		}
	case tArrBegin:
		d.descend()
		t := d.L.NewTable()
		d.next()
		if d.kind == tArrEnd {
			d.depth--
			return t
		}
		for i := 1; ; i++ {
			t.RawSetInt(i, d.value())
			d.next()
			if d.kind == tArrEnd {
				d.depth--
				return t
			}
			if d.kind != tComma {
				d.fail("comma or array end")
			}
			d.next()
		}
	}
	d.fail("value")
	return lua.LNil
}
