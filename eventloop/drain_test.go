package eventloop

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// kiloReply answers each '\n'-terminated request with a 1 KiB line that
// starts with the request: deep pipelines of replies far bigger than their
// requests, as GET of a 1 KB value is. It stops consuming when the output
// is full, as a handler should; "QUIT\n" closes the connection.
type kiloReply struct {
	connCatcher
	maxPending atomic.Int64
}

const kiloReplySize = 1024

func (h *kiloReply) OnTraffic(c *Conn, in []byte) int { return serveKilo(c, in, &h.maxPending) }

// serveKilo is kiloReply's OnTraffic, which the conformance suite's kilo
// handler shares: it records the most output it saw pending in
// maxPending.
func serveKilo(c *Conn, in []byte, maxPending *atomic.Int64) int {
	consumed := 0
	for !c.OutputFull() {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			break
		}
		req := in[consumed : consumed+i]
		consumed += i + 1
		if string(req) == "QUIT" {
			c.Close()
			break
		}
		out := c.OutputBuffer()
		if out == nil {
			break
		}
		out = append(out, req...)
		for k := len(req); k < kiloReplySize-1; k++ {
			out = append(out, '.')
		}
		c.SetOutputBuffer(append(out, '\n'))
		if p := int64(c.OutboundBuffered()); p > maxPending.Load() {
			maxPending.Store(p)
		}
	}
	return consumed
}

// readKiloReplies reads n replies to requests "r0".."r<n-1>" in order and
// then expects a clean EOF: not a reset, not a timeout. It reports with
// t.Errorf, so other goroutines may call it.
func readKiloReplies(t *testing.T, c net.Conn, n int) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	rd := bufio.NewReaderSize(c, 64<<10)
	line := make([]byte, kiloReplySize)
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(rd, line); err != nil {
			t.Errorf("reply %d of %d: %v", i, n, err)
			return
		}
		want := fmt.Sprintf("r%d.", i)
		if !bytes.HasPrefix(line, []byte(want)) || line[kiloReplySize-1] != '\n' {
			t.Errorf("reply %d of %d is %q..., want it to start %q", i, n, line[:20], want)
			return
		}
	}
	rest, err := io.ReadAll(rd)
	if err != nil {
		t.Errorf("after all %d replies: %v (want a clean EOF, not a reset)", n, err)
	} else if len(rest) > 0 {
		t.Errorf("%d bytes after the last reply: %q", len(rest), rest[:min(len(rest), 40)])
	}
}

// kiloRequests is n requests for kiloReply: "r0\n" to "r<n-1>\n".
func kiloRequests(n int) []byte { return numberedLines("r%d\n", n) }

// TestShutdownAnswersDeepPipelineOfBigReplies: 20,000 requests with 1 KiB
// replies (20 MiB, far more than the socket buffers hold) are in the
// server's sockets when Shutdown begins, from one client or spread over 16.
// Every reply arrives, in order, and then a clean EOF. Writes that back up
// on the way must not end the reading of the input, and the close must not
// reset the connection.
func TestShutdownAnswersDeepPipelineOfBigReplies(t *testing.T) {
	for _, clients := range []int{1, 16} {
		t.Run(fmt.Sprintf("clients=%d", clients), func(t *testing.T) {
			shutdownWithDeepPipelines(t, clients, 20000/clients)
		})
	}
}

func shutdownWithDeepPipelines(t *testing.T, clients, each int) {
	h := &kiloReply{connCatcher: connCatcher{conns: make(chan *Conn, clients)}}
	s, err := NewServer(h, Options{Addr: "127.0.0.1:0", Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	peers := make([]net.Conn, clients)
	var conns []*Conn
	for i := range peers {
		peers[i] = dial(t, s)
		conns = append(conns, <-h.conns)
	}
	// Stall every loop, so all requests are in the sockets, unanswered,
	// when Shutdown queues behind the stall.
	var releases []func()
	stalled := map[*loop]bool{}
	for _, c := range conns {
		if !stalled[c.eng.(*loop)] {
			stalled[c.eng.(*loop)] = true
			releases = append(releases, stallLoop(t, c))
		}
	}
	req := kiloRequests(each)
	for _, p := range peers {
		if _, err := p.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	shut := shutdownInBackground(s, 60*time.Second)
	time.Sleep(50 * time.Millisecond) // let Shutdown queue behind the stalls
	for _, release := range releases {
		release()
	}
	done := make(chan struct{}, clients)
	for _, p := range peers {
		go func() {
			defer func() { done <- struct{}{} }()
			readKiloReplies(t, p, each)
		}()
	}
	for range peers {
		<-done
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	errs := h.CloseErrs()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("close error %v, want nil", err)
		}
	}
	if len(errs) != clients {
		t.Fatalf("%d closes, want %d", len(errs), clients)
	}
}

// TestHandlerStoppedByFullOutputResumes: a handler that stops consuming
// while its output is full is presented the rest of its input once the
// output drains, even though no new byte arrives: 1,000 requests for
// 100 KiB replies, all in one read, all answered, with pending output
// bounded by the high-water mark plus one reply.
func TestHandlerStoppedByFullOutputResumes(t *testing.T) {
	const n, size = 1000, 100 << 10
	h := &bigReply{respectFull: true}
	s := startServer(t, h, Options{Loops: 1, OutputHighWater: 1 << 20, OutputLowWater: 256 << 10, OutputHardLimit: 4 << 20})
	client := dial(t, s)
	client.Write(bytes.Repeat([]byte(fmt.Sprintf("%d\n", size)), n))
	client.SetReadDeadline(time.Now().Add(60 * time.Second))
	rd := bufio.NewReaderSize(client, 256<<10)
	want := append(bytes.Repeat([]byte{byte('0' + size%10)}, size-1), '\n')
	got := make([]byte, size)
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(rd, got); err != nil {
			t.Fatalf("reply %d of %d: %v; close errors %v", i, n, err, h.CloseErrs())
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("reply %d damaged", i)
		}
	}
	if max, bound := h.maxPending.Load(), int64(1<<20+size); max > bound {
		t.Fatalf("pending output reached %d, want at most high water + one reply = %d", max, bound)
	}
	if errs := h.CloseErrs(); len(errs) != 0 {
		t.Fatalf("connection closed: %v", errs)
	}
}

// TestLingeringCloseIsBounded: a peer that stops reading and never closes
// cannot hold a gracefully closed connection's descriptor for long: the
// loop gives up lingering after lingerTimeout.
func TestLingeringCloseIsBounded(t *testing.T) {
	h := &kiloReply{connCatcher: connCatcher{conns: make(chan *Conn, 1)}}
	s := startServer(t, h, Options{Loops: 1, SocketSendBuffer: 4 << 20})
	client := dial(t, s)
	client.(*net.TCPConn).SetReadBuffer(4096)
	<-h.conns
	// 1 MiB of replies fits in the server's socket buffer but not in the
	// client's window: written out, not acknowledged, then QUIT.
	start := time.Now()
	client.Write(append(kiloRequests(1024), "QUIT\n"...))
	waitFor(t, "the QUIT to be answered", func() bool { return len(h.CloseErrs()) == 1 })
	if s.NumConns() != 1 {
		t.Fatalf("NumConns %d right after the close; want 1 lingering descriptor", s.NumConns())
	}
	waitFor(t, "the lingering descriptor to close", func() bool { return s.NumConns() == 0 })
	if d := time.Since(start); d > lingerTimeout+5*time.Second {
		t.Fatalf("lingered %v, want about %v", d, lingerTimeout)
	}
}
