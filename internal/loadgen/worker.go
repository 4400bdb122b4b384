package loadgen

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// worker drives one connection. In closed loop one goroutine owns all of it; in open loop
// the sender goroutine owns wbuf, the write deadline and sentCount, and the reader owns
// the rest.
type worker struct {
	st    *runState
	conn  net.Conn
	proto protocol

	tpls  [numOps]requestTemplate
	cum   []uint64 // cumulative op weights, parallel to ops
	ops   []opKind
	rng   *rand.Rand
	zipf  *rand.Zipf
	space uint64
	// ownKey is the connection's only key with Config.OwnKeys.
	ownKey uint64

	wbuf []byte

	rbuf         []byte
	r, w         int   // unparsed replies are rbuf[r:w]
	lastRead     int64 // st.now() right after the latest read returned bytes
	readRefresh  int64 // when the read deadline was last pushed out
	writeRefresh int64

	samples  sampleBuffer
	errKinds []errorCount
	done     int64 // measured replies, error replies included
	lastDone int64 // st.now() of the last measured reply

	// open loop only
	open        openSchedule
	sentCount   atomic.Int64 // requests written (sender), read by the reader
	readCount   atomic.Int64 // replies read (reader), read by the sender when it finishes
	batches     []sendBatch  // ring: written by the sender, then published by sentCount
	readBatches atomic.Int64 // batches fully answered (reader); the sender must not lap it
	senderDone  atomic.Bool
	readerDone  atomic.Bool // set when the reader returns, so the sender stops too
	finishMu    sync.Mutex  // orders the reader's last-read check with the sender's finish
	sendErr     error
}

// openSchedule is one connection's share of an open-loop rate: request k is due at
// t0 + k*interval nanoseconds after the run's base time.
type openSchedule struct {
	t0       int64
	interval float64
	first    int64 // index of the first request due at or after measureStart
	limit    int64 // stop before this index (-n); 0 = until the deadline
}

func (s *openSchedule) due(k int64) int64 { return s.t0 + int64(float64(k)*s.interval) }

func newWorker(st *runState, conn net.Conn, id int) *worker {
	cfg := st.cfg
	w := &worker{
		st:    st,
		conn:  conn,
		proto: st.proto,
		rng:   rand.New(rand.NewPCG(cfg.Seed, uint64(id))),
		space: cfg.Keyspace,
	}
	w.tpls = st.tpls
	var total uint64
	for _, m := range cfg.Mix {
		total += uint64(m.Weight)
		w.cum = append(w.cum, total)
		w.ops = append(w.ops, m.Op)
	}
	if cfg.Dist == "zipf" && cfg.Keyspace > 1 {
		w.zipf = rand.NewZipf(w.rng, cfg.ZipfS, 1, cfg.Keyspace-1)
	}
	w.samples.shard = &st.lat.shards[id%len(st.lat.shards)]
	w.samples.vals = make([]int64, sampleBufferLen)
	if cfg.LowMemory {
		w.samples.vals = make([]int64, lowMemorySampleBufferLen)
	}
	if cfg.OwnKeys {
		w.ownKey = cfg.KeyBase + uint64(id)
	}
	batch, ring := cfg.Pipeline, openBatchRing
	if cfg.Rate > 0 {
		batch = openMaxBatch
	}
	if cfg.LowMemory {
		batch, ring = 1, lowMemoryBatchRing
	}
	if cfg.Rate > 0 {
		w.batches = make([]sendBatch, ring)
	}
	w.wbuf = make([]byte, 0, batch*st.maxRequestLen)
	w.rbuf = make([]byte, readBufferSize(cfg))
	return w
}

// lowMemoryBatchRing is openBatchRing with Config.LowMemory: at the rig's rates (a request
// every few seconds per connection) more than a few unanswered writes mean the server is
// far behind, and the sender then waits and counts the wait, as with the bigger ring.
const lowMemoryBatchRing = 8

// readBufferSize fits one batch of replies, between 4 KiB and 256 KiB: big enough that a
// batch is usually one read, small enough for 100k connections.
func readBufferSize(cfg *Config) int {
	if cfg.LowMemory {
		return 512 // read grows it when a reply does not fit
	}
	want := cfg.Pipeline * (cfg.ValueSize + 32) * 2
	if cfg.Rate > 0 {
		want = 16 << 10 // replies of a catch-up burst; grows if a burst is bigger
	}
	return min(max(want, 4<<10), 256<<10)
}

// appendRequest appends the next request of the mix to wbuf.
func (w *worker) appendRequest() {
	op := w.ops[0]
	if len(w.ops) > 1 {
		r := w.rng.Uint64N(w.cum[len(w.cum)-1])
		for i, c := range w.cum {
			if r < c {
				op = w.ops[i]
				break
			}
		}
	}
	t := &w.tpls[op]
	start := len(w.wbuf)
	w.wbuf = append(w.wbuf, t.bytes...)
	if t.keyAt >= 0 {
		var k uint64
		if w.st.cfg.OwnKeys {
			k = w.ownKey
		} else if w.zipf != nil {
			k = w.zipf.Uint64()
		} else {
			k = w.rng.Uint64N(w.space)
		}
		putKey(w.wbuf[start:], t.keyAt, k)
	}
}

// runClosed sends batches of cfg.Pipeline requests and waits for each batch's replies.
func (w *worker) runClosed() error {
	st := w.st
	p := st.cfg.Pipeline
	for !st.stop.Load() {
		now := st.now()
		measuring := now >= st.measureStart
		if measuring && st.deadline > 0 && now >= st.deadline {
			return nil
		}
		k := p
		if measuring && st.limit > 0 {
			claimed := st.claimed.Add(int64(p))
			if claimed-int64(p) >= st.limit {
				return nil
			}
			k = int(min(int64(p), st.limit-(claimed-int64(p))))
		}
		w.wbuf = w.wbuf[:0]
		for range k {
			w.appendRequest()
		}
		sentAt := st.now()
		if err := w.write(sentAt); err != nil {
			return err
		}
		for range k {
			kind, err := w.nextReply()
			if err != nil {
				return err
			}
			if measuring {
				w.count(kind, w.lastRead-sentAt)
			}
		}
		if measuring {
			st.completed.Add(int64(k))
		}
	}
	return nil
}

func (w *worker) count(kind []byte, latency int64) {
	if kind != nil {
		w.countError(kind)
	}
	w.samples.add(latency)
	if w.lastRead-w.samples.flushedAt > int64(250*time.Millisecond) {
		w.samples.flush() // keep the live p99 current at low rates
		w.samples.flushedAt = w.lastRead
	}
	w.done++
	w.lastDone = w.lastRead
}

// errorCount counts error replies of one kind. A connection sees few kinds, so a slice
// searched without converting kind to a string keeps errors allocation-free too.
type errorCount struct {
	kind string
	n    int64
}

func (w *worker) countError(kind []byte) {
	for i := range w.errKinds {
		if w.errKinds[i].kind == string(kind) {
			w.errKinds[i].n++
			return
		}
	}
	w.errKinds = append(w.errKinds, errorCount{string(kind), 1})
}

func (w *worker) write(now int64) error {
	if now-w.writeRefresh > int64(w.st.cfg.Timeout)/4 {
		w.conn.SetWriteDeadline(time.Now().Add(w.st.cfg.Timeout))
		w.writeRefresh = now
	}
	_, err := w.conn.Write(w.wbuf)
	return err
}

// nextReply returns the next reply's error kind (nil if not an error), reading as needed.
func (w *worker) nextReply() ([]byte, error) {
	for {
		if w.r < w.w {
			n, kind, err := w.proto.readReply(w.rbuf[w.r:w.w])
			if err == nil {
				w.r += n
				return kind, nil
			}
			if err != errIncomplete {
				return nil, fmt.Errorf("protocol error: %w", err)
			}
		}
		if err := w.read(); err != nil {
			return nil, err
		}
	}
}

// maxReadBuffer bounds the read buffer: the largest bulk reply plus slack.
const maxReadBuffer = maxValueSize + 64<<10

func (w *worker) read() error {
	switch {
	case w.r == w.w:
		w.r, w.w = 0, 0
	case w.w == len(w.rbuf) && w.r > 0:
		w.w = copy(w.rbuf, w.rbuf[w.r:w.w])
		w.r = 0
	case w.w == len(w.rbuf):
		if len(w.rbuf) >= maxReadBuffer {
			return fmt.Errorf("protocol error: reply longer than %d bytes", maxReadBuffer)
		}
		nb := make([]byte, min(2*len(w.rbuf), maxReadBuffer))
		w.w = copy(nb, w.rbuf[:w.w])
		w.rbuf = nb
	}
	if now := w.st.now(); now-w.readRefresh > int64(w.st.cfg.Timeout)/4 {
		w.conn.SetReadDeadline(time.Now().Add(w.st.cfg.Timeout))
		w.readRefresh = now
	}
	n, err := w.conn.Read(w.rbuf[w.w:])
	if n > 0 {
		w.w += n
		w.lastRead = w.st.now()
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// ioErrorKind names an I/O error briefly and without addresses, for the errors table.
func ioErrorKind(err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, io.EOF):
		return "io: EOF (server closed the connection)"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "io: timeout"
	case errors.As(err, &errno):
		return "io: " + errno.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return "io: " + op.Op + ": " + op.Err.Error()
	}
	return err.Error()
}
