// Package fdtest helps tests run their process out of file descriptors
// while clients wait to be accepted: the one scenario the eventloop's own
// tests, its engine conformance suite and the gnet engine's tests all need.
package fdtest

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Clients are raw client sockets, created before the descriptors run out
// (connecting one needs no new descriptor).
type Clients []int

// NewClients returns n unconnected IPv4 TCP sockets whose reads time out
// after timeout, so a test reading them cannot hang; t closes them at its end.
func NewClients(t testing.TB, n int, timeout time.Duration) Clients {
	t.Helper()
	cs := make(Clients, 0, n)
	t.Cleanup(func() {
		for _, fd := range cs {
			unix.Close(fd)
		}
	})
	for range n {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		tv := unix.NsecToTimeval(timeout.Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, fd)
	}
	return cs
}

// Connect connects every client to 127.0.0.1:port.
func (cs Clients) Connect(port int) error {
	for _, fd := range cs {
		if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
	}
	return nil
}

// Exhaust opens /dev/null until the process has no descriptor left and
// returns the function that closes them all again; calling it twice is
// harmless. Until it is called, the test itself cannot open anything either.
func Exhaust() (release func()) {
	var fillers []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		fillers = append(fillers, f)
	}
	return func() {
		for _, f := range fillers {
			f.Close()
		}
		fillers = nil
	}
}

// CheckEcho has each client send a line and expects the server to echo it
// back whole: proof that a connection accepted late is served.
func (cs Clients) CheckEcho(t testing.TB) {
	t.Helper()
	for i, fd := range cs {
		msg := []byte("after " + strconv.Itoa(i) + "\n")
		if _, err := unix.Write(fd, msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		for n := 0; n < len(got); {
			k, err := unix.Read(fd, got[n:])
			if err != nil || k == 0 {
				t.Fatalf("client %d: read: %v (k=%d)", i, err, k)
			}
			n += k
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("client %d got %q", i, got)
		}
	}
}
