package baseline

import (
	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
)

// Execute runs one parsed command against st and appends its RESP2 reply to out. Every
// server here calls it, so they differ only in how bytes reach it and leave it.
func Execute(st *Store, args [][]byte, out []byte) []byte {
	name := args[0]
	switch {
	case ascii.EqualFold(name, "GET"):
		if len(args) != 2 {
			return arityError(out, "get")
		}
		if out, ok := st.GetBulk(out, args[1]); ok {
			return out
		}
		return resp.AppendNullBulk(out)
	case ascii.EqualFold(name, "SET"):
		if len(args) != 3 {
			if len(args) < 3 {
				return arityError(out, "set")
			}
			return resp.AppendError(out, "ERR syntax error")
		}
		st.Set(args[1], args[2])
		return append(out, "+OK\r\n"...)
	case ascii.EqualFold(name, "INCR"):
		if len(args) != 2 {
			return arityError(out, "incr")
		}
		n, err := st.Incr(args[1])
		if err != nil {
			return resp.AppendError(out, err.Error())
		}
		return resp.AppendInt(out, n)
	case ascii.EqualFold(name, "PING"):
		switch len(args) {
		case 1:
			return append(out, "+PONG\r\n"...)
		case 2:
			return resp.AppendBulk(out, args[1])
		}
		return arityError(out, "ping")
	}
	if len(name) > 128 { // Redis quotes at most 128 bytes of the name
		name = name[:128]
	}
	return resp.AppendError(out, "ERR unknown command '"+string(name)+"', with args beginning with: ")
}

func arityError(out []byte, cmd string) []byte {
	return resp.AppendError(out, "ERR wrong number of arguments for '"+cmd+"' command")
}
