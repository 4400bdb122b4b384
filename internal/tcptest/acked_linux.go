package tcptest

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// WaitAcked waits until the peer's kernel has acknowledged everything
// written on c (c's SIOCOUTQ is 0): what was written is then received, in
// the peer's socket, whether or not the peer has accepted the connection
// or read it yet. It fails t after 20 s.
func WaitAcked(t testing.TB, c net.Conn) {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		unacked, ierr := 0, error(nil)
		if err := rc.Control(func(fd uintptr) { unacked, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil {
			t.Fatal(err)
		}
		if ierr != nil {
			t.Fatalf("SIOCOUTQ: %v", ierr)
		}
		if unacked == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes written still unacknowledged after 20 s", unacked)
		}
	}
}
