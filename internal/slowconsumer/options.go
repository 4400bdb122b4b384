package slowconsumer

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// Defaults used for the zero fields of Options.
const (
	DefaultMessageSize = 100_000
	DefaultRecvBuffer  = 4096
	DefaultSettle      = 10 * time.Second
	DefaultSampleEvery = 20 * time.Millisecond
	// DefaultLimitMultiple is how many times the server's pubsub hard limit
	// is published when Options.Publish is zero: enough that every subscriber
	// would receive well over its limit.
	DefaultLimitMultiple = 3
	// fallbackLimit stands in for the pubsub hard limit when the server has
	// none (0) or does not say: Redis's default, 32 MiB.
	fallbackLimit = 32 << 20
	// PublishInFlight is how many PUBLISHes the publisher keeps unanswered.
	PublishInFlight = 16
)

// Options says what to measure. Addr and PID are required; zero values of the
// others take the defaults documented on each field.
type Options struct {
	// Addr is the server's TCP address, host:port.
	Addr string
	// PID is the server's process, whose VmRSS is sampled.
	PID int
	// Subscribers is how many slow subscribers to open (default 1).
	Subscribers int
	// Channel is the channel they subscribe to (default a name unique to
	// this process and moment, so no other client's subscription counts).
	Channel string
	// MessageSize is the payload of each PUBLISH in bytes (default 100 000).
	MessageSize int
	// Publish is how many payload bytes to publish in all, each of which
	// every subscriber would receive. The default is LimitMultiple times
	// the server's pubsub hard limit (CONFIG GET client-output-buffer-limit;
	// 32 MiB if it has none or does not say).
	Publish int64
	// LimitMultiple sets the default of Publish (default 3).
	LimitMultiple float64
	// RecvBuffer is the subscribers' SO_RCVBUF, set before connecting so the
	// TCP window is small from the start (default 4096; the kernel doubles
	// it and applies its minimum).
	RecvBuffer int
	// Settle is how long to wait after closing the subscribers before
	// reading the server's RSS again (default 10 s).
	Settle time.Duration
	// SampleEvery is the RSS sampling period (default 20 ms).
	SampleEvery time.Duration
}

// ErrUnsupported is returned by Run where /proc/PID/status cannot be read the
// Linux way.
var ErrUnsupported = errors.New("slowconsumer: reading a server's RSS needs Linux's /proc")

func (o Options) withDefaults() (Options, error) {
	if o.Addr == "" {
		return o, errors.New("slowconsumer: Options.Addr is empty")
	}
	if o.PID <= 0 {
		return o, fmt.Errorf("slowconsumer: Options.PID %d is not a process id", o.PID)
	}
	if o.Subscribers < 0 || o.MessageSize < 0 || o.Publish < 0 || o.RecvBuffer < 0 || o.LimitMultiple < 0 {
		return o, fmt.Errorf("slowconsumer: negative option in %+v", o)
	}
	if o.Subscribers == 0 {
		o.Subscribers = 1
	}
	if o.Channel == "" {
		o.Channel = fmt.Sprintf("slowconsumer.%d.%d", os.Getpid(), time.Now().UnixNano())
	}
	if o.MessageSize == 0 {
		o.MessageSize = DefaultMessageSize
	}
	if o.LimitMultiple == 0 {
		o.LimitMultiple = DefaultLimitMultiple
	}
	if o.RecvBuffer == 0 {
		o.RecvBuffer = DefaultRecvBuffer
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.SampleEvery <= 0 {
		o.SampleEvery = DefaultSampleEvery
	}
	return o, nil
}
