package kv

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mailbox is a subscriber's messages on their way from the publishers'
// loops to its own: a queue of fixed-size pooled chunks rather than one
// []byte. A []byte grown by append costs four bytes of garbage for every
// byte delivered (each doubling copies what came before) and, for a
// subscriber that does not read, a peak of twice its pending bytes; the
// chunks are reused, so a steady stream of messages allocates nothing.
//
// A chunk leaves the mailbox as the flush writes it (pop), so the mailbox
// and the Conn's backlog together hold each pending byte once, and the
// hard limit counts them together. A mailbox past mapAbove, or whose
// reader is slow, takes chunks mapped outside the Go heap, which are
// unmapped as soon as the backlog has their copy: on the heap they would
// stay resident until a garbage collection and the scavenger got to them,
// so a subscriber whose loop lagged behind its publisher (the mailbox
// grows while the backlog waits) would cost its limit and the lag on top.
// The subscriber's mutex guards it.
type mailbox struct {
	chunks []mailChunk // chunks[head:] hold the content
	head   int
	tail   int // bytes used in the last chunk
	size   int
	// slow is set (setSlow) by the flush while the Conn holds a
	// backlog: the reader is not keeping up.
	slow bool
}

// mailChunk is one chunk of a mailbox, mapped or on the Go heap.
type mailChunk struct {
	buf    *[mailChunkSize]byte
	onHeap bool
}

const mailChunkSize = 32 << 10

// mapAbove is the size past which a mailbox takes mapped chunks: a burst
// to many subscribers that keep up takes cheap heap chunks, and what a
// lagging loop leaves on the heap is bounded.
const mapAbove = 256 << 10

// freeChunks are chunks for reuse, not a sync.Pool, which every garbage
// collection empties. Chunks that readers keeping up were written from
// are kept up to freeDepth (8 MiB, what a burst to a few hundred
// subscribers keeps in flight). Those whose bytes went into a slow
// reader's backlog, or were dropped with a reader past its limit, are kept
// only while the list holds fewer than slowKeep (512 KiB) for each slow
// reader: enough that a publisher feeding them reuses what their flushes
// give back rather than mapping and faulting in new chunks, while what a
// slow reader's messages leave on the list besides its backlog stays a
// small part of its limit. releaseChunks empties the list once slow
// clients are gone.
var freeChunks = make(chan mailChunk, freeDepth)

const (
	freeDepth = 256
	slowKeep  = 16
)

// slowReaders counts the mailboxes whose slow is set.
var slowReaders atomic.Int64

// releaseChunks gives the free chunks back: mapped ones to the kernel,
// the others to the garbage collector.
func releaseChunks() {
	for {
		select {
		case ch := <-freeChunks:
			ch.release()
		default:
			return
		}
	}
}

// getChunk returns a free chunk, else a new one: mapped if mapped says
// so and the mapping succeeds, else on the heap.
func getChunk(mapped bool) mailChunk {
	select {
	case ch := <-freeChunks:
		return ch
	default:
	}
	if mapped {
		p, err := unix.MmapPtr(-1, 0, nil, mailChunkSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err == nil {
			return mailChunk{buf: (*[mailChunkSize]byte)(p)}
		}
	}
	return mailChunk{buf: new([mailChunkSize]byte), onHeap: true}
}

// putChunk takes back ch, whose content is no longer needed; slow says its
// bytes went to a slow reader's backlog or were dropped.
func putChunk(ch mailChunk, slow bool) {
	if slow && int64(len(freeChunks)) >= slowKeep*max(slowReaders.Load(), 1) {
		ch.release()
		return
	}
	select {
	case freeChunks <- ch:
	default:
		ch.release()
	}
}

func (ch mailChunk) release() {
	if !ch.onHeap {
		_ = unix.MunmapPtr(unsafe.Pointer(ch.buf), mailChunkSize)
	}
}

// setSlow sets m.slow, keeping slowReaders.
func (m *mailbox) setSlow(slow bool) {
	if slow == m.slow {
		return
	}
	m.slow = slow
	if slow {
		slowReaders.Add(1)
	} else {
		slowReaders.Add(-1)
	}
}

// write appends p.
func (m *mailbox) write(p []byte) {
	m.size += len(p)
	for len(p) > 0 {
		if len(m.chunks) == m.head || m.tail == mailChunkSize {
			m.grow()
			m.chunks = append(m.chunks, getChunk(m.slow || m.size > mapAbove))
			m.tail = 0
		}
		n := copy(m.chunks[len(m.chunks)-1].buf[m.tail:], p)
		m.tail += n
		p = p[n:]
	}
}

// grow makes room for one more chunk, moving the content to the front of
// the slice rather than growing it when popped chunks left room there.
func (m *mailbox) grow() {
	if len(m.chunks) < cap(m.chunks) || m.head == 0 {
		return
	}
	n := copy(m.chunks, m.chunks[m.head:])
	clear(m.chunks[n:])
	m.chunks, m.head = m.chunks[:n], 0
}

// pop removes the first chunk and returns it with the length of its
// content, which the caller hands on before it gives the chunk back with
// putChunk; ok is false if m is empty. The chunk after the last is a new
// one, even if the last was not full.
func (m *mailbox) pop() (ch mailChunk, n int, ok bool) {
	if len(m.chunks) == m.head {
		return mailChunk{}, 0, false
	}
	ch, n = m.chunks[m.head], mailChunkSize
	m.chunks[m.head] = mailChunk{}
	m.head++
	if len(m.chunks) == m.head {
		n = m.tail
		m.chunks, m.head, m.tail = m.chunks[:0], 0, 0
	}
	m.size -= n
	return ch, n, true
}

// take moves the content out: the returned mailbox holds it, m is empty
// (and still counted slow if it was; the returned one is not counted).
func (m *mailbox) take() mailbox {
	t := *m
	*m = mailbox{chunks: m.chunks[len(m.chunks):], slow: m.slow} // keeps the rest of the slice's capacity
	return t
}

// each calls fn with the content, chunk by chunk, in order, giving each
// chunk back as soon as fn returns; fn must not keep the slice.
func (m *mailbox) each(fn func(p []byte)) {
	for ch, n, ok := m.pop(); ok; ch, n, ok = m.pop() {
		fn(ch.buf[:n])
		putChunk(ch, m.slow)
	}
}

// drop discards the content: the subscriber is past its limit or gone.
func (m *mailbox) drop() {
	for ch, _, ok := m.pop(); ok; ch, _, ok = m.pop() {
		putChunk(ch, true)
	}
}
