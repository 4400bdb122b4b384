// Package http1 is a zero-copy, pipelined HTTP/1.1 request parser and an append-style
// response writer, as pure functions over byte slices: no I/O and no allocation on the
// steady-state path. An event-loop handler calls [Parser.Parse] on the bytes it has,
// answers each complete request with [AppendResponse], and keeps the unconsumed rest
// for the next read. The package starts no goroutine of its own: a server that
// wants responses not to read the clock owns a [DateClock] (one goroutine, from
// [NewDateClock] until [DateClock.Stop]) and passes it; nil reads the clock.
//
// # Parsing decisions (RFC 9112)
//
//   - Lines end in CRLF. A bare LF, or a CR not followed by LF, is rejected with 400
//     rather than tolerated: accepting what a front proxy would frame differently is how
//     request smuggling starts.
//   - Empty lines (CRLF) before a request line are skipped, as RFC 9112 section 2.2
//     allows, so a client's stray CRLF after a body does not break the pipeline.
//   - The request line is method SP request-target SP HTTP-version with single spaces.
//     The method must be a token; the target must be visible ASCII (0x21-0x7E) in one of
//     the four forms: "/origin", "scheme:absolute", "host:port" (CONNECT only) or "*".
//     Its contents are not decoded or checked further. HTTP/1.0 and HTTP/1.1 are
//     served; any other well-formed version gets 505.
//   - Header names must be tokens; whitespace between a name and its colon is rejected
//     (400). Values may hold HTAB, SP, visible ASCII and obs-text (0x80-0xFF); other
//     control bytes are rejected. Leading and trailing whitespace is trimmed from values.
//     Obsolete line folding (a line starting with SP or HTAB) is rejected with 400.
//   - Header names are matched case-insensitively ([Request.Header]); Headers keeps them
//     as sent, in order, duplicates included.
//   - HTTP/1.1 requests need exactly one Host header; more than one Host is a 400 in any
//     version.
//   - Content-Length must be decimal digits only. A second Content-Length header, even
//     with the same value, is rejected (400), as is a request carrying both
//     Content-Length and Transfer-Encoding, and an HTTP/1.0 request with
//     Transfer-Encoding.
//   - Transfer-Encoding: chunked is supported and decoded in place (see below). Any other
//     transfer coding gets 501; chunked applied twice gets 400.
//   - Keep-alive: HTTP/1.1 persists unless a Connection header lists "close"; HTTP/1.0
//     closes unless Connection lists "keep-alive" (and not "close"). Tokens are matched
//     case-insensitively within comma-separated lists, across repeated headers.
//   - A request without Content-Length or Transfer-Encoding has an empty body.
//
// # Limits
//
// The request line plus header section (including leading empty lines and the final
// CRLF) may be at most Limits.MaxHeaderBytes (default 8 KiB) and hold at most
// Limits.MaxHeaders fields (default 100); beyond either the parser answers 431 as soon
// as the limit is crossed, without waiting for the rest. A body beyond
// Limits.MaxBodyBytes (default 4 MiB) gets 413, reported from Content-Length before any
// body byte arrives, and from a chunked body as soon as the chunk sizes exceed it. A
// chunked body's framing is bounded too: a chunk-size line is at most 4096 bytes (400),
// trailers count against MaxHeaderBytes (431), and the whole encoded body may be at most
// 2*MaxBodyBytes+MaxHeaderBytes bytes on the wire (413), so tiny chunks with long
// extensions cannot make the caller buffer without bound.
//
// # Chunked bodies
//
// When a chunked request is complete, Parse moves the chunk data together inside
// buf[:n] so that Request.Body is one contiguous sub-slice. This is the only time the
// parser writes to buf, and it writes only bytes it reports as consumed. Chunk
// extensions and trailer fields are validated and discarded.
//
// # Errors
//
// Parse returns [ErrIncomplete] when buf holds only part of a request (consuming
// nothing), or an [*Error] carrying the status code to answer with and a message that
// names the offending value and the limit. After an *Error the connection's framing is
// unknown: answer with [AppendErrorResponse] and close.
//
// # Lifetimes
//
// Every []byte in a Request aliases buf and is valid until buf is modified or reused;
// a Request's Headers slice is reused by the next Parse into the same Request.
package http1
