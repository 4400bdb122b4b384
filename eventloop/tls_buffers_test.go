package eventloop

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestTLSConnBuffersAreFound: the input buffers of crypto/tls's Conn are
// where tls_buffers.go looks for them. If a Go release moved them, idle
// TLS connections keep crypto/tls's buffers (4 KB or so more each) until
// findTLSConnFields learns the new names.
func TestTLSConnBuffersAreFound(t *testing.T) {
	if !tlsBuffersFound {
		t.Fatal("crypto/tls.Conn has no rawInput/hand bytes.Buffer or input bytes.Reader: idle TLS connections keep their buffers")
	}
}

// TestLendingTLSInputAllocatesNothing: lending the loop's buffer to a
// connection and taking it back, with and without a partial record left
// over, allocates nothing once the pools are warm.
func TestLendingTLSInputAllocatesNothing(t *testing.T) {
	l := &loop{inBufs: bufCache{pool: &inboundPool}}
	tc := &tlsConn{conn: tls.Server(nil, &tls.Config{})}
	partial := []byte{0x17, 0x03, 0x03, 0x01, 0x00, 1, 2, 3}
	for _, leave := range []int{0, len(partial)} {
		allocs := testing.AllocsPerRun(100, func() {
			l.lendInput(tc)
			tlsRawInput(tc.conn).Write(partial) // what the transport's Read appends
			tlsRawInput(tc.conn).Next(len(partial) - leave)
			l.takeInput(tc)
		})
		if allocs != 0 {
			t.Errorf("leaving %d bytes: %v allocations per read, want 0", leave, allocs)
		}
		if got := tc.rest != nil; got != (leave > 0) {
			t.Errorf("leaving %d bytes: kept a partial record %v", leave, got)
		}
		if c := tlsRawInput(tc.conn).Cap(); c != 0 {
			t.Errorf("leaving %d bytes: the connection still points at a %d-byte input buffer", leave, c)
		}
	}
	l.dropRest(tc)
}

// connGrab is a lineEcho that remembers its last connection.
type connGrab struct {
	lineEcho
	conn atomic.Pointer[Conn]
}

func (h *connGrab) OnOpen(c *Conn) { h.conn.Store(c) }

// tlsInputState is what a TLS connection holds of its input, read on its loop.
type tlsInputState struct {
	rawCap, handCap, input, rest int
}

func inputState(t *testing.T, c *Conn) tlsInputState {
	t.Helper()
	var (
		st   tlsInputState
		done sync.WaitGroup
	)
	done.Add(1)
	err := c.Execute(func(c *Conn) {
		defer done.Done()
		tc := c.eng.(*loop).tlsOf(c)
		st = tlsInputState{rawCap: tlsRawInput(tc.conn).Cap(), handCap: tlsHand(tc.conn).Cap(), input: tlsInput(tc.conn).Len()}
		if tc.rest != nil {
			st.rest = len(tc.rest.B)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	done.Wait()
	return st
}

// heldConn passes writes through, or, while holding, keeps them for the
// test to send piecemeal.
type heldConn struct {
	net.Conn
	holding bool
	held    []byte
}

func (h *heldConn) Write(p []byte) (int, error) {
	if h.holding {
		h.held = append(h.held, p...)
		return len(p), nil
	}
	return h.Conn.Write(p)
}

// TestIdleTLSConnHoldsNoInputBuffers: between reads a TLS connection keeps
// neither crypto/tls's ciphertext buffer nor its handshake buffer; a
// record cut across reads waits in a buffer of its own size and is
// decrypted whole once the rest arrives, and records larger than a read
// come through intact.
func TestIdleTLSConnHoldsNoInputBuffers(t *testing.T) {
	ts := newTLSSetup(t)
	h := &connGrab{}
	s := startServer(t, h, Options{Addr: "127.0.0.1:0", Loops: 1, TLSConfig: ts.server, ReadBufferSize: 4096})
	raw, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	hc := &heldConn{Conn: raw}
	c := tls.Client(hc, ts.client)
	r := bufio.NewReader(c)
	echo := func(line string) {
		t.Helper()
		if _, err := c.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if got, err := r.ReadString('\n'); err != nil || got != line {
			t.Fatalf("echo of %d bytes: got %d bytes, %v", len(line), len(got), err)
		}
	}
	idle := func(when string) {
		t.Helper()
		if st := inputState(t, h.conn.Load()); st != (tlsInputState{}) {
			t.Fatalf("%s: the idle connection holds %+v, want nothing", when, st)
		}
	}
	echo("hello\n")
	idle("after the handshake and a line")

	// Records of 16 KB through a 4 KB read buffer: each read ends inside one.
	echo(strings.Repeat("x", 100000) + "\n")
	idle("after a line of 100 KB")

	// Half a record, then the rest.
	hc.holding = true
	if _, err := c.Write([]byte("a line cut in two\n")); err != nil {
		t.Fatal(err)
	}
	hc.holding = false
	record := hc.held
	if _, err := raw.Write(record[:len(record)/2]); err != nil {
		t.Fatal(err)
	}
	var st tlsInputState
	waitFor(t, "the half record to arrive", func() bool { st = inputState(t, h.conn.Load()); return st.rest > 0 })
	if st != (tlsInputState{rest: len(record) / 2}) {
		t.Fatalf("holding half a record: %+v, want only the %d bytes of the half", st, len(record)/2)
	}
	if _, err := raw.Write(record[len(record)/2:]); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadString('\n'); err != nil || got != "a line cut in two\n" {
		t.Fatalf("echo of the cut record: %q, %v", got, err)
	}
	idle("after the cut record")
	if !bytes.Equal(record, hc.held) {
		t.Fatal("the held record changed")
	}
}
