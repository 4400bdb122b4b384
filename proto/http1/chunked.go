package http1

import (
	"bytes"
	"math"

	"github.com/shoalkv/shoal/internal/ascii"
)

// maxChunkLine bounds one chunk-size line, extensions included.
const maxChunkLine = 4096

// decodeChunked walks the chunked body at the front of body and returns the decoded
// length and the bytes the encoding used, trailers included. With compact set it also
// moves each chunk's data down to body[:bodyLen]; callers compact only after a walk
// without compact succeeded, and the walk only reads bytes at or past the one it
// writes, so the second walk sees the same framing.
func decodeChunked(body []byte, limits *Limits, compact bool) (bodyLen, used int, err error) {
	maxBody := limits.bodyBytes()
	maxWire := int64(math.MaxInt64)
	if headerBytes := int64(limits.headerBytes()); maxBody <= (maxWire-headerBytes)/2 {
		maxWire = 2*maxBody + headerBytes
	}
	incomplete := func() error {
		if int64(len(body)) > maxWire {
			return errorf(413, "chunked body exceeds %d bytes on the wire", maxWire)
		}
		return ErrIncomplete
	}
	pos, total := 0, 0
	for {
		window := body[pos:]
		if len(window) > maxChunkLine {
			window = window[:maxChunkLine]
		}
		i := bytes.IndexByte(window, '\n')
		if i < 0 {
			if len(window) == maxChunkLine {
				return 0, 0, badRequest("chunk-size line longer than %d bytes", maxChunkLine)
			}
			return 0, 0, incomplete()
		}
		if i == 0 || window[i-1] != '\r' {
			return 0, 0, badRequest("chunk-size line ends in a bare LF")
		}
		size, err := parseChunkSize(window[:i-1], maxBody-int64(total), maxBody)
		if err != nil {
			return 0, 0, err
		}
		pos += i + 1
		if size == 0 {
			break
		}
		if int64(pos) > maxWire-size-2 {
			return 0, 0, errorf(413, "chunked body exceeds %d bytes on the wire", maxWire)
		}
		if int64(len(body)-pos) < size+2 {
			return 0, 0, incomplete()
		}
		start, end := pos, pos+int(size)
		if body[end] != '\r' || body[end+1] != '\n' {
			return 0, 0, badRequest("chunk data not followed by CRLF")
		}
		if compact {
			copy(body[total:], body[start:end])
		}
		total += int(size)
		pos = end + 2
	}
	used, err = skipTrailers(body, pos, limits.headerBytes())
	if err != nil {
		return 0, 0, err
	}
	return total, used, nil
}

// parseChunkSize parses 1*HEXDIG [ BWS ";" chunk-ext ] and refuses a size above
// remaining, the body bytes the limit still allows.
func parseChunkSize(line []byte, remaining, maxBody int64) (int64, error) {
	var n int64
	tooBig := false
	digits := 0
	for ; digits < len(line); digits++ {
		d := ascii.Unhex(line[digits])
		if d < 0 {
			break
		}
		if r := remaining - int64(d); !tooBig && r >= 0 && n <= r/16 {
			n = n*16 + int64(d)
		} else {
			tooBig = true
		}
	}
	if digits == 0 {
		return 0, badRequest("invalid chunk size line %s", quote(line))
	}
	ext := line[digits:]
	for len(ext) > 0 && (ext[0] == ' ' || ext[0] == '\t') {
		ext = ext[1:]
	}
	if len(ext) > 0 && ext[0] != ';' {
		return 0, badRequest("invalid chunk size line %s", quote(line))
	}
	for _, c := range ext {
		if !valueChars[c] {
			return 0, badRequest("invalid byte 0x%02x in chunk extension", c)
		}
	}
	if tooBig {
		return 0, errorf(413, "chunk size %s takes the body past its limit of %d bytes", quote(line[:digits]), maxBody)
	}
	return n, nil
}

// skipTrailers validates the trailer section starting at body[pos] and returns the
// offset just past its final CRLF. Trailer fields are discarded.
func skipTrailers(body []byte, pos, limit int) (int, error) {
	start := pos
	for {
		window := body[pos:]
		if room := limit - (pos - start); len(window) > room {
			window = window[:room]
		}
		i := bytes.IndexByte(window, '\n')
		if i < 0 {
			if len(body)-start >= limit {
				return 0, errorf(431, "chunked trailer section exceeds %d bytes", limit)
			}
			return 0, ErrIncomplete
		}
		if i == 0 || window[i-1] != '\r' {
			return 0, badRequest("trailer line ends in a bare LF")
		}
		line := window[:i-1]
		pos += i + 1
		if len(line) == 0 {
			return pos, nil
		}
		if _, err := parseHeaderLine(line); err != nil {
			return 0, err
		}
	}
}
