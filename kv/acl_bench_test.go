package kv

import (
	"strings"
	"testing"
)

// aclRules20 is a user of 20 rules whose commands and keys GET and SET of
// key:001 pass: commands, key patterns (the matching one not first) and a
// channel.
const aclRules20 = "on nopass -@all +get +set +mget +mset +incr +decr +del +exists +expire +ttl +hget +hset +lpush +rpush " +
	"%R~cache:* ~user:* ~session:* ~key:* &chan:*"

// BenchmarkACLCheck compares GET and SET as the default user (on, nopass,
// everything allowed: one flag per command) with a user of 20 rules
// (command bitset, key patterns), pipelined 64 deep and one at a time:
//
//	go test ./kv -run '^$' -bench 'ACLCheck' -benchtime 2s -count 6
//
// The goal is the two within noise of each other, 0 allocs/op.
func BenchmarkACLCheck(b *testing.B) {
	users := []struct {
		name string
		as   func(*Handler, *client)
	}{
		{"default", func(h *Handler, cl *client) { cl.names.Store(h.acl.defaultNames) }},
		{"rules20", func(h *Handler, cl *client) {
			if msg := h.setUser("bench", strings.Fields(aclRules20)); msg != "" {
				b.Fatal(msg)
			}
			cl.setUser(h.user([]byte("bench")))
		}},
	}
	for _, u := range users {
		for _, depth := range []int{64, 1} {
			b.Run(u.name+"/GET/P"+itoa(depth), func(b *testing.B) { benchExecuteAs(b, u.as, setReq, getReq, getReply, depth) })
			b.Run(u.name+"/SET/P"+itoa(depth), func(b *testing.B) { benchExecuteAs(b, u.as, "", setReq, "+OK\r\n", depth) })
		}
	}
}

func itoa(n int) string {
	if n == 64 {
		return "64"
	}
	return "1"
}
