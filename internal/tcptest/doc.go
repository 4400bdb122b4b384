// Package tcptest holds what tests need of TCP beyond the net package: what
// the kernel knows about a connection that net.Conn does not say
// (WaitAcked), and a goroutine-per-connection server for fake peers (Serve).
package tcptest
