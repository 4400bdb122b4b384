package client

import (
	"sync"
	"sync/atomic"
)

// A call is one command on its way through a connection. It is pooled: a
// call is reused only once every goroutine that could touch it is done
// with it, which the state machine below decides.
//
// Ownership: the caller fills buf and want, then hands the call to a link.
// From then on exactly one of the link's pending stack, a writer's batch, the
// link's in-flight FIFO or the reader's local FIFO holds it, until it
// reaches stateDone (the caller owns it again and releases it) or is
// abandoned (whoever holds it releases it).
type call struct {
	state atomic.Uint32
	done  chan struct{} // capacity 1: the reply (or failure) is in
	next  *call         // the call pushed before it on a link's pending stack

	buf  []byte   // the encoded command
	want wantKind // how the reader decodes the reply
	dst  []byte   // GetInto's destination

	// Results, written by the goroutine that moved state to stateDone
	// before it signals done.
	val []byte
	n   int64
	v   any
	err error
}

// Call states. The transitions are CASes, so that a reply, a failure and a
// cancellation racing for the same call agree on one winner.
const (
	stateQueued    uint32 = iota // in a link's queue, not written
	stateWritten                 // written, waiting for its reply
	stateDone                    // claimed by the reader or a failure; done will be signalled
	stateAbandoned               // the caller gave up (context); whoever holds it releases it
)

// wantKind says what reply a call expects.
type wantKind uint8

const (
	wantStatus wantKind = iota // Set: "+OK"
	wantBulk                   // Get: a bulk string copied into the reader's slab
	wantInto                   // GetInto: a bulk string appended to dst
	wantInt                    // Incr: an integer
	wantAny                    // Do: any reply as Go values
)

// maxPooledBuf bounds the command buffer a pooled call keeps, so that one
// huge SET does not pin its buffer forever.
const maxPooledBuf = 64 << 10

var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

func getCall(want wantKind) *call {
	c := callPool.Get().(*call)
	c.state.Store(stateQueued)
	c.want = want
	return c
}

// putCall returns c to the pool. Nothing may touch c afterwards.
func putCall(c *call) {
	if cap(c.buf) > maxPooledBuf {
		c.buf = nil
	}
	c.buf = c.buf[:0]
	c.dst, c.val, c.v, c.err, c.n, c.next = nil, nil, nil, nil, 0, nil
	callPool.Put(c)
}

// abandon is called by a caller whose context ended. It reports whether
// the call was abandoned (its holder will release it); false means a reply
// or failure has already claimed it and done is about to be signalled.
func (c *call) abandon() bool {
	for {
		s := c.state.Load()
		if s == stateDone {
			return false
		}
		if c.state.CompareAndSwap(s, stateAbandoned) {
			return true
		}
	}
}

// claim moves c from state from to stateDone. On false the caller has
// abandoned it and the claimer must release it instead of answering.
func (c *call) claim(from uint32) bool {
	if c.state.CompareAndSwap(from, stateDone) {
		return true
	}
	putCall(c)
	return false
}

// fail answers c with err if it is still wanted.
func (c *call) fail(from uint32, err error) {
	if c.claim(from) {
		c.err = err
		c.done <- struct{}{}
	}
}
