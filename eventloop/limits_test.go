package eventloop

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// bigReply answers "N\n" with N bytes: the line's number (mod 10) repeated
// N-1 times, then '\n'. It records the largest pending output it saw.
type bigReply struct {
	lineEcho
	maxPending  atomic.Int64
	respectFull bool // stop consuming while the output is full
}

func (h *bigReply) OnTraffic(c *Conn, in []byte) int {
	return serveSized(c, in, h.respectFull, &h.maxPending)
}

// serveSized is bigReply's OnTraffic, which the conformance suite's
// sizedReply shares; maxPending, unless nil, records the most output it
// saw pending.
func serveSized(c *Conn, in []byte, respectFull bool, maxPending *atomic.Int64) int {
	consumed := 0
	for {
		if respectFull && c.OutputFull() {
			return consumed
		}
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			return consumed
		}
		n, _ := strconv.Atoi(string(in[consumed : consumed+i]))
		consumed += i + 1
		out := c.OutputBuffer()
		if out == nil { // closing: the hard limit was hit
			return consumed
		}
		for k := 0; k < n-1; k++ {
			out = append(out, byte('0'+n%10))
		}
		c.SetOutputBuffer(append(out, '\n'))
		if p := int64(c.OutboundBuffered()); maxPending != nil && p > maxPending.Load() {
			maxPending.Store(p)
		}
	}
}

func TestLargeRepliesWithPartialWrites(t *testing.T) {
	h := &bigReply{}
	s := startServer(t, h, Options{SocketSendBuffer: 4096, FlushThreshold: 8 << 10})
	c := dial(t, s)
	sizes := []int{1 << 20, 3, 700 << 10, 65537, 2 << 20, 1}
	var req bytes.Buffer
	for _, n := range sizes {
		fmt.Fprintf(&req, "%d\n", n)
	}
	c.Write(req.Bytes())
	for _, n := range sizes {
		// Read slowly at first so the server's writes come back short.
		time.Sleep(20 * time.Millisecond)
		got := readN(t, c, n)
		want := append(bytes.Repeat([]byte{byte('0' + n%10)}, n-1), '\n')
		if !bytes.Equal(got, want) {
			t.Fatalf("reply of %d bytes damaged or out of order", n)
		}
	}
}

func TestPeerThatNeverReadsIsBounded(t *testing.T) {
	const hard = 1 << 20
	h := &bigReply{}
	s := startServer(t, h, Options{
		OutputHighWater: 256 << 10, OutputLowWater: 64 << 10, OutputHardLimit: hard,
		SocketSendBuffer: 8192,
	})
	stuck := dial(t, s)
	go func() { // requests of 64 KiB replies, never reading one
		batch := bytes.Repeat([]byte("65536\n"), 1000)
		for {
			if _, err := stuck.Write(batch); err != nil {
				return
			}
		}
	}()
	waitFor(t, "the stuck connection to close", func() bool {
		for _, err := range h.CloseErrs() {
			if errors.Is(err, ErrOutputLimit) {
				return true
			}
		}
		return false
	})
	expectEOF(t, stuck)
	// A write is refused once more than the hard limit is unsent, so the
	// most that can be pending is the limit plus the one reply that found
	// less than the limit waiting.
	if max := h.maxPending.Load(); max > hard+65536 {
		t.Fatalf("pending output reached %d, above the hard limit %d plus one reply", max, hard)
	}
	other := dial(t, s)
	other.Write([]byte("5\n"))
	if got := string(readN(t, other, 5)); got != "5555\n" {
		t.Fatalf("other connection got %q", got)
	}
}

// connCatcher hands each opened connection to the test.
type connCatcher struct {
	lineEcho
	conns chan *Conn
}

func (h *connCatcher) OnOpen(c *Conn) { h.conns <- c }

// startCaught starts a line-echo server with o, connects to it and returns
// the handler, the client's end and the server's Conn.
func startCaught(t *testing.T, o Options) (h *connCatcher, client net.Conn, c *Conn) {
	t.Helper()
	h = &connCatcher{conns: make(chan *Conn, 1)}
	client = dial(t, startServer(t, h, o))
	return h, client, <-h.conns
}

func TestAsyncWriteToPeerThatNeverReads(t *testing.T) {
	h, client, c := startCaught(t, Options{OutputHighWater: 128 << 10, OutputLowWater: 32 << 10, OutputHardLimit: 512 << 10, SocketSendBuffer: 8192})
	chunk := bytes.Repeat([]byte{'z'}, 16<<10)
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		err = c.AsyncWrite(chunk)
		if i%16 == 15 {
			time.Sleep(time.Millisecond) // let the loop keep up, as a real producer would
		}
	}
	if !errors.Is(err, ErrConnClosed) {
		t.Fatalf("AsyncWrite kept succeeding; last error %v", err)
	}
	if err := h.WaitClose(t); !errors.Is(err, ErrOutputLimit) {
		t.Fatalf("OnClose error %v, want ErrOutputLimit", err)
	}
	expectEOF(t, client)
}

func TestStalledPeerClosedByIdleTimeout(t *testing.T) {
	h := &bigReply{}
	s := startServer(t, h, Options{
		OutputHighWater: 256 << 10, OutputLowWater: 64 << 10, OutputHardLimit: 64 << 20,
		SocketSendBuffer: 8192, IdleTimeout: 300 * time.Millisecond,
	})
	stuck := dial(t, s)
	// Five replies pass the high-water mark: the server stops reading, the
	// output cannot drain, and only the idle timeout can end it.
	stuck.Write(bytes.Repeat([]byte("65536\n"), 5))
	waitFor(t, "the stalled connection to close", func() bool {
		errs := h.CloseErrs()
		return len(errs) == 1 && errors.Is(errs[0], ErrIdleTimeout)
	})
	if max := h.maxPending.Load(); max > 5*65536 {
		t.Fatalf("pending output reached %d", max)
	}
}
