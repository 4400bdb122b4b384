package client

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"time"
)

// Options configures a Client. Only Addr is required.
type Options struct {
	// Addr is the server's host:port.
	Addr string
	// Username and Password authenticate each connection when it opens and
	// every time it reconnects (AUTH, or HELLO 3 AUTH with Protocol 3). An
	// empty Username with a Password is Redis's "default" user.
	Username string
	Password string
	// DB, when not 0, is SELECTed on every connection.
	DB int
	// Protocol is 2 (RESP2, the default) or 3 (RESP3, via HELLO 3). It
	// changes what Do returns for maps, doubles, booleans and big numbers.
	Protocol int

	// Conns is how many connections calls are spread over. Each connection
	// has one writer and one reader goroutine and pipelines every call
	// queued on it. Default: max(2, GOMAXPROCS).
	Conns int
	// MaxBatchBytes bounds one write: a connection sends everything queued
	// in writes of at most this many bytes (a single larger command is sent
	// alone). Default 64 KiB.
	MaxBatchBytes int

	// DialTimeout bounds connecting and the AUTH/HELLO handshake. Default 5 s.
	DialTimeout time.Duration
	// ReadTimeout is how long a connection may have calls outstanding
	// without receiving any reply before it is declared dead, its calls
	// failed and a reconnection started. It must exceed the longest command
	// you run (blocking commands such as BLPOP hold the whole connection).
	// Default 5 s; negative disables the check.
	ReadTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts, which doubles from MinBackoff up to MaxBackoff. Defaults
	// 10 ms and 1 s.
	MinBackoff time.Duration
	MaxBackoff time.Duration

	// Dialer, when set, opens connections instead of net.Dialer (for TLS,
	// Unix sockets or instrumented connections).
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

const (
	defaultMaxBatchBytes = 64 << 10
	defaultDialTimeout   = 5 * time.Second
	defaultReadTimeout   = 5 * time.Second
	defaultMinBackoff    = 10 * time.Millisecond
	defaultMaxBackoff    = time.Second
	maxConns             = 1024
)

// withDefaults validates o and fills in its zero fields.
func (o Options) withDefaults() (Options, error) {
	if o.Addr == "" {
		return o, fmt.Errorf("client: Options.Addr is empty")
	}
	switch o.Protocol {
	case 0:
		o.Protocol = 2
	case 2, 3:
	default:
		return o, fmt.Errorf("client: Options.Protocol %d is not 2 or 3", o.Protocol)
	}
	if o.Conns < 0 || o.Conns > maxConns {
		return o, fmt.Errorf("client: Options.Conns %d is outside 0..%d", o.Conns, maxConns)
	}
	if o.Conns == 0 {
		o.Conns = max(2, runtime.GOMAXPROCS(0))
	}
	if o.MaxBatchBytes < 0 {
		return o, fmt.Errorf("client: Options.MaxBatchBytes %d is negative", o.MaxBatchBytes)
	}
	if o.MaxBatchBytes == 0 {
		o.MaxBatchBytes = defaultMaxBatchBytes
	}
	if o.DB < 0 {
		return o, fmt.Errorf("client: Options.DB %d is negative", o.DB)
	}
	if o.DialTimeout < 0 {
		return o, fmt.Errorf("client: Options.DialTimeout %v is negative", o.DialTimeout)
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = defaultDialTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = defaultReadTimeout
	}
	if o.MinBackoff < 0 || o.MaxBackoff < 0 {
		return o, fmt.Errorf("client: Options.MinBackoff %v or MaxBackoff %v is negative", o.MinBackoff, o.MaxBackoff)
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = defaultMinBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = defaultMaxBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.Dialer == nil {
		d := &net.Dialer{KeepAlive: 30 * time.Second}
		o.Dialer = d.DialContext
	}
	return o, nil
}
