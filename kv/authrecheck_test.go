package kv_test

import (
	"strings"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestClearedPasswordLiftsPreAuthLimits: a connection opened while a
// password was required is held to the pre-AUTH request limits (at most 10
// arguments, small bulks). Once CONFIG SET requirepass "" clears the
// password, Redis re-checks on every request and serves that connection in
// full; so must Shoal. Setting a password again brings the limits back for
// connections that never authenticated. Replies are compared with
// redis-server's.
func TestClearedPasswordLiftsPreAuthLimits(t *testing.T) {
	redisAddr := startRedis(t, "--requirepass", "p")
	shoal := startShoal(t, kv.Options{RequirePass: "p"}, eventloop.Options{})
	msetArgs := []string{"MSET"}
	for i := 0; i < 10; i++ {
		msetArgs = append(msetArgs, "k"+strings.Repeat("x", i), "v")
	}
	run := func(addr string) []string {
		admin := dialRaw(t, addr)
		// waiting must be opened while the password is required. Its dial
		// returning says only that the kernel took the connection; the
		// server opens it later, on its loop, and a connection it opens
		// once the password is cleared is authenticated for good, in
		// Redis as in Shoal. A NOAUTH reply shows it was opened in time.
		waiting := dialRaw(t, addr)
		got := []string{waiting.Do("GET", "k")}
		got = append(got, admin.Do("AUTH", "p"), admin.Do("CONFIG", "SET", "requirepass", ""))
		got = append(got, waiting.Do(msetArgs...), waiting.Do("GET", "k"))
		got = append(got, admin.Do("CONFIG", "SET", "requirepass", "q"))
		late := dialRaw(t, addr)
		late.Send(encodeCommand(msetArgs))
		reply, _ := late.ReadUntilClose()
		got = append(got, reply, waiting.Do("GET", "k"))
		return got
	}
	want, got := run(redisAddr), run(shoal.addr)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: shoal %q, redis-server %q", i, got[i], want[i])
		}
	}
}
