package server_test

import (
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
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
// empty) until the test ends (internal/shoaltest).
// Each of setup runs on the Handler before the Server starts.
func startFronts(t testing.TB, o kv.Options, eo eventloop.Options, host string, setup ...func(*kv.Handler)) *fronts {
	t.Helper()
	s := shoaltest.Start(t, shoaltest.Options{KV: o, Loop: eo, Host: host, Fronts: true, Setup: func(h *kv.Handler) {
		for _, f := range setup {
			f(h)
		}
	}})
	return &fronts{resp: s.Addr, http: s.HTTPAddr, frame: s.FrameAddr, srv: s.Loop, handler: s.KV, store: s.Store}
}
