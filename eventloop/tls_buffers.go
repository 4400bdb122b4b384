package eventloop

import (
	"bytes"
	"crypto/tls"
	"reflect"
	"unsafe"
)

// An idle TLS connection must not keep input buffers, as an idle
// plaintext one keeps none. crypto/tls keeps its own: each tls.Conn reads
// ciphertext into a bytes.Buffer (rawInput) sized by the largest record it
// ever read plus 512 bytes, collects handshake messages in another
// (hand), sized by the ClientHello, and never shrinks either. With Go's
// default client (a 1.8 KB ClientHello) that was 4 KB per connection, half
// of what an idle TLS connection cost, and crypto/tls offers no way to
// release them.
//
// So the loop lends crypto/tls its input buffer: before tls.Conn.Read it
// points the connection's rawInput at one per-loop buffer (tlsLoop.raw),
// large enough that crypto/tls never reallocates it, and afterwards takes
// it back. What a read leaves in it, the start of a record whose rest has
// not arrived, moves to a pooled per-connection buffer (tlsConn.rest), as
// a partial request does on the plaintext path, and is lent back with the
// next read. The handshake's buffers are dropped once it is over, and the
// decrypted-input reader is cut loose from the lent buffer.
//
// The fields are unexported, so they are found by name and type with
// reflect when the package loads. If a Go release renames or retypes
// them, tlsBuffersFound is false and connections keep crypto/tls's own
// buffers, as before: more memory, same behaviour
// (TestTLSConnBuffersAreFound fails, to say so).

// tlsConnFields are the offsets in tls.Conn of its input buffers.
type tlsConnFields struct {
	rawInput uintptr // bytes.Buffer: ciphertext, from a record header on
	input    uintptr // bytes.Reader: decrypted application data not yet read
	hand     uintptr // bytes.Buffer: handshake messages not yet processed
}

var tlsFields, tlsBuffersFound = findTLSConnFields()

func findTLSConnFields() (tlsConnFields, bool) {
	conn := reflect.TypeFor[tls.Conn]()
	offset := func(name string, want reflect.Type) (uintptr, bool) {
		f, ok := conn.FieldByName(name)
		return f.Offset, ok && len(f.Index) == 1 && f.Type == want
	}
	buffer, reader := reflect.TypeFor[bytes.Buffer](), reflect.TypeFor[bytes.Reader]()
	raw, ok1 := offset("rawInput", buffer)
	input, ok2 := offset("input", reader)
	hand, ok3 := offset("hand", buffer)
	return tlsConnFields{rawInput: raw, input: input, hand: hand}, ok1 && ok2 && ok3
}

// tlsRawInputSize is the size of the buffer a loop lends: crypto/tls
// grows its input to a record plus 512 bytes, and slides what it holds to
// the front instead of reallocating when that needs at most half the
// capacity, so twice the largest record and then some is never outgrown.
const tlsRawInputSize = 2 * (5 + tlsMaxRecordPayload + 512 + 512)

func tlsRawInput(c *tls.Conn) *bytes.Buffer {
	return (*bytes.Buffer)(unsafe.Add(unsafe.Pointer(c), tlsFields.rawInput))
}

func tlsInput(c *tls.Conn) *bytes.Reader {
	return (*bytes.Reader)(unsafe.Add(unsafe.Pointer(c), tlsFields.input))
}

func tlsHand(c *tls.Conn) *bytes.Buffer {
	return (*bytes.Buffer)(unsafe.Add(unsafe.Pointer(c), tlsFields.hand))
}

// lendInput points t's ciphertext input at the loop's buffer, holding
// what t kept of a partial record. Loop goroutine, before tls.Conn.Read.
func (l *loop) lendInput(t *tlsConn) {
	if !tlsBuffersFound {
		return
	}
	if l.tls.raw == nil {
		l.tls.raw = make([]byte, 0, tlsRawInputSize)
	}
	lent := l.tls.raw[:0]
	if t.rest != nil {
		lent = append(lent, t.rest.B...)
		l.inBufs.put(t.rest)
		t.rest = nil
	}
	*tlsRawInput(t.conn) = *bytes.NewBuffer(lent)
}

// takeInput takes the loop's buffer back from t after tls.Conn.Read (or
// the handshake's own buffers, when it has just ended), keeping what is
// left of a partial record in t.rest, and drops t's emptied handshake
// buffer. Loop goroutine.
func (l *loop) takeInput(t *tlsConn) {
	if !tlsBuffersFound {
		return
	}
	raw := tlsRawInput(t.conn)
	if raw.Len() > 0 {
		t.rest = l.inBufs.get()
		t.rest.B = append(t.rest.B, raw.Bytes()...)
	}
	*raw = bytes.Buffer{}
	// Read returns no error while decrypted input is waiting, so this is
	// empty unless the reading stopped early (Close, an abort).
	if input := tlsInput(t.conn); input.Len() > 0 {
		kept := make([]byte, input.Len())
		_, _ = input.ReadAt(kept, input.Size()-int64(input.Len()))
		input.Reset(kept)
	} else {
		input.Reset(nil)
	}
	if hand := tlsHand(t.conn); hand.Len() == 0 && hand.Cap() > 0 {
		*hand = bytes.Buffer{}
	}
}

// dropRest returns t's partial record to the pool as t closes.
func (l *loop) dropRest(t *tlsConn) {
	if t.rest != nil {
		l.inBufs.put(t.rest)
		t.rest = nil
	}
}
