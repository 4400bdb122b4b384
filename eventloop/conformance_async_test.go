package eventloop_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
)

// TestConformAsyncWriteFromManyGoroutinesInOrder: AsyncWrite from 16
// goroutines at once, messages of many lengths: every message arrives
// whole, each goroutine's in order.
func TestConformAsyncWriteFromManyGoroutinesInOrder(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		s := e.start(t, lines{r}, eventloop.Options{})
		client := dialServer(t, s)
		c := <-r.conns
		const writers, each = 16, 300
		message := func(g, i int) string { return fmt.Sprintf("%02d %04d %s\n", g, i, strings.Repeat("p", i%50)) }
		var wg sync.WaitGroup
		for g := 0; g < writers; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					if err := c.AsyncWrite([]byte(message(g, i))); err != nil {
						t.Errorf("AsyncWrite: %v", err)
						return
					}
				}
			}()
		}
		defer wg.Wait()
		client.SetReadDeadline(time.Now().Add(20 * time.Second))
		rd := bufio.NewReader(client)
		next := make([]int, writers)
		for n := 0; n < writers*each; n++ {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("after %d messages: %v", n, err)
			}
			var g, i int
			if _, err := fmt.Sscanf(line, "%02d %04d", &g, &i); err != nil || g >= writers || line != message(g, i) {
				t.Fatalf("damaged message %q", line)
			}
			if i != next[g] {
				t.Fatalf("writer %d: message %d arrived when %d was due", g, i, next[g])
			}
			next[g]++
		}
	})
}

// onLoop records the goroutine OnTraffic runs on.
type onLoop struct {
	*recorder
	traffic chan string
}

// goroutineID returns the calling goroutine's number, from its stack header.
func goroutineID() string {
	var b [64]byte
	return strings.Fields(string(b[:runtime.Stack(b[:], false)]))[1]
}

func (h onLoop) OnTraffic(c *eventloop.Conn, in []byte) int {
	h.traffic <- goroutineID()
	return len(in)
}

// TestConformExecuteRunsOnTheLoop: Execute runs its function on the
// connection's loop goroutine (where OnTraffic runs), and what it writes
// is sent; once the connection has closed, Execute and AsyncWrite return
// ErrConnClosed.
func TestConformExecuteRunsOnTheLoop(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		h := onLoop{newRecorder(), make(chan string, 1)}
		s := e.start(t, h, eventloop.Options{Loops: 1})
		client := dialServer(t, s)
		c := <-h.conns
		client.Write([]byte("x"))
		loopG := <-h.traffic
		ran := make(chan string, 1)
		if err := c.Execute(func(c *eventloop.Conn) {
			ran <- goroutineID()
			c.WriteString("from execute\n")
		}); err != nil {
			t.Fatal(err)
		}
		if g := <-ran; g != loopG {
			t.Fatalf("Execute ran on goroutine %s, OnTraffic on %s", g, loopG)
		}
		if got := readFull(t, client, 13); string(got) != "from execute\n" {
			t.Fatalf("got %q", got)
		}
		client.Close()
		eventually(t, "close", func() bool { return len(h.CloseErrs()) == 1 })
		if err := c.Execute(func(*eventloop.Conn) {}); !errors.Is(err, eventloop.ErrConnClosed) {
			t.Fatalf("Execute on a closed conn: %v", err)
		}
		if err := c.AsyncWrite([]byte("x")); !errors.Is(err, eventloop.ErrConnClosed) {
			t.Fatalf("AsyncWrite on a closed conn: %v", err)
		}
	})
}

// TestConformAsyncWritesAcceptedBeforeCloseAreSent: AsyncWrites queued
// before a Close, and those racing with it that return nil, are all sent
// before the connection closes; the ones refused return ErrConnClosed.
func TestConformAsyncWritesAcceptedBeforeCloseAreSent(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		s := e.start(t, lines{r}, eventloop.Options{Loops: 1})
		client := dialServer(t, s)
		c := <-r.conns
		release := stall(t, c)
		var want bytes.Buffer
		for i := 0; i < 100; i++ {
			msg := fmt.Sprintf("a%05d\n", i)
			if err := c.AsyncWrite([]byte(msg)); err != nil {
				release()
				t.Fatalf("AsyncWrite on an open conn: %v", err)
			}
			want.WriteString(msg)
		}
		if err := c.Execute(func(c *eventloop.Conn) { c.Close() }); err != nil {
			release()
			t.Fatal(err)
		}
		racing := make(chan string, 1)
		go func() {
			var accepted bytes.Buffer
			for i := 0; i < 10000; i++ {
				msg := fmt.Sprintf("b%05d\n", i)
				err := c.AsyncWrite([]byte(msg))
				if errors.Is(err, eventloop.ErrConnClosed) {
					break
				}
				if err != nil {
					t.Errorf("AsyncWrite: %v", err)
					break
				}
				accepted.WriteString(msg)
			}
			racing <- accepted.String()
		}()
		release()
		got := readToEOF(t, client)
		want.WriteString(<-racing)
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("peer got %d bytes, want the %d accepted", len(got), want.Len())
		}
		if err := r.WaitClose(t); err != nil {
			t.Fatalf("OnClose error %v, want nil", err)
		}
	})
}

// gate blocks OnTraffic until the test opens it: the loop is busy when
// the events the test arranges arrive, and sees them together next cycle.
type gate struct {
	*recorder
	entered, open chan struct{}
}

func (h gate) OnTraffic(c *eventloop.Conn, in []byte) int {
	close(h.entered)
	<-h.open
	return len(in)
}

// TestConformAsyncWriteQueuedBeforePeerHalfCloseIsSent: the peer
// half-closes while an accepted AsyncWrite is still queued, and the loop
// sees the EOF before it runs the task; the data is still sent before
// the close.
func TestConformAsyncWriteQueuedBeforePeerHalfCloseIsSent(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		e.skipOn(t, "gnet", "gnet closes a connection as soon as a read finds EOF, before queued tasks run (see the gnetengine doc)")
		h := gate{newRecorder(), make(chan struct{}), make(chan struct{})}
		s := e.start(t, h, eventloop.Options{Loops: 1})
		client := dialServer(t, s)
		c := <-h.conns
		client.Write([]byte("x"))
		<-h.entered // the loop is inside OnTraffic
		if err := c.AsyncWrite([]byte("late reply\n")); err != nil {
			close(h.open)
			t.Fatal(err)
		}
		halfClose(client)
		time.Sleep(50 * time.Millisecond) // let the FIN arrive while the loop is busy
		close(h.open)
		if got := readToEOF(t, client); string(got) != "late reply\n" {
			t.Fatalf("peer got %q; AsyncWrite reported success for data that was dropped", got)
		}
	})
}

// TestConformWorkLostToEOFIsReported: where an engine does drop queued
// work at the peer's EOF (gnet), OnClose says so with an error rather
// than nil; the native engine sends it and closes with nil.
func TestConformWorkLostToEOFIsReported(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		h := gate{newRecorder(), make(chan struct{}), make(chan struct{})}
		s := e.start(t, h, eventloop.Options{Loops: 1})
		client := dialServer(t, s)
		c := <-h.conns
		client.Write([]byte("x"))
		<-h.entered
		if err := c.AsyncWrite([]byte("late reply\n")); err != nil {
			close(h.open)
			t.Fatal(err)
		}
		halfClose(client)
		time.Sleep(50 * time.Millisecond)
		close(h.open)
		got := readToEOF(t, client)
		err := h.WaitClose(t)
		if delivered := string(got) == "late reply\n"; delivered != (err == nil) {
			t.Fatalf("peer got %q and OnClose %v: a clean close must mean the queued write was sent", got, err)
		}
	})
}

// TestConformHalfClosedPeerGetsEveryReply: a peer sends 20,000 requests
// for 1 KiB replies and half-closes at once; every reply still arrives,
// then a clean EOF, and OnClose reports a clean close.
func TestConformHalfClosedPeerGetsEveryReply(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		e.skipOn(t, "gnet", "gnet closes a connection as soon as a read finds EOF: replies beyond the socket buffer and input held back by backpressure are dropped (see the gnetengine doc)")
		const n = 20000
		h := &kilo{recorder: newRecorder()}
		s := e.start(t, h, eventloop.Options{Loops: 1})
		client := dialServer(t, s)
		go func() {
			client.Write(kiloRequests(n))
			halfClose(client)
		}()
		time.Sleep(100 * time.Millisecond) // let the output back up before reading
		readKilo(t, client, n)
		if err := h.WaitClose(t); err != nil {
			t.Fatalf("OnClose error %v, want nil", err)
		}
	})
}

// shutdownRecorder notes OnShutdown.
type shutdownRecorder struct {
	lines
	shut chan struct{}
}

func (h shutdownRecorder) OnShutdown() { close(h.shut) }

// TestConformShutdownAnswersDeepPipelines: 20,000 requests for 1 KiB
// replies (20 MiB, far more than the socket buffers) wait in the
// server's sockets, unanswered, when Shutdown begins, from one client or
// spread over 16. Every reply arrives in order, then a clean EOF; OnClose
// gets nil, OnShutdown runs, Serve returns nil and the port is closed.
func TestConformShutdownAnswersDeepPipelines(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		for _, clients := range []int{1, 16} {
			t.Run(fmt.Sprintf("clients=%d", clients), func(t *testing.T) {
				shutdownDeepPipelines(t, e, clients, 20000/clients)
			})
		}
	})
}

func shutdownDeepPipelines(t *testing.T, e engineCase, clients, each int) {
	h := &kilo{recorder: newRecorder()}
	shut := make(chan struct{})
	s := e.newServer(t, struct {
		*kilo
		shutdownRecorder
	}{h, shutdownRecorder{shut: shut}}, eventloop.Options{Loops: 1})
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	peers := make([]net.Conn, clients)
	var first *eventloop.Conn
	for i := range peers {
		peers[i] = dialServer(t, s)
		c := <-h.conns
		if first == nil {
			first = c
		}
	}
	// Stall the loop, so that every request is in the sockets, unanswered,
	// when Shutdown queues behind the stall.
	release := stall(t, first)
	req := kiloRequests(each)
	for _, p := range peers {
		go p.Write(req)
	}
	time.Sleep(100 * time.Millisecond)
	result := shutdownInBackground(s, 60*time.Second)
	time.Sleep(50 * time.Millisecond) // let Shutdown queue behind the stall
	release()
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			readKilo(t, p, each)
		}()
	}
	wg.Wait()
	if err := <-result; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve returned %v after a graceful shutdown", err)
	}
	<-shut
	errs := h.CloseErrs()
	if len(errs) != clients {
		t.Fatalf("%d closes, want %d", len(errs), clients)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatalf("close error %v, want nil", err)
		}
	}
	if c, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("the port still accepts after Shutdown")
	}
}

// TestConformShutdownKeepsAsyncRepliesOfDrainingConns: a connection still
// writing its output when Shutdown begins accepts AsyncWrite and Execute
// until it closes, and sends what they wrote first.
func TestConformShutdownKeepsAsyncRepliesOfDrainingConns(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		s := e.newServer(t, sizedReply{r}, eventloop.Options{Loops: 1, SocketSendBuffer: 4096})
		client := dialServer(t, s)
		c := <-r.conns
		const size = 1 << 20
		client.Write([]byte("1048576\n")) // a reply the client does not read yet
		time.Sleep(50 * time.Millisecond)
		shut := shutdownInBackground(s, 20*time.Second)
		time.Sleep(50 * time.Millisecond) // the drain has begun; the reply is still backed up
		expectTailsAfterDrain(t, c, client, shut, size)
	})
}

// TestConformShutdownDeadlineClosesStuckConnections: a peer that never
// reads cannot hold up Shutdown past its context; the connection closes
// with ErrServerClosed and Shutdown returns the context's error.
func TestConformShutdownDeadlineClosesStuckConnections(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		r := newRecorder()
		s := e.newServer(t, sizedReply{r}, eventloop.Options{SocketSendBuffer: 4096})
		c := dialServer(t, s)
		c.Write([]byte("8000000\n")) // 8 MB the client never reads
		time.Sleep(50 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown returned %v, want the deadline error", err)
		}
		if errs := r.CloseErrs(); len(errs) != 1 || !errors.Is(errs[0], eventloop.ErrServerClosed) {
			t.Fatalf("close errors %v, want one ErrServerClosed", errs)
		}
	})
}

// TestConformBalancers: with the loops idle, RoundRobin, LeastConnections
// and LoadAware spread connections evenly, as Counters shows.
func TestConformBalancers(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		for _, b := range []struct {
			name string
			bal  eventloop.Balancer
		}{{"roundrobin", &eventloop.RoundRobin{}}, {"leastconn", eventloop.LeastConnections{}}, {"loadaware", &eventloop.LoadAware{}}} {
			t.Run(b.name, func(t *testing.T) {
				if b.name == "loadaware" {
					e.skipOn(t, "native-tls", "the loops are not idle: the TLS records make each a little busy, and LoadAware weighs that, as it should")
				}
				s := e.start(t, lines{newRecorder()}, eventloop.Options{Loops: 2, Balancer: b.bal})
				for i := 0; i < 6; i++ {
					c := dialServer(t, s)
					c.Write([]byte("hi\n")) // a round trip: the connection is registered
					readFull(t, c, 3)
				}
				eventually(t, "six connections", func() bool { return s.NumConns() == 6 })
				st := s.Counters()
				if len(st) != 2 || st[0].Conns != 3 || st[1].Conns != 3 {
					t.Fatalf("Counters %+v, want 3 connections on each of 2 loops", st)
				}
			})
		}
	})
}

// oddBalancer always picks the last loop.
type oddBalancer struct{}

func (oddBalancer) Pick(loops []eventloop.LoopStat) int { return len(loops) - 1 }

// TestConformCustomBalancer: a Balancer of the user's own is used by the
// native engine and refused with a clear error by the gnet engine, which
// has no way to call it.
func TestConformCustomBalancer(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineCase) {
		o := eventloop.Options{Addr: "127.0.0.1:0", Loops: 2, Balancer: oddBalancer{}, Engine: e.engine}
		s, err := eventloop.NewServer(lines{newRecorder()}, o)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Start()
		if e.name == "gnet" {
			if err == nil || !strings.Contains(err.Error(), "oddBalancer") {
				s.Shutdown(context.Background())
				t.Fatalf("Start with a custom Balancer on gnet: %v, want an error naming it", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		defer s.Shutdown(context.Background())
		c := dialServer(t, s)
		c.Write([]byte("hi\n"))
		readFull(t, c, 3)
		if st := s.Counters(); st[1].Conns != 1 {
			t.Fatalf("Counters %+v, want the connection on loop 1", st)
		}
	})
}
