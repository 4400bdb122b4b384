package kv

import "testing"

// FuzzFunctionPayload: no payload makes the reader panic or loop.
func FuzzFunctionPayload(f *testing.F) {
	f.Add(dumpFunctions([]string{"#!lua name=a\nredis.register_function('f', function() return 1 end)"}))
	f.Add(dumpFunctions(nil))
	f.Fuzz(func(t *testing.T, p []byte) {
		readFunctionPayload(p)
		r := &rdbReader{p: p}
		for r.pos < len(p) {
			if _, ok := r.string(); !ok {
				break
			}
		}
	})
}
