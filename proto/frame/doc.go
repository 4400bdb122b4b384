// Package frame is a compact binary request/response protocol for benchmarks and the
// stress rig: a fixed header with an opcode and explicit lengths, followed by the raw
// key and value bytes. It exists so that load tests can measure the event loop without
// paying for a text protocol's parsing, while still framing every message exactly.
//
// All integers are unsigned and big-endian (network byte order).
//
// # Request
//
//	offset  size  field
//	0       1     opcode: 1 GET, 2 SET, 3 DEL, 4 PING
//	1       2     key length K   (uint16)
//	3       4     value length V (uint32)
//	7       K     key bytes
//	7+K     V     value bytes
//
// GET and DEL carry a key and no value (V must be 0). SET carries a key and a value.
// PING carries no key (K must be 0) and an optional payload in the value, which the
// server echoes. Empty keys are allowed for GET, SET and DEL, as in Redis.
//
// # Response
//
//	offset  size  field
//	0       1     status: 0 OK, 1 NOT_FOUND, 2 ERROR
//	1       4     value length V (uint32)
//	5       V     value bytes
//
// OK answers every opcode: GET carries the value, PING echoes its payload, SET and DEL
// carry no value. NOT_FOUND answers a GET or DEL of a missing key, with no value. ERROR
// carries a human-readable UTF-8 message. Responses come back in request order.
//
// # Limits and errors
//
// A key is at most [MaxKeyLen] (65535) bytes and a value at most [MaxValueLen]
// (4294967295) bytes by the field widths; a [Decoder] may set lower limits (the default
// value limit is 16 MiB). No length ever wraps: the encoders return an [*Error] naming
// the length and the limit instead of truncating, and the decoders reject an oversize
// length as soon as the header has arrived, before waiting for (or allocating for) the
// bytes it claims. Decoders never allocate at all: keys and values are sub-slices of the
// input, valid until that input is modified.
//
// A decoder returns [ErrIncomplete] when the input holds only part of a frame, and an
// [*Error] when the frame is malformed (unknown opcode or status, a length that
// exceeds a limit, a value on GET or DEL, a key on PING). After such an error the
// stream's framing is lost: a server should answer with an ERROR response carrying
// Error() and close the connection.
package frame
