package loadgen

import (
	"context"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// startShoalFronts serves RESP, HTTP and frames from one in-process Shoal.
func startShoalFronts(t *testing.T) (h *kv.Handler, st *store.Store, httpAddr, frameAddr string) {
	t.Helper()
	s := shoaltest.Start(t, shoaltest.Options{Fronts: true})
	return s.KV, s.Store, s.HTTPAddr, s.FrameAddr
}

// TestHTTPAndFrameProtocols: -proto http and -proto frame send exactly n
// requests of every kind they support, pipelined, without errors, and the
// writes land in the store.
func TestHTTPAndFrameProtocols(t *testing.T) {
	_, st, httpAddr, frameAddr := startShoalFronts(t)
	for _, tc := range []struct {
		proto, addr string
		mix         []opWeight
	}{
		{"http", httpAddr, []opWeight{{opGet, 1}, {opSet, 1}, {opPing, 1}, {opIncr, 1}}},
		{"frame", frameAddr, []opWeight{{opGet, 1}, {opSet, 1}, {opPing, 1}}},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			st.Flush()
			cfg := testConfig(tc.addr)
			cfg.Protocol, cfg.Mix, cfg.Requests, cfg.Pipeline, cfg.Keyspace = tc.proto, tc.mix, 2003, 16, 50
			rep := mustRun(t, cfg)
			if rep.Requests != 2003 || rep.Errors != 0 {
				t.Fatalf("requests %d errors %d %v", rep.Requests, rep.Errors, rep.ErrorsByKind)
			}
			checkLatency(t, rep)
			if st.DBSize() == 0 {
				t.Fatal("no SET reached the store")
			}
		})
	}
	cfg := testConfig(frameAddr)
	cfg.Protocol, cfg.Mix, cfg.Requests = "frame", []opWeight{{opIncr, 1}}, 10
	if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "cannot send incr") {
		t.Fatalf("frame with incr: %v", err)
	}
}

// TestHTTPErrorRepliesAreCountedByStatus: a 409 from the HTTP front
// (INCR of a non-integer) is an error reply of kind "409".
func TestHTTPErrorRepliesAreCountedByStatus(t *testing.T) {
	_, st, httpAddr, _ := startShoalFronts(t)
	for i := 0; i < 10; i++ {
		st.Set(nil, []byte("counter:"+strings.Repeat("0", keyDigits-1)+string(rune('0'+i))), []byte("x"), store.SetOptions{})
	}
	cfg := testConfig(httpAddr)
	cfg.Protocol, cfg.Mix, cfg.Requests, cfg.Keyspace = "http", []opWeight{{opIncr, 1}}, 100, 10
	rep := mustRun(t, cfg)
	if rep.Errors != 100 || rep.ErrorsByKind["409"] != 100 {
		t.Fatalf("errors %d by kind %v, want 100 of 409", rep.Errors, rep.ErrorsByKind)
	}
}
