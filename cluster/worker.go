package cluster

import "sync"

// worker runs what the cluster asks of the keyspace's replication
// (Data.Promote, Follow, HoldWrites) on a goroutine of its own, in the
// order asked, and never under State.mu: those calls stop the event
// loops for a moment, and a loop may be waiting for State.mu meanwhile
// (CLUSTER NODES, a bus message), and the bus's inbound messages are
// handled on a loop, which must not wait for the others. A step that must
// follow a replication change (claiming the slots after a promotion) is
// queued after it, and takes State.mu itself.
type worker struct {
	mu      sync.Mutex
	pending []func()
	wake    chan struct{} // buffered, 1
	// inflight counts the steps queued and not finished (under mu): the
	// cron does not start a replication of its primary while one runs.
	inflight int
}

func (w *worker) init() { w.wake = make(chan struct{}, 1) }

// later queues fn; it never blocks.
func (w *worker) later(fn func()) {
	w.mu.Lock()
	w.pending = append(w.pending, fn)
	w.inflight++
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// busy reports whether steps are queued or running.
func (w *worker) busy() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inflight > 0
}

func (w *worker) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-w.wake:
		}
		for {
			w.mu.Lock()
			if len(w.pending) == 0 {
				w.mu.Unlock()
				break
			}
			fn := w.pending[0]
			w.pending = w.pending[1:]
			w.mu.Unlock()
			fn()
			w.mu.Lock()
			w.inflight--
			w.mu.Unlock()
		}
	}
}
