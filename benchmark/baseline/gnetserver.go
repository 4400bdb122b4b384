package baseline

import (
	"context"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/shoalkv/shoal/proto/resp"
)

// GnetServer serves on gnet v2 event loops (one per CPU).
type GnetServer struct {
	gnet.BuiltinEventEngine
	store  *Store
	addr   string
	eng    gnet.Engine
	booted chan struct{}
	done   chan error
}

// quietLogger drops gnet's start-up chatter and keeps its warnings and errors.
type quietLogger struct{}

func (quietLogger) Debugf(string, ...any) {}
func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Warnf(f string, a ...any) {
	log.Printf("gnet: "+f, a...)
}
func (quietLogger) Errorf(f string, a ...any) {
	log.Printf("gnet: "+f, a...)
}
func (quietLogger) Fatalf(f string, a ...any) {
	log.Fatalf("gnet: "+f, a...)
}

// gnetConn is one connection's state, owned by its event loop.
type gnetConn struct {
	parser resp.Parser
	out    []byte // replies of the current OnTraffic, reused
}

// ListenGnet starts a GnetServer on addr, which needs an explicit port: gnet does not
// report the one the kernel picks.
func ListenGnet(addr string, st *Store) (*GnetServer, error) {
	s := &GnetServer{store: st, addr: addr, booted: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		s.done <- gnet.Run(s, "tcp://"+addr, gnet.WithMulticore(true),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay), gnet.WithLogger(quietLogger{}))
	}()
	select {
	case <-s.booted:
		return s, nil
	case err := <-s.done:
		return nil, fmt.Errorf("gnet on %s: %w", addr, err)
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("gnet on %s did not start in 10s", addr)
	}
}

// Addr returns the listening address.
func (s *GnetServer) Addr() net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", s.addr)
	return a
}

// Close stops the engine and waits for it.
func (s *GnetServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.eng.Stop(ctx); err != nil {
		return err
	}
	return <-s.done
}

// OnBoot implements gnet.EventHandler.
func (s *GnetServer) OnBoot(eng gnet.Engine) gnet.Action {
	s.eng = eng
	close(s.booted)
	return gnet.None
}

// OnOpen implements gnet.EventHandler.
func (s *GnetServer) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	c.SetContext(&gnetConn{})
	return nil, gnet.None
}

// OnTraffic parses every complete command gnet has buffered and answers them with one
// Write.
func (s *GnetServer) OnTraffic(c gnet.Conn) gnet.Action {
	gc := c.Context().(*gnetConn)
	in, _ := c.Peek(-1)
	out := gc.out[:0]
	consumed := 0
	action := gnet.None
	for consumed < len(in) {
		args, n, err := gc.parser.Parse(in[consumed:])
		if err == resp.ErrIncomplete {
			break
		}
		if err != nil {
			out = resp.AppendError(out, err.Error())
			consumed = len(in)
			action = gnet.Close
			break
		}
		consumed += n
		if len(args) > 0 {
			out = Execute(s.store, args, out)
		}
	}
	if len(in) > maxQueryBuffer {
		action = gnet.Close
	}
	if consumed > 0 {
		c.Discard(consumed) // Discard(0) would drop everything, including a partial command
	}
	if len(out) > 0 {
		c.Write(out)
	}
	if cap(out) > 1<<20 {
		out = nil // don't pin a burst's buffer for the life of the connection
	}
	gc.out = out[:0]
	return action
}
