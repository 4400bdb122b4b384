package eventloop_test

import (
	"net"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/fdtest"
)

// TestConformAcceptSurvivesRunningOutOfDescriptors: connections that wait
// to be accepted while the process has no descriptor left are served once
// descriptors free up; running out pauses accepting, it does not stop the
// server, nor does the acceptor spin on EMFILE meanwhile.
func TestConformAcceptSurvivesRunningOutOfDescriptors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		e.skipOn(t, "gnet", "gnet's acceptor treats EMFILE as fatal and stops the whole engine (see the gnetengine doc)")
		e.skipOn(t, "native-tls", "fdtest's clients speak plaintext; accepting is the same code with or without TLS")
		s := e.start(t, lines{newRecorder()}, eventloop.Options{Loops: 1})
		port := s.Addr().(*net.TCPAddr).Port
		clients := fdtest.NewClients(t, 4, 20*time.Second)
		release := fdtest.Exhaust()
		defer release()
		if err := clients.Connect(port); err != nil {
			release()
			t.Fatal(err)
		}
		cpu0, wall0 := cpuTime(), time.Now()
		time.Sleep(500 * time.Millisecond) // accept fails meanwhile
		cpu, wall := cpuTime()-cpu0, time.Since(wall0)
		accepted := s.NumConns()
		release()
		if accepted != 0 {
			t.Fatalf("NumConns %d while no descriptor was free", accepted)
		}
		if cpu > wall/2 {
			t.Fatalf("process used %v of CPU in %v while accept failed: spinning", cpu, wall)
		}
		clients.CheckEcho(t)
	})
}
