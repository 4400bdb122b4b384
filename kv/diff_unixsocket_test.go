package kv_test

// unixsocket and unixsocketperm against redis-server, both without a
// socket: the defaults CONFIG GET reports, and CONFIG SET refusing either
// as immutable before it looks at the value. (Serving a socket is tested
// with the binary: cmd/shoal/unixsocket_test.go.)
func init() {
	diffCases["unixsocket-config"] = []step{
		c("CONFIG GET unixsocket"), c("CONFIG GET unixsocketperm"),
		c("CONFIG SET unixsocket /tmp/shoal-test.sock"), c("CONFIG SET unixsocketperm 700"),
		c("CONFIG SET unixsocketperm 999"), c("CONFIG SET unixsocket"),
	}
}
