package server_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/proto/frame"
)

// TestSlowReadersOnTheFrontsCostTheHighWaterMark: an HTTP and a frame
// client each pipeline 100 reads of a 1 MB value (100 MB of responses)
// and read nothing for a while. The fronts stop at the high-water mark,
// so what the loops hold for them stays near it (the unsent part in the
// off-heap backlog, counted in LoopCounters.OutputBacklog), not 100 MB;
// then every response arrives whole and in order.
func TestSlowReadersOnTheFrontsCostTheHighWaterMark(t *testing.T) {
	s := shoaltest.Start(t, shoaltest.Options{Fronts: true})
	value := strings.Repeat("v", 1<<20)
	if r := shoaltest.Dial(t, s.Addr).Do("SET", "big", value); r != "+OK\r\n" {
		t.Fatal(r)
	}
	const n = 100
	var httpReq, frameReq []byte
	for i := 0; i < n; i++ {
		httpReq = append(httpReq, "GET /kv/big HTTP/1.1\r\nHost: x\r\n\r\n"...)
		frameReq, _ = frame.AppendGet(frameReq, []byte("big"))
	}
	hc := shoaltest.Dial(t, s.HTTPAddr).C
	fc := shoaltest.Dial(t, s.FrameAddr).C
	go hc.Write(httpReq)
	go fc.Write(frameReq)
	backlog := func() (held int64) {
		for _, k := range s.Loop.Counters() {
			held += k.OutputBacklog
		}
		return held
	}
	// Wait for the fronts to stop: the backlog past 2 MiB and unchanged
	// for 200 ms (a fixed sleep failed on a loaded machine, where the
	// loops had not got that far yet). The bound holds at every sample.
	var held, peak int64
	for deadline, last, still := time.Now().Add(60*time.Second), int64(-1), 0; ; {
		held = backlog()
		peak = max(peak, held)
		if held == last && held >= 2<<20 {
			if still++; still == 10 {
				break
			}
		} else {
			still = 0
		}
		last = held
		if time.Now().After(deadline) {
			break // the checks below say what is wrong
		}
		time.Sleep(20 * time.Millisecond)
	}
	held = peak
	// Two clients, each stopped at the 4 MiB high-water mark plus the
	// 1 MiB response that crossed it, rounded up to a 64 KiB chunk; the
	// two loops' 8 reusable chunks on top.
	if limit := int64(2*(4<<20+1<<20+64<<10+64) + 2*8*64<<10); held > limit {
		t.Errorf("the loops hold %d bytes for two stalled clients, over %d", held, limit)
	}
	if held < 2<<20 {
		t.Errorf("the loops hold %d bytes off the heap for two stalled clients: their output did not move to the backlog", held)
	}
	t.Logf("held for two stalled clients: %d bytes", held)
	// Deadlines per response: they catch a stall, not a slow machine
	// (100 MB under -race on a loaded CI machine took over a minute).
	rd := bufio.NewReader(hc)
	for i := 0; i < n; i++ {
		_ = hc.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatalf("HTTP response %d: %v", i, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || len(body) != len(value) {
			t.Fatalf("HTTP response %d: %d, %d bytes, %v", i, resp.StatusCode, len(body), err)
		}
	}
	frd := bufio.NewReaderSize(fc, 1<<20)
	var dec frame.Decoder
	for i := 0; i < n; i++ {
		_ = fc.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, frame.ResponseHeaderLen, frame.ResponseHeaderLen+len(value))
		if _, err := io.ReadFull(frd, buf); err != nil {
			t.Fatalf("frame response %d: %v", i, err)
		}
		buf = buf[:frame.ResponseHeaderLen+int(binary.BigEndian.Uint32(buf[1:5]))]
		if _, err := io.ReadFull(frd, buf[frame.ResponseHeaderLen:]); err != nil {
			t.Fatalf("frame response %d: %v", i, err)
		}
		var r frame.Response
		if _, err := dec.DecodeResponse(buf, &r); err != nil || r.Status != frame.StatusOK || len(r.Value) != len(value) {
			t.Fatalf("frame response %d: %v, %d bytes, %v", i, r.Status, len(r.Value), err)
		}
	}
}
