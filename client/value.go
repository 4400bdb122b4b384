package client

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// maxDepth bounds how deeply nested a reply Do decodes.
const maxDepth = 256

// decodeTop decodes a whole reply for Do: a null is ErrNil and an error
// reply is an Error, as for the typed methods.
func decodeTop(raw []byte) (any, error) {
	r, _, err := resp.ReadReply(raw)
	if err != nil {
		return nil, err
	}
	if r.IsNull() {
		return nil, ErrNil
	}
	v, _, err := decode(raw, 0)
	if err != nil {
		return nil, err
	}
	if e, ok := v.(Error); ok {
		return nil, e
	}
	return v, nil
}

// decode turns the reply at the front of raw, which holds it whole, into
// Go values (see Client.Do) and returns how many bytes it took.
func decode(raw []byte, depth int) (any, int, error) {
	if depth > maxDepth {
		return nil, 0, fmt.Errorf("client: reply nested deeper than %d levels", maxDepth)
	}
	r, n, err := resp.ReadReply(raw)
	if err != nil {
		return nil, 0, err
	}
	if r.IsNull() {
		return nil, n, nil
	}
	switch r.Kind {
	case '+', '$':
		return string(r.Data), n, nil
	case '=':
		_, text := r.Verbatim()
		return string(text), n, nil
	case '-', '!':
		return Error(r.Data), n, nil
	case ':':
		return r.Int, n, nil
	case '#':
		return r.Int == 1, n, nil
	case ',':
		f, err := parseDouble(string(r.Data))
		return f, n, err
	case '(':
		b, ok := new(big.Int).SetString(string(r.Data), 10)
		if !ok {
			return nil, 0, fmt.Errorf("client: big number %q is not an integer", r.Data)
		}
		return b, n, nil
	case '*', '~', '>':
		list := make([]any, r.Len)
		for i := range list {
			v, m, err := decode(raw[n:], depth+1)
			if err != nil {
				return nil, 0, err
			}
			list[i], n = v, n+m
		}
		return list, n, nil
	case '%':
		m := make(map[any]any, r.Len)
		for i := 0; i < r.Len; i++ {
			k, kn, err := decode(raw[n:], depth+1)
			if err != nil {
				return nil, 0, err
			}
			n += kn
			switch kk := k.(type) {
			case []any, map[any]any:
				return nil, 0, fmt.Errorf("client: map key of type %T cannot be a Go map key", k)
			case *big.Int:
				k = kk.String()
			}
			v, vn, err := decode(raw[n:], depth+1)
			if err != nil {
				return nil, 0, err
			}
			m[k], n = v, n+vn
		}
		return m, n, nil
	case '|':
		for i := 0; i < r.Elements(); i++ {
			m, err := resp.SkipReply(raw[n:])
			if err != nil {
				return nil, 0, err
			}
			n += m
		}
		v, m, err := decode(raw[n:], depth+1)
		return v, n + m, err
	}
	return nil, 0, fmt.Errorf("client: unknown reply type %q", r.Kind)
}

func parseDouble(s string) (float64, error) {
	switch s {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan", "-nan":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("client: double %q: %w", s, err)
	}
	return f, nil
}

// refused lists commands that would break a connection shared by many
// goroutines: they change its state for everyone (SELECT, HELLO, AUTH,
// RESET, CLIENT REPLY), interleave with other goroutines' commands
// (MULTI/EXEC, WATCH) or turn it into a stream that is not one reply per
// command (SUBSCRIBE, MONITOR, SYNC).
var refused = map[string]bool{
	"SUBSCRIBE": true, "PSUBSCRIBE": true, "SSUBSCRIBE": true,
	"UNSUBSCRIBE": true, "PUNSUBSCRIBE": true, "SUNSUBSCRIBE": true,
	"MONITOR": true, "SYNC": true, "PSYNC": true, "REPLICAOF": true, "SLAVEOF": true,
	"MULTI": true, "EXEC": true, "DISCARD": true, "WATCH": true, "UNWATCH": true,
	"SELECT": true, "HELLO": true, "AUTH": true, "RESET": true, "QUIT": true,
}

// appendArgs encodes Do's arguments as one RESP command.
func appendArgs(b []byte, args []any) ([]byte, error) {
	if len(args) == 0 {
		return b, fmt.Errorf("client: Do needs a command name")
	}
	name, ok := args[0].(string)
	if !ok {
		return b, fmt.Errorf("client: Do's command name is a %T, want a string", args[0])
	}
	upper := strings.ToUpper(name)
	if refused[upper] || (upper == "CLIENT" && len(args) > 1 && isString(args[1], "REPLY")) {
		return b, fmt.Errorf("client: %s is not supported on a client whose connections are shared by all goroutines", name)
	}
	b = resp.AppendArrayHeader(b, len(args))
	var num [32]byte
	for i, a := range args {
		switch v := a.(type) {
		case string:
			b = resp.AppendBulkString(b, v)
		case []byte:
			b = resp.AppendBulk(b, v)
		case int, int8, int16, int32, int64:
			b = resp.AppendBulk(b, strconv.AppendInt(num[:0], reflect.ValueOf(v).Int(), 10))
		case uint, uint8, uint16, uint32, uint64:
			b = resp.AppendBulk(b, strconv.AppendUint(num[:0], reflect.ValueOf(v).Uint(), 10))
		case float32:
			b = resp.AppendBulk(b, strconv.AppendFloat(num[:0], float64(v), 'g', -1, 32))
		case float64:
			b = resp.AppendBulk(b, strconv.AppendFloat(num[:0], v, 'g', -1, 64))
		case bool:
			if v {
				b = resp.AppendBulkString(b, "1")
			} else {
				b = resp.AppendBulkString(b, "0")
			}
		case time.Duration:
			return b, fmt.Errorf("client: argument %d is a time.Duration; pass seconds or milliseconds as an integer", i)
		default:
			return b, fmt.Errorf("client: argument %d has unsupported type %T (want string, []byte, an integer, a float or a bool)", i, a)
		}
	}
	return b, nil
}

func isString(a any, upper string) bool {
	s, ok := a.(string)
	return ok && strings.EqualFold(s, upper)
}
