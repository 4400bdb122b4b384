package eventloop

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/tcptest"
)

// heldBalancer holds the acceptor in its first Pick until gate closes, so
// the connections that arrive meanwhile wait on the listener, unaccepted.
type heldBalancer struct {
	held chan struct{} // closed once the first Pick has begun
	gate chan struct{} // Pick returns once this is closed
	once sync.Once
}

func (b *heldBalancer) Pick([]LoopStat) int {
	b.once.Do(func() { close(b.held) })
	<-b.gate
	return 0
}

// TestShutdownServesConnectionsQueuedOnTheListener: a connection whose
// handshake the kernel completed, and whose requests it acknowledged,
// before Shutdown began has sent requests already received, though the
// server has not accepted it yet: every request is answered, then a clean
// EOF, not a reset. Twice an accept batch of such connections waits on the
// listener while the accepting goroutine (the acceptor, or with ReusePort
// the loop) is held, so the batch under way when Shutdown begins cannot
// take them all.
func TestShutdownServesConnectionsQueuedOnTheListener(t *testing.T) {
	const queued, requests = 2 * maxAcceptsPerEvent, 20
	for _, reusePort := range []bool{false, true} {
		t.Run(fmt.Sprintf("ReusePort=%v", reusePort), func(t *testing.T) {
			h := &connCatcher{conns: make(chan *Conn, queued+1)}
			o := Options{Loops: 1, ReusePort: reusePort}
			b := &heldBalancer{held: make(chan struct{}), gate: make(chan struct{})}
			if !reusePort {
				o.Balancer = b
			}
			s := newStartedServer(t, h, o)
			first := dial(t, s)
			var release func()
			if reusePort {
				release = stallLoop(t, <-h.conns)
			} else {
				<-b.held
				release = func() { close(b.gate) }
			}
			req := numberedLines("request %d\n", requests)
			peers := []net.Conn{first}
			for i := 0; i < queued; i++ {
				peers = append(peers, dial(t, s))
			}
			for _, p := range peers {
				if _, err := p.Write(req); err != nil {
					release()
					t.Fatal(err)
				}
			}
			for _, p := range peers {
				tcptest.WaitAcked(t, p)
			}
			shut := shutdownInBackground(s, 20*time.Second)
			waitFor(t, "Shutdown to begin", s.closing.Load)
			release()
			for i, p := range peers {
				_ = p.SetReadDeadline(time.Now().Add(20 * time.Second))
				got, err := io.ReadAll(p)
				if err != nil || string(got) != string(req) {
					t.Fatalf("connection %d of %d: %d of %d reply bytes, then %v (want all, then a clean EOF)",
						i, len(peers), len(got), len(req), err)
				}
			}
			if err := <-shut; err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		})
	}
}
