package eventloop_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
)

// TestConformEcho: what is written in OnTraffic reaches the peer, and a
// request split at every byte is presented again with the rest appended
// (the unconsumed-rest contract).
func TestConformEcho(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		s := e.start(t, lines{newRecorder()}, eventloop.Options{})
		c := dialServer(t, s)
		var req bytes.Buffer
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&req, "line %d of the pipeline\n", i)
		}
		for i := 0; i < req.Len(); i++ {
			c.Write(req.Bytes()[i : i+1])
		}
		if got := readFull(t, c, req.Len()); !bytes.Equal(got, req.Bytes()) {
			t.Fatalf("echo damaged: %q", got[:64])
		}
	})
}
