// Package shoaltest starts an in-process Shoal for tests: a kv.Handler
// behind the serving edge (package server) on a real eventloop.Server
// listening on loopback, stopped when the test ends. Every package whose
// tests need a Shoal to talk to uses it, so there is one way to start one.
package shoaltest

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/server"
	"github.com/shoalkv/shoal/store"
)

// Options configures Start. The zero value serves RESP on 127.0.0.1 with
// two loops and default limits.
type Options struct {
	KV    kv.Options
	Store store.Options
	// Loop configures the eventloop Server. Addr defaults to Host:0,
	// Loops to 2, Engine to Engine(t) (native with Fronts: the gnet
	// engine serves one address).
	Loop eventloop.Options
	// Host is the address the listeners bind, 127.0.0.1 by default.
	Host string
	// Fronts adds the HTTP and frame fronts, each on its own port.
	Fronts bool
	// Setup runs on the Handler before the port opens (AttachAOF, …).
	Setup func(*kv.Handler)
}

// Server is a running in-process Shoal.
type Server struct {
	Addr      string // RESP
	HTTPAddr  string // with Options.Fronts
	FrameAddr string // with Options.Fronts
	Loop      *eventloop.Server
	Edge      *server.Handler
	KV        *kv.Handler
	Store     *store.Store
}

// Start starts a Shoal and registers its shutdown with t.Cleanup. A
// shutdown that fails (requests still unanswered after 5 s) fails t.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	eo := o.Loop
	if eo.Engine == nil && !o.Fronts {
		eo.Engine = Engine(t)
	}
	if eo.Addr == "" {
		eo.Addr = net.JoinHostPort(o.Host, "0")
	}
	if eo.Loops == 0 {
		eo.Loops = 2
	}
	st := store.New(o.Store)
	k := kv.New(st, o.KV)
	if o.Setup != nil {
		o.Setup(k)
	}
	edge := server.New(k)
	if o.Fronts {
		eo.Listeners = append(eo.Listeners,
			eventloop.Listener{Addr: net.JoinHostPort(o.Host, "0"), Handler: edge.HTTPHandler()},
			eventloop.Listener{Addr: net.JoinHostPort(o.Host, "0"), Handler: edge.FrameHandler()})
	}
	srv, err := eventloop.NewServer(edge, eo)
	if err != nil {
		k.Close()
		st.Close()
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		k.Close()
		st.Close()
		t.Fatal(err)
	}
	s := &Server{Addr: srv.Addr().String(), Loop: srv, Edge: edge, KV: k, Store: st}
	if o.Fronts {
		a := srv.Addrs()
		s.HTTPAddr, s.FrameAddr = a[len(a)-2].String(), a[len(a)-1].String()
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, eventloop.ErrServerClosed) {
			t.Errorf("shutdown: %v", err)
		}
		k.Close()
		st.Close()
	})
	return s
}

// Engine is the eventloop engine in-process servers of tests run on: the
// native one, or gnet's with SHOAL_TEST_ENGINE=gnet (CI runs kv's tests
// both ways).
func Engine(t testing.TB) eventloop.Engine {
	switch e := os.Getenv("SHOAL_TEST_ENGINE"); e {
	case "", "native":
		return nil
	case "gnet":
		return gnetengine.Engine{}
	default:
		t.Fatalf("SHOAL_TEST_ENGINE=%q: want native or gnet", e)
		return nil
	}
}
