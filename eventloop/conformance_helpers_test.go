package eventloop_test

import (
	"crypto/tls"
	"net"
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
	tls    bool // serve and dial over TLS
}

// native-tls is the native engine with a TLS port: every promise holds
// for the plaintext a Handler sees and writes over TLS too.
var engines = []engineCase{
	{"native", nil, false},
	{"gnet", gnetengine.Engine{}, false},
	{"native-tls", nil, true},
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

// halfClose ends what the client sends: a FIN, or over TLS a
// close_notify alert, which the server takes the same way.
func halfClose(c net.Conn) {
	switch c := c.(type) {
	case *tls.Conn:
		c.CloseWrite()
	case *net.TCPConn:
		c.CloseWrite()
	}
}

// start starts h on e at a loopback port and shuts it down with the test.
func (e engineCase) start(t testing.TB, h eventloop.Handler, o eventloop.Options) *eventloop.Server {
	t.Helper()
	e.setup(t, &o)
	return eventloop.StartServer(t, h, o)
}

// newServer starts h on e without arranging its shutdown.
func (e engineCase) newServer(t testing.TB, h eventloop.Handler, o eventloop.Options) *eventloop.Server {
	t.Helper()
	e.setup(t, &o)
	return eventloop.NewStartedServer(t, h, o)
}

func (e engineCase) setup(t testing.TB, o *eventloop.Options) {
	o.Engine = e.engine
	if e.tls {
		o.TLSConfig, _ = eventloop.TestTLS(t)
	}
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
