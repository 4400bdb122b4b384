package tcptest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a goroutine-per-connection TCP server on a loopback port: the
// fake peer of a test (a scripted Redis, the net baseline of a benchmark).
type Server struct {
	ln       net.Listener
	accepted atomic.Int64
	wg       sync.WaitGroup // the accept loop and every serve call
	once     sync.Once

	mu    sync.Mutex
	conns map[net.Conn]struct{} // open connections, closed by Close
}

// Serve listens on a loopback port and calls serve(c, n) for the nth
// connection accepted (from 1), each in a goroutine of its own; c is
// closed when serve returns. The server is closed when the test ends.
func Serve(t testing.TB, serve func(c net.Conn, n int64)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept(serve)
	t.Cleanup(s.Close)
	return s
}

func (s *Server) accept(serve func(c net.Conn, n int64)) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		n := s.accepted.Add(1)
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			serve(c, n)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Addr returns the address the server listens on, as "127.0.0.1:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Accepted returns how many connections the server has accepted.
func (s *Server) Accepted() int64 { return s.accepted.Load() }

// Close stops accepting, closes every open connection and waits until
// every serve call has returned. Calls after the first do nothing.
func (s *Server) Close() {
	s.once.Do(func() {
		s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}
