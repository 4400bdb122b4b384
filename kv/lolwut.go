package kv

import "github.com/shoalkv/shoal/internal/ascii"

// LOLWUT answers as redis-server 7.0 does without a version or with one it
// draws nothing for: the version line. (VERSION 5 and 6 draw Redis's
// random art there; Shoal prints the version line for them too.)
var _ = registerFamily(family{commands: []*command{
	{
		name: "lolwut", arity: -1, fn: cmdLolwut,
		flags: "readonly fast", acl: "@read @fast",
		doc: commandDoc{"Prints the Redis version Shoal answers as (no art).", "5.0.0", "server", noComplexity},
	},
}})

func cmdLolwut(_ *Handler, cl *client, args [][]byte) {
	if len(args) >= 3 && ascii.EqualFold(args[1], "version") {
		if _, ok := ascii.ParseInt(args[2]); !ok {
			cl.writeError(errNotInteger)
			return
		}
	}
	cl.writeVerbatim([]byte("Redis ver. " + Version + "\n"))
}
