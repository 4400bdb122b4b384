package eventloop

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"
)

// Options configures a Server. The zero value of every field selects the
// documented default.
type Options struct {
	Network          string        // "tcp" (default), "tcp4", "tcp6" or "unix"
	Addr             string        // "127.0.0.1:6379" or a socket path
	Loops            int           // default runtime.GOMAXPROCS(0)
	ReusePort        bool          // one SO_REUSEPORT listener per loop instead of one acceptor (tcp only)
	Balancer         Balancer      // default LoadAware
	ReadBufferSize   int           // per-loop shared read buffer, default 64 KiB
	FlushThreshold   int           // flush output early past this many bytes, default 64 KiB
	OutputHighWater  int           // stop reading c above this much pending output, default 4 MiB
	OutputLowWater   int           // resume reading below this, default 1 MiB
	OutputHardLimit  int           // close c when a write finds more than this unsent (a peer not reading), default 64 MiB
	MaxInboundBuffer int           // close c when unconsumed inbound bytes exceed this, default 64 MiB
	MaxConns         int           // 0 = unlimited; extra connections get RejectMessage then close
	RejectMessage    []byte        // e.g. "-ERR max number of clients reached\r\n"
	IdleTimeout      time.Duration // 0 = none
	TCPKeepAlive     time.Duration // 0 = off
	Logger           *slog.Logger  // default slog.Default()
	Engine           Engine        // nil: the native engine; gnetengine.Engine{} serves the same Handler on gnet v2

	// SocketSendBuffer and SocketRecvBuffer set SO_SNDBUF and SO_RCVBUF on
	// every accepted socket when positive; 0 keeps the kernel's default.
	SocketSendBuffer int
	SocketRecvBuffer int

	// Listeners are more addresses to serve, each with its own Handler,
	// on the same loops; see Listener.
	Listeners []Listener

	// TLSConfig, when set, makes Addr a TLS port: the loops run the
	// handshake and the records (see "TLS" in the package documentation)
	// and the Handler sees plaintext. It needs a certificate
	// (Certificates, GetCertificate or GetConfigForClient). A
	// Listener has its own TLSConfig.
	TLSConfig *tls.Config
	// TLSHandshakeTimeout closes a connection whose TLS handshake has not
	// finished this long after it was accepted; default 10 s.
	TLSHandshakeTimeout time.Duration
	// MaxTLSHandshakes bounds the handshakes in progress at once, each on
	// a goroutine of its own; more wait their turn. Default 512.
	MaxTLSHandshakes int
}

// DefaultFlushThreshold is Options.FlushThreshold's default. A Handler that
// batches replies of its own before handing them to the Conn (as kv does
// within one OnTraffic call) should hand them over at the Server's
// Options().FlushThreshold, this value unless the embedder set another.
const DefaultFlushThreshold = 64 << 10

const (
	defaultReadBufferSize = 64 << 10
	defaultHighWater      = 4 << 20
	defaultLowWater       = 1 << 20
	defaultHardLimit      = 64 << 20
	defaultMaxInbound     = 64 << 20
)

// withDefaults returns a copy of o with defaults filled in, or an error
// naming the offending value.
func (o Options) withDefaults() (Options, error) {
	if o.Network == "" {
		o.Network = "tcp"
	}
	switch o.Network {
	case "tcp", "tcp4", "tcp6":
		if o.Addr == "" {
			return o, errors.New("eventloop: Options.Addr is empty")
		}
	case "unix":
		if o.Addr == "" {
			return o, errors.New("eventloop: Options.Addr (socket path) is empty")
		}
		if o.ReusePort {
			return o, errors.New("eventloop: ReusePort needs a tcp network, not unix")
		}
	default:
		return o, fmt.Errorf("eventloop: unsupported network %q (want tcp, tcp4, tcp6 or unix)", o.Network)
	}
	if o.Loops < 0 {
		return o, fmt.Errorf("eventloop: Loops %d is negative", o.Loops)
	}
	if o.Loops == 0 {
		o.Loops = runtime.GOMAXPROCS(0)
	}
	if o.Balancer == nil {
		o.Balancer = &LoadAware{}
	}
	def := func(v *int, d int, name string) error {
		if *v < 0 {
			return fmt.Errorf("eventloop: %s %d is negative", name, *v)
		}
		if *v == 0 {
			*v = d
		}
		return nil
	}
	for _, f := range []struct {
		v    *int
		d    int
		name string
	}{
		{&o.ReadBufferSize, defaultReadBufferSize, "ReadBufferSize"},
		{&o.FlushThreshold, DefaultFlushThreshold, "FlushThreshold"},
		{&o.OutputHighWater, defaultHighWater, "OutputHighWater"},
		{&o.OutputLowWater, defaultLowWater, "OutputLowWater"},
		{&o.OutputHardLimit, defaultHardLimit, "OutputHardLimit"},
		{&o.MaxInboundBuffer, defaultMaxInbound, "MaxInboundBuffer"},
	} {
		if err := def(f.v, f.d, f.name); err != nil {
			return o, err
		}
	}
	if o.OutputLowWater > o.OutputHighWater {
		o.OutputLowWater = o.OutputHighWater / 2
	}
	if o.OutputHighWater > o.OutputHardLimit {
		return o, fmt.Errorf("eventloop: OutputHighWater %d exceeds OutputHardLimit %d", o.OutputHighWater, o.OutputHardLimit)
	}
	if o.MaxConns < 0 {
		return o, fmt.Errorf("eventloop: MaxConns %d is negative", o.MaxConns)
	}
	if o.IdleTimeout < 0 {
		return o, fmt.Errorf("eventloop: IdleTimeout %v is negative", o.IdleTimeout)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := o.tlsDefaults(); err != nil {
		return o, err
	}
	return o, nil
}

// Errors reported by the package. Errors passed to OnClose for limit
// violations wrap ErrOutputLimit, ErrInboundLimit or ErrIdleTimeout and name
// the value and the limit.
var (
	// ErrConnClosed is returned by operations on a closed connection.
	ErrConnClosed = errors.New("eventloop: connection closed")
	// ErrServerClosed is returned by operations on a server that is shut down.
	ErrServerClosed = errors.New("eventloop: server closed")
	// ErrOutputLimit means a connection's pending output passed its limit:
	// OutputHardLimit, or one set with Conn.SetOutputLimit.
	ErrOutputLimit = errors.New("eventloop: unsent output over the limit")
	// ErrInboundLimit means a connection's unconsumed input passed MaxInboundBuffer.
	ErrInboundLimit = errors.New("eventloop: unconsumed input exceeds MaxInboundBuffer")
	// ErrIdleTimeout means a connection saw no traffic for IdleTimeout.
	ErrIdleTimeout = errors.New("eventloop: idle timeout")
)
