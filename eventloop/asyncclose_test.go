package eventloop

import (
	"errors"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stallLoop runs a function on c's loop that blocks until the returned
// release is called, so tests can queue work and network events that the
// loop then sees together in its next cycle.
func stallLoop(t *testing.T, c *Conn) (release func()) {
	t.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	if err := c.Execute(func(*Conn) { close(entered); <-gate }); err != nil {
		t.Fatal(err)
	}
	<-entered
	return func() { close(gate) }
}

// waitSocket polls the server side of a connection, from the test
// goroutine while its loop is stalled, until one of events is pending on
// it: so a test knows the peer's FIN or RST has arrived instead of hoping
// a sleep was long enough. It calls release and fails after 10 s.
func waitSocket(t *testing.T, fd int, events int16, release func()) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(fds, 100)
		if err != nil && err != unix.EINTR {
			release()
			t.Fatalf("poll: %v", err)
		}
		if n > 0 && fds[0].Revents&events != 0 {
			return
		}
		if time.Now().After(deadline) {
			release()
			t.Fatalf("socket events %#x never arrived (revents %#x)", events, fds[0].Revents)
		}
	}
}

// TestAsyncWriteQueuedBeforePeerHalfCloseIsSent: the peer half-closes while
// an accepted AsyncWrite is still queued. The loop sees the EOF before it
// runs the task; the connection must stay open until the data is written.
func TestAsyncWriteQueuedBeforePeerHalfCloseIsSent(t *testing.T) {
	h, client, c := startCaught(t, Options{Loops: 1})
	release := stallLoop(t, c)
	if err := c.AsyncWrite([]byte("late reply\n")); err != nil {
		release()
		t.Fatalf("AsyncWrite on an open conn: %v", err)
	}
	client.(*net.TCPConn).CloseWrite()
	waitSocket(t, c.Fd(), unix.POLLIN, release) // the FIN has arrived before the loop resumes
	release()
	got := readToEOF(t, client)
	if string(got) != "late reply\n" {
		t.Fatalf("peer got %q; AsyncWrite reported success for data that was dropped", got)
	}
	if err := h.WaitClose(t); err != nil {
		t.Fatalf("OnClose error %v, want nil", err)
	}
	if err := c.AsyncWrite([]byte("x")); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("AsyncWrite after the close: %v, want ErrConnClosed", err)
	}
}

// TestShutdownKeepsAsyncRepliesOfDrainingConns: a connection still writing
// its output when Shutdown begins accepts AsyncWrite and Execute replies
// until it is closed, and sends them before closing.
func TestShutdownKeepsAsyncRepliesOfDrainingConns(t *testing.T) {
	h := &bigReply{}
	catcher := &connCatcher{conns: make(chan *Conn, 1)}
	s := startServer(t, &struct {
		*bigReply
		*connCatcher
	}{h, catcher}, Options{Loops: 1, SocketSendBuffer: 4096})
	client := dial(t, s)
	c := <-catcher.conns
	const size = 1 << 20
	client.Write([]byte("1048576\n")) // a reply the client does not read yet
	waitFor(t, "output to back up", func() bool { return h.maxPending.Load() > 0 })

	shut := shutdownInBackground(s, 20*time.Second)
	waitFor(t, "the drain to reach the conn", func() bool {
		closing := make(chan bool, 1)
		if err := c.Execute(func(c *Conn) { closing <- c.flags&flagDrainInput != 0 }); err != nil {
			t.Fatalf("Execute while draining: %v", err)
		}
		return <-closing
	})
	expectTailsAfterDrain(t, c, client, shut, size)
}

// TestQueuedTasksOfResetConnMissNewConnOnSameFd: a connection is reset
// while an AsyncWrite and an Execute for it are queued, and a new
// connection is accepted on the same descriptor before they run. They must
// not reach the new connection.
func TestQueuedTasksOfResetConnMissNewConnOnSameFd(t *testing.T) {
	h := &connCatcher{conns: make(chan *Conn, 2)}
	s := startServer(t, h, Options{Loops: 1, ReusePort: true})
	keeper := dial(t, s) // a conn to stall the loop with
	k := <-h.conns
	oldClient := dial(t, s)
	old := <-h.conns
	release := stallLoop(t, k)
	if err := old.AsyncWrite([]byte("for the old conn\n")); err != nil {
		release()
		t.Fatal(err)
	}
	ran := make(chan *Conn, 1)
	if err := old.Execute(func(c *Conn) { ran <- c; c.WriteString("old execute\n") }); err != nil {
		release()
		t.Fatal(err)
	}
	oldClient.(*net.TCPConn).SetLinger(0) // close with RST: an abortive close
	oldClient.Close()
	newClient := dial(t, s)                                     // returns once the new conn waits in the accept queue
	waitSocket(t, old.Fd(), unix.POLLHUP|unix.POLLERR, release) // the RST has landed
	release()
	fresh := <-h.conns
	if fresh.Fd() != old.Fd() {
		t.Skipf("the new conn got fd %d, not the old %d; nothing to test", fresh.Fd(), old.Fd())
	}
	select {
	case c := <-ran:
		t.Fatalf("Execute for the reset conn ran (on %p, new conn %p)", c, fresh)
	default:
	}
	newClient.Write([]byte("mine\n"))
	if got := string(readN(t, newClient, 5)); got != "mine\n" {
		t.Fatalf("new conn got %q: output queued for the old conn on the same fd leaked", got)
	}
	waitFor(t, "OnClose of the old conn", func() bool { return len(h.CloseErrs()) == 1 })
	if h.CloseErrs()[0] == nil {
		t.Fatal("a reset that dropped queued output was reported as a clean close")
	}
	_ = keeper
}
