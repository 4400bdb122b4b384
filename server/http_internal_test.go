package server

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// TestHTTPDateClockStopsWithTheServer: the HTTP front starts its Date
// clock in OnBoot and stops it in OnShutdown, so a stopped server leaves
// no ticking goroutine: the Date line no longer advances.
func TestHTTPDateClockStopsWithTheServer(t *testing.T) {
	st := store.New(store.Options{})
	defer st.Close()
	k := kv.New(st, kv.Options{})
	defer k.Close()
	h := New(k)
	front := h.HTTPHandler().(*httpFront)
	if front.date.Load() != nil {
		t.Fatal("a clock runs before the server starts")
	}
	srv, err := eventloop.NewServer(h, eventloop.Options{Addr: "127.0.0.1:0", Loops: 1,
		Listeners: []eventloop.Listener{{Addr: "127.0.0.1:0", Handler: front}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	d := front.date.Load()
	if d == nil {
		t.Fatal("no clock after Start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	before := d.AppendDate(nil)
	time.Sleep(1100 * time.Millisecond) // a running clock re-formats every second
	if after := d.AppendDate(nil); !bytes.Equal(before, after) {
		t.Fatalf("the Date line still advances after Shutdown: %q then %q", before, after)
	}
}
