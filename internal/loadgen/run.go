package loadgen

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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

// dialAll opens cfg.Conns connections, spreading them over cfg.Sources. Failed dials are
// counted by error kind; the run goes on with the connections that opened.
func dialAll(ctx context.Context, cfg *Config) ([]net.Conn, map[string]int64) {
	conns := make([]net.Conn, cfg.Conns)
	errs := make([]error, cfg.Conns)
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
				d := net.Dialer{Timeout: cfg.Timeout}
				if len(cfg.Sources) > 0 {
					d.LocalAddr = &net.TCPAddr{IP: cfg.Sources[i%len(cfg.Sources)]}
				}
				conns[i], errs[i] = d.DialContext(ctx, "tcp", cfg.Addr)
			}
		}()
	}
	wg.Wait()
	kinds := map[string]int64{}
	var ok []net.Conn
	for i, c := range conns {
		if errs[i] != nil {
			kinds["dial: "+ioErrorKind(errs[i])]++
			continue
		}
		if c != nil {
			ok = append(ok, c)
		}
	}
	return ok, kinds
}

// run executes one load run and returns its report. Progress and the measuring/done
// markers go to progress (nil = none).
func Run(ctx context.Context, cfg *Config, progress io.Writer) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	proto, err := newProtocol(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	st := &runState{cfg: cfg, proto: proto, base: time.Now()}
	for op := range numOps {
		st.tpls[op] = proto.template(op, cfg.ValueSize)
		st.maxRequestLen = max(st.maxRequestLen, len(st.tpls[op].bytes))
	}
	st.lat = newLatencyShards(4 * runtime.GOMAXPROCS(0))

	conns, errKinds := dialAll(ctx, cfg)
	if len(conns) == 0 {
		return nil, fmt.Errorf("no connection to %s could be opened: %v", cfg.Addr, errKinds)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	st.start = st.now()
	st.measureStart = st.start + int64(cfg.Warmup)
	if cfg.Requests == 0 {
		st.deadline = st.measureStart + int64(cfg.Duration)
	} else if cfg.Rate == 0 {
		st.limit = cfg.Requests
	}
	workers := make([]*worker, len(conns))
	for i, c := range conns {
		w := newWorker(st, c, i)
		if cfg.Rate > 0 {
			scheduleOpen(st, w, i, len(conns))
		}
		workers[i] = w
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

	rep := newReport(cfg, st, len(conns))
	for k, v := range errKinds {
		rep.addError(k, v)
	}
	var last int64
	for i, w := range workers {
		rep.Requests += w.done
		last = max(last, w.lastDone)
		for _, e := range w.errKinds {
			rep.addError(e.kind, e.n)
		}
		if results[i] != nil && !st.stop.Load() {
			rep.addError(ioErrorKind(results[i]), 1)
		}
	}
	rep.finish(st.lat.merged(), time.Duration(last-st.measureStart))
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
