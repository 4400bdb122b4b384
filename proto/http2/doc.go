// Package http2 is HTTP/2's framing layer (RFC 9113) as pure functions over
// byte slices, like proto/http1 and proto/resp: no I/O, no goroutine and no
// allocation when parsing. An event-loop handler checks the connection
// preface with [CheckPreface], reads frames with [ParseFrame] (which bounds a
// frame by the receiver's SETTINGS_MAX_FRAME_SIZE), takes each frame type's
// payload apart with the Parse* functions, and writes frames with the
// Append* functions into its output buffer.
//
// Header blocks (HEADERS and CONTINUATION payloads) are HPACK (RFC 7541):
// this package only frames them; the caller compresses and decompresses
// them with golang.org/x/net/http2/hpack, whose decoder bounds string
// lengths and the dynamic table.
//
// Every malformed frame is an *[Error] carrying the RFC's error code and
// whether it is a connection error (answer GOAWAY and close) or a stream
// error (answer RST_STREAM on that stream), with the offending value and
// the limit in its message.
package http2
