package slowconsumer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// lateCloseGrace is how long Run keeps asking PUBSUB NUMSUB, once publishing
// has stopped, for subscribers a server closes later than its PUBLISH
// replies show.
const lateCloseGrace = time.Second

// Run measures one round against the server at o.Addr whose process is
// o.PID, as the package documentation describes, and returns what it saw.
// The subscribers and the publisher are closed before it returns; cancelling
// ctx ends it early with an error.
func Run(ctx context.Context, o Options) (Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Result{}, err
	}
	res := Result{Subscribers: o.Subscribers, MessageSize: o.MessageSize}
	if res.BaselineRSS, err = readRSS(o.PID); err != nil {
		return res, fmt.Errorf("slowconsumer: server RSS: %w", err)
	}

	conns := &connSet{}
	defer conns.closeAll()
	stopOnCancel := context.AfterFunc(ctx, conns.interrupt)
	defer stopOnCancel()
	wrap := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("slowconsumer: %w (%v)", ctx.Err(), err)
		}
		return fmt.Errorf("slowconsumer: %w", err)
	}

	control, err := conns.dial(ctx, o.Addr, nil)
	if err != nil {
		return res, wrap(err)
	}
	res.PubsubLimit, _ = control.pubsubHardLimit() // a server that does not say gets the fallback
	if o.Publish == 0 {
		o.Publish = int64(o.LimitMultiple * float64(orFallback(res.PubsubLimit, fallbackLimit)))
	}

	peak := startSampler(o.PID, o.SampleEvery, res.BaselineRSS)
	subs := make([]*respConn, o.Subscribers)
	for i := range subs {
		if subs[i], err = conns.dial(ctx, o.Addr, recvBufferControl(o.RecvBuffer)); err != nil {
			peak.stop()
			return res, wrap(fmt.Errorf("subscriber %d: %w", i+1, err))
		}
		if err = subscribe(subs[i], o.Channel); err != nil {
			peak.stop()
			return res, wrap(fmt.Errorf("subscriber %d: %w", i+1, err))
		}
	}
	if n, err := control.numsub(o.Channel); err != nil || n != o.Subscribers {
		peak.stop()
		return res, wrap(fmt.Errorf("PUBSUB NUMSUB %s = %d, %v; want the %d subscribers just confirmed", o.Channel, n, err, o.Subscribers))
	}

	pub, err := conns.dial(ctx, o.Addr, nil)
	if err != nil {
		peak.stop()
		return res, wrap(err)
	}
	st, err := publish(pub, o.Channel, o.MessageSize, o.Publish, o.Subscribers)
	res.PublishedBytes, res.PublishMaxLatency, res.Elapsed = st.acked, st.maxLatency, st.elapsed
	if err != nil {
		peak.stop()
		return res, wrap(err)
	}
	subscribed, err := awaitLateCloses(control, o.Channel, o.SampleEvery)
	if err != nil {
		peak.stop()
		return res, wrap(err)
	}
	res.Closed = o.Subscribers - subscribed
	res.ClosedAtBytes, res.ClosedAfter = st.closedAt, st.closedAfter
	for len(res.ClosedAtBytes) < res.Closed { // closed after the last PUBLISH reply counted them
		res.ClosedAtBytes = append(res.ClosedAtBytes, st.acked)
		res.ClosedAfter = append(res.ClosedAfter, st.elapsed)
	}
	// NUMSUB is the last word: a server may stop counting a receiver it
	// still keeps subscribed.
	res.ClosedAtBytes, res.ClosedAfter = res.ClosedAtBytes[:res.Closed], res.ClosedAfter[:res.Closed]

	for _, c := range append(subs, pub) {
		c.conn.Close() // unread bytes in the receive buffer make this an RST
	}
	select {
	case <-time.After(o.Settle):
	case <-ctx.Done():
		peak.stop()
		return res, wrap(errors.New("settling"))
	}
	res.AfterRSS, err = readRSS(o.PID)
	sampled, serr := peak.stop()
	res.PeakRSS = max(sampled, res.AfterRSS)
	if err = errors.Join(serr, err); err != nil {
		return res, wrap(fmt.Errorf("server RSS: %w", err))
	}
	return res, nil
}

// orFallback returns limit, or fallback when limit is 0 (no limit, or not known).
func orFallback(limit, fallback int64) int64 {
	if limit > 0 {
		return limit
	}
	return fallback
}

// awaitLateCloses polls PUBSUB NUMSUB until nobody is subscribed or
// lateCloseGrace has passed with the count unchanged, and returns the count.
func awaitLateCloses(control *respConn, channel string, every time.Duration) (int, error) {
	n, err := control.numsub(channel)
	for deadline := time.Now().Add(lateCloseGrace); err == nil && n > 0 && time.Now().Before(deadline); {
		time.Sleep(every)
		var m int
		if m, err = control.numsub(channel); err == nil && m != n {
			n, deadline = m, time.Now().Add(lateCloseGrace)
		}
	}
	return n, err
}

// connSet holds Run's connections so that cancelling its context can
// interrupt whatever read or write is blocked, from another goroutine.
type connSet struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (s *connSet) dial(ctx context.Context, addr string, control func(string, string, syscall.RawConn) error) (*respConn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, Control: control}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	return newRespConn(c), nil
}

// interrupt makes every blocked read and write on the set fail now.
func (s *connSet) interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.SetDeadline(time.Unix(1, 0))
	}
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}
