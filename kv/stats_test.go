package kv_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// TestTotalCommandsMatchesRedis runs the same session against redis-server
// and Shoal: commands of a client that has since disconnected stay in
// total_commands_processed, a command is counted after it runs (INFO does
// not count itself), and CONFIG RESETSTAT starts again from the RESETSTAT.
func TestTotalCommandsMatchesRedis(t *testing.T) {
	redisAddr := startRedis(t)
	shoal := startShoal(t, kv.Options{}, eventloop.Options{Loops: 2})
	for _, tc := range []struct{ name, addr string }{{"redis", redisAddr}, {"shoal", shoal.addr}} {
		t.Run(tc.name, func(t *testing.T) {
			stay := dialRaw(t, tc.addr)
			// The harness may have sent commands already (a readiness PING).
			before, _ := strconv.Atoi(parseInfo(t, stay.Do("INFO", "stats"))["total_commands_processed"])
			gone := dialRaw(t, tc.addr)
			for i := 0; i < 5; i++ {
				gone.Do("PING")
			}
			gone.C.Close()
			polls := 0
			for deadline := time.Now().Add(5 * time.Second); ; {
				polls++
				if parseInfo(t, stay.Do("INFO", "clients"))["connected_clients"] == "1" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the closed client is still listed")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if got, want := parseInfo(t, stay.Do("INFO", "stats"))["total_commands_processed"], strconv.Itoa(before+1+5+polls); got != want {
				t.Errorf("total_commands_processed = %s, want %s (%d before, 1+%d INFO, 5 PINGs of a closed client)", got, want, before, polls)
			}
			stay.Do("CONFIG", "RESETSTAT")
			if got := parseInfo(t, stay.Do("INFO", "stats"))["total_commands_processed"]; got != "1" {
				t.Errorf("after RESETSTAT total_commands_processed = %s, want 1", got)
			}
		})
	}
}
