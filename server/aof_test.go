package server_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/frame"
)

// TestFrontsRefuseWritesTheAOFWouldMiss: the HTTP and frame fronts write to
// the store directly, past the command path that logs to the append-only
// file. With the file on, a write there would be acknowledged and then lost
// on restart, so it is refused (HTTP 503, frame ERROR) and nothing changes;
// reads keep working.
func TestFrontsRefuseWritesTheAOFWouldMiss(t *testing.T) {
	w, err := aof.Open(filepath.Join(t.TempDir(), "appendonly.aof"), aof.FsyncEverySec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The file is attached before the server starts, as AttachAOF requires.
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "", func(h *kv.Handler) { h.AttachAOF(w, true) })
	resp := dialRaw(t, f.resp)
	if r := resp.Do("SET", "k", "logged"); r != "+OK\r\n" {
		t.Fatalf("SET over RESP = %q", r)
	}

	c := &http.Client{}
	for _, tc := range []struct{ method, path, body string }{
		{"PUT", "/kv/k", "not logged"}, {"DELETE", "/kv/k", ""}, {"POST", "/kv/n/incr", ""},
	} {
		res, body := httpDo(t, c, tc.method, "http://"+f.http+tc.path, tc.body)
		if res.StatusCode != 503 || !strings.Contains(body, "append-only file") {
			t.Errorf("%s %s = %d %q, want 503 naming the append-only file", tc.method, tc.path, res.StatusCode, body)
		}
	}
	if res, body := httpDo(t, c, "GET", "http://"+f.http+"/kv/k", ""); res.StatusCode != 200 || body != "logged" {
		t.Errorf("GET over HTTP = %d %q, want the RESP write", res.StatusCode, body)
	}

	fc := dialFrame(t, f.frame)
	for _, req := range [][]byte{frameSet("k", "not logged"), frameDel("k")} {
		if _, err := fc.c.Write(req); err != nil {
			t.Fatal(err)
		}
		st, msg, err := fc.read(t)
		if err != nil || st != frame.StatusError || !strings.Contains(msg, "append-only file") {
			t.Errorf("frame write: %v %q %v, want an ERROR naming the append-only file", st, msg, err)
		}
	}
	if r := resp.Do("GET", "k"); r != "$6\r\nlogged\r\n" {
		t.Errorf("after the refused writes GET = %q, want the RESP write unchanged", r)
	}
}
