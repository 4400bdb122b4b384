package kv

// mailbox is a subscriber's messages on their way from the publishers'
// loops to its own: a queue of fixed-size pooled chunks rather than one
// []byte. A []byte grown by append costs four bytes of garbage for every
// byte delivered (each doubling copies what came before) and, for a
// subscriber that does not read, a peak of twice its pending bytes; the
// chunks are reused, so a steady stream of messages allocates nothing.
// The subscriber's mutex guards it.
type mailbox struct {
	chunks []*[mailChunk]byte
	tail   int // bytes used in the last chunk
	size   int
}

const mailChunk = 32 << 10

// freeChunks are chunks for reuse: a bounded list (8 MiB, what a burst
// to a few hundred subscribers keeps in flight), not a sync.Pool, which
// every garbage collection empties. releaseChunks empties it once slow
// clients are gone.
var freeChunks = make(chan *[mailChunk]byte, 256)

// releaseChunks drops the free chunks, for the garbage collector.
func releaseChunks() {
	for {
		select {
		case <-freeChunks:
		default:
			return
		}
	}
}

func getChunk() *[mailChunk]byte {
	select {
	case ch := <-freeChunks:
		return ch
	default:
		return new([mailChunk]byte)
	}
}

func putChunk(ch *[mailChunk]byte) {
	select {
	case freeChunks <- ch:
	default:
	}
}

// write appends p.
func (m *mailbox) write(p []byte) {
	m.size += len(p)
	for len(p) > 0 {
		if len(m.chunks) == 0 || m.tail == mailChunk {
			m.chunks = append(m.chunks, getChunk())
			m.tail = 0
		}
		n := copy(m.chunks[len(m.chunks)-1][m.tail:], p)
		m.tail += n
		p = p[n:]
	}
}

// take moves the content out: the returned mailbox holds it, m is empty.
func (m *mailbox) take() mailbox {
	t := *m
	*m = mailbox{chunks: m.chunks[len(m.chunks):]} // keeps the slice's capacity
	return t
}

// each calls fn with the content, chunk by chunk, in order, then returns
// the chunks to the pool; fn must not keep the slice.
func (m *mailbox) each(fn func(p []byte)) {
	for i, ch := range m.chunks {
		end := mailChunk
		if i == len(m.chunks)-1 {
			end = m.tail
		}
		fn(ch[:end])
		putChunk(ch)
		m.chunks[i] = nil
	}
	*m = mailbox{}
}
