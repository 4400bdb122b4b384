package loadgen

import (
	"errors"
	"time"
)

// sendBatch is what the reader needs to time the replies to one open-loop write.
type sendBatch struct {
	end       int64 // index after the batch's last request
	heldSince int64 // requests due at or before this were held back by the client
	sentAt    int64 // when the batch was built
}

// openBatchRing is how many open-loop writes may await replies per connection.
const openBatchRing = 1024

// openMaxBatch caps how many overdue requests one open-loop write carries, so a sender that
// fell behind catches up in bounded writes.
const openMaxBatch = 1024

// runOpen runs the open-loop sender on the calling goroutine and the reader on another,
// and returns the first error of either.
func (w *worker) runOpen() error {
	readErr := make(chan error, 1)
	go func() {
		err := w.readOpen()
		w.readerDone.Store(true) // a sender waiting for ring room must not wait forever
		readErr <- err
	}()
	w.sendErr = w.sendOpen()
	w.finishSending()
	if err := <-readErr; err != nil {
		return err
	}
	return w.sendErr
}

// sendOpen writes every request when it falls due; requests that came due while it slept
// or while a write blocked go out together in the next write.
func (w *worker) sendOpen() error {
	st, s := w.st, &w.open
	var k, b int64
	var heldSince int64 // requests due at or before this were held back by the client
	for !st.stop.Load() && !w.readerDone.Load() {
		next := s.due(k)
		if s.limit > 0 && k >= s.limit || st.deadline > 0 && next >= st.deadline {
			return nil
		}
		now := st.now()
		if next > now {
			time.Sleep(time.Duration(next - now))
			now = st.now()
		}
		if b-w.readBatches.Load() >= int64(len(w.batches)) {
			// Too many batches unanswered: the server is behind, and everything that
			// falls due while we wait counts from its due time.
			for b-w.readBatches.Load() >= int64(len(w.batches)) && !st.stop.Load() && !w.readerDone.Load() {
				time.Sleep(100 * time.Microsecond)
			}
			now = st.now()
			heldSince = now
		}
		w.wbuf = w.wbuf[:0]
		for n := 0; n < openMaxBatch; n++ {
			due := s.due(k)
			if due > now || s.limit > 0 && k >= s.limit || st.deadline > 0 && due >= st.deadline {
				break
			}
			w.appendRequest()
			k++
		}
		w.batches[b%int64(len(w.batches))] = sendBatch{end: k, heldSince: heldSince, sentAt: now}
		b++
		// Publish before writing: the reader may see the replies before Write returns.
		w.sentCount.Store(k)
		if err := w.write(now); err != nil {
			return err
		}
		heldSince = st.now()
	}
	return nil
}

// finishSending tells the reader no more requests come. If every reply is already in, the
// reader may be blocked in Read with nothing outstanding: wake it with a past deadline.
func (w *worker) finishSending() {
	w.finishMu.Lock()
	defer w.finishMu.Unlock()
	w.senderDone.Store(true)
	if w.sendErr != nil || w.readCount.Load() == w.sentCount.Load() {
		w.conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// readOpen reads replies in order; reply k answers request k. Its latency counts from the
// request's due time when the client held it back (a blocked write, too much outstanding),
// so a stalled server cannot hide the queue behind the stall. When the only delay was the
// sender's own sleep overshooting (Go timers wake up to ~1 ms late), it counts from the
// actual send instead, unless -strict-schedule is set.
func (w *worker) readOpen() error {
	st, s := w.st, &w.open
	var k, bi int64
	var batch sendBatch // the batch request k belongs to
	for {
		if k == w.sentCount.Load() && w.r == w.w {
			// Nothing outstanding. Check for the end and arm the deadline under finishMu,
			// so finishSending's wake-up deadline cannot be overwritten by ours.
			w.finishMu.Lock()
			if w.senderDone.Load() && k == w.sentCount.Load() {
				w.finishMu.Unlock()
				return nil
			}
			w.conn.SetReadDeadline(time.Now().Add(st.cfg.Timeout))
			w.readRefresh = st.now()
			w.finishMu.Unlock()
			if err := w.read(); err != nil {
				if w.senderDone.Load() && k == w.sentCount.Load() {
					return nil
				}
				return err
			}
			continue
		}
		kind, err := w.nextReply()
		if err != nil {
			return err
		}
		if k >= w.sentCount.Load() {
			return errors.New("protocol error: a reply arrived for no request")
		}
		for k >= batch.end {
			batch = w.batches[bi%int64(len(w.batches))]
			bi++
			w.readBatches.Store(bi - 1)
		}
		if due := s.due(k); due >= st.measureStart {
			start := due
			if !st.cfg.StrictSchedule && due > batch.heldSince {
				start = batch.sentAt
			}
			w.count(kind, w.lastRead-start)
			st.completed.Add(1)
		}
		k++
		w.readCount.Store(k)
	}
}
