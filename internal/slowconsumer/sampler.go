package slowconsumer

import (
	"sync"
	"time"
)

// sampler tracks the peak RSS of a process from its own goroutine; the
// fields are that goroutine's until done is closed.
type sampler struct {
	quit chan struct{}
	done chan struct{}
	once sync.Once
	peak int64
	err  error // the first failed read: the process is gone, usually
}

func startSampler(pid int, every time.Duration, initial int64) *sampler {
	s := &sampler{quit: make(chan struct{}), done: make(chan struct{}), peak: initial}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
			rss, err := readRSS(pid)
			if err != nil {
				s.err = err
				return
			}
			s.peak = max(s.peak, rss)
		}
	}()
	return s
}

// stop ends sampling and returns the peak and the first read error.
func (s *sampler) stop() (int64, error) {
	s.once.Do(func() { close(s.quit) })
	<-s.done
	return s.peak, s.err
}
