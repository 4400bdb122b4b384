package kv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// fronts is a Shoal serving RESP, HTTP and frames from one Server.
type fronts struct {
	resp, http, frame string
	srv               *eventloop.Server
	handler           *kv.Handler
	store             *store.Store
}

// startFronts serves RESP, HTTP and frames on ports of host (127.0.0.1 if
// empty) until the test ends.
// Each of setup runs on the Handler before the Server starts.
func startFronts(t testing.TB, o kv.Options, eo eventloop.Options, host string, setup ...func(*kv.Handler)) *fronts {
	t.Helper()
	if host == "" {
		host = "127.0.0.1"
	}
	st := store.New(store.Options{})
	h := kv.New(st, o)
	for _, f := range setup {
		f(h)
	}
	eo.Addr = host + ":0"
	if eo.Loops == 0 {
		eo.Loops = 2
	}
	eo.Listeners = append(eo.Listeners,
		eventloop.Listener{Addr: host + ":0", Handler: h.HTTPHandler()},
		eventloop.Listener{Addr: host + ":0", Handler: h.FrameHandler()})
	srv, err := eventloop.NewServer(h, eo)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	a := srv.Addrs()
	f := &fronts{resp: a[0].String(), http: a[1].String(), frame: a[2].String(), srv: srv, handler: h, store: st}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, eventloop.ErrServerClosed) {
			t.Errorf("shutdown: %v", err)
		}
		h.Close()
		st.Close()
	})
	return f
}
