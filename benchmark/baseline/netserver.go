package baseline

import (
	"bufio"
	"errors"
	"net"
	"sync"

	"github.com/shoalkv/shoal/proto/resp"
)

// maxQueryBuffer bounds one connection's unparsed input, as Redis's client-query-buffer-limit.
const maxQueryBuffer = 1 << 30

// NetServer serves one goroutine per connection on package net.
type NetServer struct {
	store *Store
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// ListenNet starts a NetServer on addr ("127.0.0.1:0" picks a port).
func ListenNet(addr string, st *Store) (*NetServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &NetServer{store: st, ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr returns the listening address.
func (s *NetServer) Addr() net.Addr { return s.ln.Addr() }

// Close stops accepting, closes every connection and waits for their goroutines.
func (s *NetServer) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *NetServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. EMFILE: keep serving the connections we have
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *NetServer) serve(c net.Conn) {
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	var p resp.Parser
	in := make([]byte, 16<<10)
	r, w := 0, 0 // unparsed input is in[r:w]
	bw := bufio.NewWriterSize(c, 16<<10)
	for {
		for r < w {
			args, n, err := p.Parse(in[r:w])
			if err == resp.ErrIncomplete {
				break
			}
			if err != nil { // a protocol error ends the connection, as in Redis
				bw.Write(resp.AppendError(bw.AvailableBuffer(), err.Error()))
				bw.Flush()
				return
			}
			r += n
			if len(args) > 0 {
				bw.Write(Execute(s.store, args, bw.AvailableBuffer()))
			}
		}
		// No complete command left: this is the moment to send the batch of replies.
		if bw.Buffered() > 0 {
			if bw.Flush() != nil {
				return
			}
		}
		switch {
		case r == w:
			r, w = 0, 0
		case r > 0:
			w = copy(in, in[r:w])
			r = 0
		case w == len(in):
			if len(in) >= maxQueryBuffer {
				return
			}
			in = append(in, make([]byte, len(in))...)
		}
		n, err := c.Read(in[w:])
		if n == 0 && err != nil {
			return
		}
		w += n
	}
}
