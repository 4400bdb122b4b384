package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/frame"
)

// TestFrontsServeAsTheDefaultUser: the HTTP and frame fronts run their
// requests as the default ACL user, under its command and key rules as
// RESP would (-NOPERM's words; HTTP 403), and see its rules change at once.
func TestFrontsServeAsTheDefaultUser(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	admin := dialRaw(t, f.resp)
	if r := admin.Do("SET", "open:1", "v"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	admin.Do("SET", "closed:1", "v")
	// Keep RESP usable for the admin by giving it its own user first.
	if r := admin.Do("ACL", "SETUSER", "admin", "on", ">pw", "+@all", "~*", "&*"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	admin.Do("AUTH", "admin", "pw")
	if r := admin.Do("ACL", "SETUSER", "default", "resetkeys", "~open:*", "-del"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	base := "http://" + f.http
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/kv/open:1", 200, "v"},
		{"GET", "/kv/closed:1", 403, "NOPERM this user has no permissions to access one of the keys used as arguments"},
		{"PUT", "/kv/closed:2", 403, "NOPERM this user has no permissions to access one of the keys used as arguments"},
		{"DELETE", "/kv/open:1", 403, "NOPERM this user has no permissions to run the 'del' command"},
		{"POST", "/kv/open:n/incr", 200, "1"},
		{"POST", "/kv/closed:n/incr", 403, "NOPERM this user has no permissions to access one of the keys used as arguments"},
	} {
		resp, body := httpDo(t, c, tc.method, base+tc.path, "")
		if resp.StatusCode != tc.status || strings.TrimSpace(body) != tc.body {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
	}
	fc := dialFrame(t, f.frame)
	if st, v := fc.do(t, frameGet("open:1")); st != frame.StatusOK || v != "v" {
		t.Errorf("frame GET open:1: %v %q", st, v)
	}
	if st, v := fc.do(t, frameGet("closed:1")); st != frame.StatusError || v != "NOPERM this user has no permissions to access one of the keys used as arguments" {
		t.Errorf("frame GET closed:1: %v %q", st, v)
	}
	if st, v := fc.do(t, frameDel("open:1")); st != frame.StatusError || v != "NOPERM this user has no permissions to run the 'del' command" {
		t.Errorf("frame DEL open:1: %v %q", st, v)
	}
	// The rules apply per request: lifting them lifts the refusals.
	admin.Do("ACL", "SETUSER", "default", "allkeys", "+del")
	if st, v := fc.do(t, frameGet("closed:1")); st != frame.StatusOK || v != "v" {
		t.Errorf("frame GET closed:1 after allkeys: %v %q", st, v)
	}
	if resp, body := httpDo(t, c, "DELETE", base+"/kv/open:1", ""); resp.StatusCode != 204 {
		t.Errorf("DELETE after +del: %d %q", resp.StatusCode, body)
	}
}
