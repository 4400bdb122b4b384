package loadgen

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Marker lines on the progress stream. benchmark/cmd/compare waits for them to sample the
// server's CPU time over exactly the measured interval.
const (
	MarkerMeasuring = "shoal-load: measuring"
	MarkerDone      = "shoal-load: done"
)

// progress prints the live line and the markers. Its loop goroutine owns everything
// except finish's handshake.
type progress struct {
	out  io.Writer
	st   *runState
	tty  bool
	quit chan struct{}
	wg   sync.WaitGroup
}

func newProgress(out io.Writer, st *runState) *progress {
	p := &progress{out: out, st: st, quit: make(chan struct{})}
	if f, ok := out.(*os.File); ok {
		p.tty = isTerminal(int(f.Fd()))
	}
	p.wg.Add(1)
	return p
}

func (p *progress) loop() {
	defer p.wg.Done()
	if p.out == nil {
		return
	}
	st := p.st
	period := st.cfg.Progress
	if period <= 0 {
		period = time.Hour // markers only
	}
	measuring := time.NewTimer(time.Duration(st.measureStart - st.now()))
	defer measuring.Stop()
	tick := time.NewTicker(period)
	defer tick.Stop()
	lastAt, lastDone := st.now(), int64(0)
	for {
		select {
		case <-p.quit:
			return
		case <-measuring.C:
			p.line(MarkerMeasuring)
			lastAt, lastDone = st.now(), st.completed.Load()
		case <-tick.C:
			now, done := st.now(), st.completed.Load()
			if now < st.measureStart {
				p.redraw(fmt.Sprintf("warmup %.1fs", float64(now-st.start)/1e9))
				continue
			}
			if now-lastAt < int64(period)/2 {
				continue // the measuring marker just reset the window; a rate over it is noise
			}
			rate := float64(done-lastDone) / (float64(now-lastAt) / 1e9)
			lastAt, lastDone = now, done
			p99 := float64(st.lat.merged().ValueAtQuantile(99)) / 1e3
			p.redraw(fmt.Sprintf("%6.1fs  %12s req/s  %12s done  p99 %.1f µs",
				float64(now-st.measureStart)/1e9, Group(rate), Group(float64(done)), p99))
		}
	}
}

// redraw rewrites the progress line in place on a terminal, or prints it as a line.
func (p *progress) redraw(s string) {
	if p.tty {
		fmt.Fprintf(p.out, "\r%s\x1b[K", s)
		return
	}
	fmt.Fprintln(p.out, s)
}

// line prints s on its own line, ending an in-place progress line first.
func (p *progress) line(s string) {
	if p.tty {
		fmt.Fprintf(p.out, "\r\x1b[K")
	}
	fmt.Fprintln(p.out, s)
}

func (p *progress) finish() {
	close(p.quit)
	p.wg.Wait()
	if p.out != nil {
		p.line(MarkerDone)
	}
}
