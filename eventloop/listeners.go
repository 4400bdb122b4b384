package eventloop

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Listener is an address a Server serves besides Options.Addr, with a
// Handler of its own: one Server, one set of loops and one Balancer for
// several protocols, as nginx serves several listen directives. Its
// connections share the loops, Options.MaxConns and every other limit with
// the main address's; only the Handler (and its optional hooks: OnOpen,
// OnClose, OnBoot, OnShutdown) differs.
type Listener struct {
	Network string  // "tcp" (default), "tcp4", "tcp6" or "unix"
	Addr    string  // "127.0.0.1:8080" or a socket path
	Handler Handler // serves every connection accepted on Addr

	// RejectMessage is written to a connection this listener accepts
	// beyond Options.MaxConns before it is closed; nil writes nothing.
	// Options.RejectMessage is the main address's, in its protocol.
	RejectMessage []byte

	// TLSConfig, when set, makes Addr a TLS port, as Options.TLSConfig
	// does for the main address.
	TLSConfig *tls.Config
}

// listener is one address being served and the Handler hooks of its
// connections. Immutable once the Server has started, except bound.
type listener struct {
	network    string
	addr       string
	handler    Handler
	onOpen     OpenHandler
	onClose    CloseHandler
	onShutdown ShutdownHandler
	onDrain    DrainHandler
	readAhead  ReadAheadHandler // nil when the handler is not one, or the port is TLS
	reject     []byte
	tls        *tls.Config // nil: plaintext; else a copy of the caller's (tlsListenerConfig)
	bound      net.Addr    // set in Start, under Server.mu
}

func newListener(network, addr string, h Handler, reject []byte, tc *tls.Config) *listener {
	ln := &listener{network: network, addr: addr, handler: h, reject: reject}
	if tc != nil {
		ln.tls = tlsListenerConfig(tc)
		ln.reject = nil // a TLS client cannot read a plaintext message
	}
	ln.onOpen, _ = h.(OpenHandler)
	ln.onClose, _ = h.(CloseHandler)
	ln.onShutdown, _ = h.(ShutdownHandler)
	ln.onDrain, _ = h.(DrainHandler)
	ln.readAhead, _ = h.(ReadAheadHandler)
	return ln
}

// listenSocket is one listening descriptor of a listener and the accept
// backoff of the goroutine that polls it (the acceptor, or with ReusePort
// the loop that owns it). Owned by that goroutine.
type listenSocket struct {
	fd      int
	ln      *listener
	backoff acceptBackoff
}

// extraListeners checks Options.Listeners and returns them as listeners.
func extraListeners(o *Options) ([]*listener, error) {
	var out []*listener
	for i, l := range o.Listeners {
		if l.Handler == nil {
			return nil, fmt.Errorf("eventloop: Options.Listeners[%d] (%q) has a nil Handler", i, l.Addr)
		}
		network := l.Network
		if network == "" {
			network = "tcp"
		}
		switch network {
		case "tcp", "tcp4", "tcp6":
		case "unix":
			if o.ReusePort {
				return nil, fmt.Errorf("eventloop: Options.Listeners[%d]: ReusePort needs a tcp network, not unix", i)
			}
		default:
			return nil, fmt.Errorf("eventloop: Options.Listeners[%d]: unsupported network %q (want tcp, tcp4, tcp6 or unix)", i, network)
		}
		if l.Addr == "" {
			return nil, fmt.Errorf("eventloop: Options.Listeners[%d].Addr is empty", i)
		}
		out = append(out, newListener(network, l.Addr, l.Handler, l.RejectMessage, l.TLSConfig))
	}
	return out, nil
}

// bindListeners opens every listener's socket: one for the acceptor, or
// with ReusePort one per loop (later loops join the port the first got).
func (s *Server) bindListeners() error {
	for _, ln := range s.listeners {
		addr := ln.addr
		if !s.opts.ReusePort {
			fd, a, err := listen(ln.network, addr, false)
			if err != nil {
				return err
			}
			ln.bound = a
			s.sockets = append(s.sockets, &listenSocket{fd: fd, ln: ln})
			continue
		}
		for i, l := range s.loops {
			fd, a, err := listen(ln.network, addr, true)
			if err != nil {
				return err
			}
			l.sockets = append(l.sockets, &listenSocket{fd: fd, ln: ln})
			if i == 0 {
				ln.bound, addr = a, a.String()
			}
			if err := l.poller.add(fd, true, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// socketFor returns the listening socket with descriptor fd, or nil. Lists
// hold one entry per listener, so a scan is cheapest.
func socketFor(sockets []*listenSocket, fd int) *listenSocket {
	for _, ls := range sockets {
		if ls.fd == fd {
			return ls
		}
	}
	return nil
}

// closeSockets closes every listening descriptor in sockets and empties it.
func closeSockets(sockets []*listenSocket) []*listenSocket {
	for _, ls := range sockets {
		unix.Close(ls.fd)
	}
	return sockets[:0]
}

// removeSocketFiles removes the socket files of the unix listeners that
// were bound (abstract sockets, "@name", have none).
func (s *Server) removeSocketFiles() {
	for _, ln := range s.listeners {
		if ln.network == "unix" && !strings.HasPrefix(ln.addr, "@") && ln.bound != nil {
			_ = os.Remove(ln.addr)
		}
	}
}

// Addrs returns the addresses the server listens on: Options.Addr's first,
// then each of Options.Listeners' in order, with the ports the kernel chose
// for ":0". It returns nil before Start.
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr == nil {
		return nil
	}
	out := make([]net.Addr, len(s.listeners))
	for i, ln := range s.listeners {
		out[i] = ln.bound
	}
	return out
}
