package gnetengine_test

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"golang.org/x/sys/unix"
)

// TestServeReportsAnEngineThatStoppedOnItsOwn: gnet stops the whole engine
// when accept fails with EMFILE. Serve must then return an error saying
// so, rather than block forever in front of a dead listener.
func TestServeReportsAnEngineThatStoppedOnItsOwn(t *testing.T) {
	s := startGnet(t, echo{}, eventloop.Options{Loops: 1})
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	port := s.Addr().(*net.TCPAddr).Port
	client, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(client)
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
	if err := unix.Connect(client, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		release()
		t.Fatal(err)
	}
	select {
	case err := <-served:
		release()
		if err == nil || !strings.Contains(err.Error(), "stopped on its own") {
			t.Fatalf("Serve returned %v, want an error saying the engine stopped on its own", err)
		}
	case <-time.After(20 * time.Second):
		release()
		t.Fatal("Serve still blocked 20 s after gnet's accept failed")
	}
}
