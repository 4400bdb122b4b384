package eventloop_test

import (
	"sync/atomic"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
)

// The conformance suite runs every promise of the package's documentation
// against every engine. Where an engine cannot keep a promise, its test
// skips on that engine with the reason, which the engine's package
// documentation also gives.

type engineCase struct {
	name   string
	engine eventloop.Engine
}

var engines = []engineCase{
	{"native", nil},
	{"gnet", gnetengine.Engine{}},
}

// forEachEngine runs test once per engine, as a subtest named for it.
func forEachEngine(t *testing.T, test func(t *testing.T, e engineCase)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { test(t, e) })
	}
}

// skipOn skips the test on the named engine, with the reason.
func (e engineCase) skipOn(t *testing.T, name, reason string) {
	t.Helper()
	if e.name == name {
		t.Skip(reason)
	}
}

// start starts h on e at a loopback port and shuts it down with the test.
func (e engineCase) start(t testing.TB, h eventloop.Handler, o eventloop.Options) *eventloop.Server {
	t.Helper()
	o.Engine = e.engine
	return eventloop.StartServer(t, h, o)
}

// newServer starts h on e without arranging its shutdown.
func (e engineCase) newServer(t testing.TB, h eventloop.Handler, o eventloop.Options) *eventloop.Server {
	t.Helper()
	o.Engine = e.engine
	return eventloop.NewStartedServer(t, h, o)
}

// Helpers shared with the package's own tests (export_test.go).
var (
	dialServer            = eventloop.Dial
	readFull              = eventloop.ReadN
	eventually            = eventloop.WaitFor
	kiloRequests          = eventloop.KiloRequests
	readKilo              = eventloop.ReadKiloReplies
	numberedLines         = eventloop.NumberedLines
	eachLine              = eventloop.EachLine
	stall                 = eventloop.StallLoop
	shutdownInBackground  = eventloop.ShutdownInBackground
	readToEOF             = eventloop.ReadToEOF
	expectEOF             = eventloop.ExpectEOF
	cpuTime               = eventloop.CPUTime
	expectTailsAfterDrain = eventloop.ExpectTailsAfterDrain
)

// recorder keeps what OnOpen and OnClose saw, and hands each new *Conn to
// the test.
type recorder struct {
	eventloop.CloseLog
	conns chan *eventloop.Conn
	greet string
}

func newRecorder() *recorder { return &recorder{conns: make(chan *eventloop.Conn, 64)} }

func (r *recorder) OnOpen(c *eventloop.Conn) {
	if r.greet != "" {
		c.WriteString(r.greet)
	}
	select {
	case r.conns <- c:
	default:
	}
}

// lines echoes each '\n'-terminated line, leaving a partial one
// unconsumed; "QUIT" closes the connection.
type lines struct{ *recorder }

func (h lines) OnTraffic(c *eventloop.Conn, in []byte) int {
	return eachLine(in, func(line []byte) bool {
		if string(line) == "QUIT\n" {
			c.Close()
			return false
		}
		c.Write(line)
		return true
	})
}

// kilo answers each '\n'-terminated request with a 1 KiB line starting
// with the request, stops consuming while the output is full, and closes
// on "QUIT": replies far bigger than requests, like GETs of 1 KB values.
type kilo struct {
	*recorder
	maxPending atomic.Int64
}

const kiloSize = eventloop.KiloReplySize

func (h *kilo) OnTraffic(c *eventloop.Conn, in []byte) int {
	return eventloop.ServeKilo(c, in, &h.maxPending)
}
