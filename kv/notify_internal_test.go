package kv

import (
	"testing"

	"github.com/shoalkv/shoal/store"
)

// TestNotifyCostsNoAllocation: GET and SET allocate nothing with keyspace
// notifications off, nor with them on (the channel names are built on the
// stack) while nobody subscribes.
func TestNotifyCostsNoAllocation(t *testing.T) {
	for _, events := range []string{"", "KEA", "KEAmn"} {
		st := store.New(store.Options{ActiveExpireInterval: -1})
		h := New(st, Options{})
		if err := h.params.Set("notify-keyspace-events", events); err != nil {
			t.Fatal(err)
		}
		cl := &client{h: h, proto: 2, authed: true}
		cl.parser.Limits = &h.opts.Limits
		cl.out = make([]byte, 0, 4096)
		in := []byte(setReq + getReq + "*2\r\n$3\r\nGET\r\n$4\r\nnope\r\n")
		h.onBatch(cl, in)
		if allocs := testing.AllocsPerRun(200, func() {
			cl.out = cl.out[:0]
			h.onBatch(cl, in)
		}); allocs != 0 {
			t.Errorf("events %q: SET, GET and a missed GET allocate %.1f times", events, allocs)
		}
		h.Close()
		st.Close()
	}
}

// BenchmarkExecuteSETNotifying is SET with every class of keyspace
// notification on and nobody subscribed: the cost of building the events.
func BenchmarkExecuteSETNotifying(b *testing.B) {
	st := store.New(store.Options{ActiveExpireInterval: -1})
	defer st.Close()
	h := New(st, Options{})
	defer h.Close()
	if err := h.params.Set("notify-keyspace-events", "KEAmn"); err != nil {
		b.Fatal(err)
	}
	cl := &client{h: h, proto: 2, authed: true}
	cl.parser.Limits = &h.opts.Limits
	in := []byte(setReq)
	cl.out = make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cl.out = cl.out[:0]
		h.onBatch(cl, in)
	}
}
