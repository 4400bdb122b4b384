package gnetengine_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/fdtest"
)

// TestServeReportsAnEngineThatStoppedOnItsOwn: gnet stops the whole engine
// when accept fails with EMFILE. Serve must then return an error saying
// so, rather than block forever in front of a dead listener.
func TestServeReportsAnEngineThatStoppedOnItsOwn(t *testing.T) {
	s := startGnet(t, echo{}, eventloop.Options{Loops: 1})
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	port := s.Addr().(*net.TCPAddr).Port
	clients := fdtest.NewClients(t, 1, 20*time.Second)
	release := fdtest.Exhaust()
	defer release()
	if err := clients.Connect(port); err != nil {
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
