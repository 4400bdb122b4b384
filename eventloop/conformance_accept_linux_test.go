package eventloop_test

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"golang.org/x/sys/unix"
)

// TestConformAcceptSurvivesRunningOutOfDescriptors: connections that wait
// to be accepted while the process has no descriptor left are served once
// descriptors free up; running out pauses accepting, it does not stop the
// server.
func TestConformAcceptSurvivesRunningOutOfDescriptors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		e.skipOn(t, "gnet", "gnet's acceptor treats EMFILE as fatal and stops the whole engine (see the gnetengine doc)")
		s := e.start(t, lines{newRecorder()}, eventloop.Options{Loops: 1})
		port := s.Addr().(*net.TCPAddr).Port
		// Client sockets first, unconnected: connecting needs no new descriptor.
		var clients []int
		defer func() {
			for _, fd := range clients {
				unix.Close(fd)
			}
		}()
		for i := 0; i < 4; i++ {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 20})
			clients = append(clients, fd)
		}
		var fillers []*os.File
		release := func() {
			for _, f := range fillers {
				f.Close()
			}
			fillers = nil
		}
		defer release()
		for {
			f, err := os.Open(os.DevNull)
			if err != nil {
				break
			}
			fillers = append(fillers, f)
		}
		for _, fd := range clients {
			if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
				release()
				t.Fatal(err)
			}
		}
		time.Sleep(300 * time.Millisecond) // accept fails meanwhile
		release()
		for i, fd := range clients {
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
	})
}
