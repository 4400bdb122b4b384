package loadgen

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// runState is shared by all workers of one run. Times are nanoseconds since base, read
// from the monotonic clock.
type runState struct {
	cfg           *Config
	proto         protocol
	tpls          [numOps]requestTemplate
	maxRequestLen int
	base          time.Time
	start         int64 // when workers begin sending
	measureStart  int64 // start + warmup
	deadline      int64 // measureStart + duration; 0 with -n
	limit         int64 // closed loop -n: measured requests to claim; 0 = none
	claimed       atomic.Int64
	completed     atomic.Int64 // measured replies so far, for the progress line
	stop          atomic.Bool
	lat           *latencyShards
}

func (st *runState) now() int64 { return int64(time.Since(st.base)) }

// dialParallelism bounds concurrent dials so 100k connections neither take forever nor
// overflow the server's accept backlog.
const dialParallelism = 128

// Session is one run split into its stages, for callers that report between them (the
// stress rig): Dial, optionally Verify, then Load, then Close. Run is all of it in one call.
// Connected and Snapshot may be called from any goroutine while a stage runs.
type Session struct {
	st    *runState
	conns []net.Conn // by connection index; nil where the dial or the check failed

	connected atomic.Int64
	failed    atomic.Int64
	mu        sync.Mutex       // guards errKinds
	errKinds  map[string]int64 // dial and check failures by kind
}

// NewSession validates cfg and prepares a session; it opens nothing yet.
func NewSession(cfg *Config) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	proto, err := newProtocol(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Mix {
		if len(proto.template(w.Op, cfg.ValueSize).bytes) == 0 {
			return nil, fmt.Errorf("-proto %s cannot send %s", cfg.Protocol, w.Op)
		}
	}
	st := &runState{cfg: cfg, proto: proto, base: time.Now()}
	for op := range numOps {
		st.tpls[op] = proto.template(op, cfg.ValueSize)
		st.maxRequestLen = max(st.maxRequestLen, len(st.tpls[op].bytes))
	}
	st.lat = newLatencyShards(4 * runtime.GOMAXPROCS(0))
	return &Session{st: st, errKinds: map[string]int64{}}, nil
}

// Connected returns how many connections are open and how many dials or checks failed
// so far.
func (s *Session) Connected() (open, failed int64) { return s.connected.Load(), s.failed.Load() }

// Snapshot returns the measured replies so far and a copy of their latency histogram
// (nanoseconds), cumulative since the load began.
func (s *Session) Snapshot() (completed int64, latency *hdrhistogram.Histogram) {
	return s.st.completed.Load(), s.st.lat.merged()
}

func (s *Session) countFailure(kind string) {
	s.failed.Add(1)
	s.mu.Lock()
	s.errKinds[kind]++
	s.mu.Unlock()
}

// Dial opens cfg.Conns connections, spreading them over cfg.Sources and cfg.Addrs, at
// most cfg.DialRate new connections a second when that is set. Failed dials are counted
// by error kind; the session goes on with the connections that opened. It fails only if
// none did.
func (s *Session) Dial(ctx context.Context) error {
	cfg := s.st.cfg
	s.conns = make([]net.Conn, cfg.Conns)
	addrs := cfg.Addrs
	if len(addrs) == 0 {
		addrs = []string{cfg.Addr}
	}
	began := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(dialParallelism, cfg.Conns) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.Conns || ctx.Err() != nil {
					return
				}
				if cfg.DialRate > 0 {
					due := began.Add(time.Duration(float64(i) / cfg.DialRate * 1e9))
					if wait := time.Until(due); wait > 0 {
						select {
						case <-time.After(wait):
						case <-ctx.Done():
							return
						}
					}
				}
				d := net.Dialer{Timeout: cfg.Timeout}
				if len(cfg.Sources) > 0 {
					d.LocalAddr = &net.TCPAddr{IP: cfg.Sources[i%len(cfg.Sources)]}
				}
				c, err := d.DialContext(ctx, "tcp", addrs[i%len(addrs)])
				if err != nil {
					s.countFailure("dial: " + ioErrorKind(err))
					continue
				}
				s.conns[i] = c
				s.connected.Add(1)
			}
		}()
	}
	wg.Wait()
	if s.connected.Load() == 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return fmt.Errorf("no connection to %s could be opened: %v", strings.Join(addrs, ","), s.errKinds)
	}
	return ctx.Err()
}

// Close closes every connection.
func (s *Session) Close() {
	for i, c := range s.conns {
		if c != nil {
			c.Close()
			s.conns[i] = nil
		}
	}
}

// Run executes one load run and returns its report. Progress and the measuring/done
// markers go to progress (nil = none).
func Run(ctx context.Context, cfg *Config, progress io.Writer) (*Report, error) {
	s, err := NewSession(cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := s.Dial(ctx); err != nil && s.connected.Load() == 0 {
		return nil, err
	}
	return s.Load(ctx, progress)
}

// Load runs the configured load over the open connections and returns the report, which
// also counts the failures of Dial and Verify.
func (s *Session) Load(ctx context.Context, progress io.Writer) (*Report, error) {
	st, cfg := s.st, s.st.cfg
	var workers []*worker
	for i, c := range s.conns {
		if c != nil {
			workers = append(workers, newWorker(st, c, i))
		}
	}
	if len(workers) == 0 {
		return nil, fmt.Errorf("no open connection to load")
	}
	st.start = st.now()
	st.measureStart = st.start + int64(cfg.Warmup)
	if cfg.Requests == 0 {
		st.deadline = st.measureStart + int64(cfg.Duration)
	} else if cfg.Rate == 0 {
		st.limit = cfg.Requests
	}
	if cfg.Rate > 0 {
		for i, w := range workers {
			scheduleOpen(st, w, i, len(workers))
		}
	}

	stopWatch := context.AfterFunc(ctx, func() { st.stop.Store(true) })
	defer stopWatch()
	prog := newProgress(progress, st)
	go prog.loop()

	results := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cfg.Rate > 0 {
				results[i] = w.runOpen()
			} else {
				results[i] = w.runClosed()
			}
			w.samples.flush()
		}()
	}
	wg.Wait()
	prog.finish()

	rep := newReport(cfg, st, len(workers))
	s.mu.Lock()
	for k, v := range s.errKinds {
		rep.addError(k, v)
	}
	s.mu.Unlock()
	var last int64
	for i, w := range workers {
		if w.done == 0 {
			rep.Silent++
		}
		rep.Requests += w.done
		last = max(last, w.lastDone)
		for _, e := range w.errKinds {
			rep.addError(e.kind, e.n)
		}
		if results[i] != nil && !st.stop.Load() {
			rep.addError(ioErrorKind(results[i]), 1)
		}
	}
	h := st.lat.merged()
	rep.finish(h, time.Duration(last-st.measureStart))
	if cfg.ExportHistogram {
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return nil, fmt.Errorf("encoding the latency histogram: %w", err)
		}
		rep.Histogram = string(enc)
	}
	return rep, nil
}

// scheduleOpen gives worker i of n its share of the rate, phase-shifted so the
// connections' sends interleave evenly instead of arriving together.
func scheduleOpen(st *runState, w *worker, i, n int) {
	cfg := st.cfg
	interval := float64(n) * 1e9 / cfg.Rate
	s := openSchedule{t0: st.start + int64(interval*float64(i)/float64(n)), interval: interval}
	if st.measureStart > s.t0 {
		// first index whose due time is at or after measureStart
		s.first = int64(float64(st.measureStart-s.t0) / interval)
		for s.due(s.first) < st.measureStart {
			s.first++
		}
	}
	if cfg.Requests > 0 {
		share := cfg.Requests / int64(n)
		if int64(i) < cfg.Requests%int64(n) {
			share++
		}
		s.limit = s.first + share
	}
	w.open = s
}
