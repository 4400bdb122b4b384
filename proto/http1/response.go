package http1

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ConnHeader says how a response announces the connection's fate.
type ConnHeader uint8

const (
	// KeepAlive writes no Connection header: HTTP/1.1 connections persist by default.
	KeepAlive ConnHeader = iota
	// KeepAliveHTTP10 writes "Connection: keep-alive", which an HTTP/1.0 client needs
	// to keep the connection open.
	KeepAliveHTTP10
	// Close writes "Connection: close"; the server should close after sending.
	Close
)

// AppendResponse appends a complete HTTP/1.1 response to dst: status line, Date
// (from date; a nil date reads the clock), headers, Content-Length, the Connection
// header conn calls for, and body. For 1xx,
// 204 and 304 responses it writes neither Content-Length nor body, as RFC 9110 requires.
// headers must hold valid names and values (see ValidFieldName, ValidFieldValue) and
// must not include Date, Content-Length or Connection. It panics if status is not a
// three-digit code, which is a bug in the caller, as net/http does.
func AppendResponse(dst []byte, date *DateClock, status int, conn ConnHeader, body []byte, headers ...Header) []byte {
	if !bodyAllowed(status) {
		return AppendResponseHead(dst, date, status, conn, -1, headers...)
	}
	dst = AppendResponseHead(dst, date, status, conn, int64(len(body)), headers...)
	return append(dst, body...)
}

// AppendResponseHead appends a response's status line and header section, ending in
// the blank line, for a body the caller appends itself (or none, for HEAD). A
// contentLength < 0 writes no Content-Length header.
func AppendResponseHead(dst []byte, date *DateClock, status int, conn ConnHeader, contentLength int64, headers ...Header) []byte {
	if status < 100 || status > 999 {
		panic(fmt.Sprintf("http1: invalid response status %d", status))
	}
	dst = append(dst, "HTTP/1.1 "...)
	dst = append(dst, byte('0'+status/100), byte('0'+status/10%10), byte('0'+status%10), ' ')
	dst = append(dst, StatusText(status)...)
	dst = append(dst, "\r\n"...)
	dst = date.AppendDate(dst)
	for _, h := range headers {
		dst = append(dst, h.Name...)
		dst = append(dst, ": "...)
		dst = append(dst, h.Value...)
		dst = append(dst, "\r\n"...)
	}
	if contentLength >= 0 && bodyAllowed(status) {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, contentLength, 10)
		dst = append(dst, "\r\n"...)
	}
	switch conn {
	case Close:
		dst = append(dst, "Connection: close\r\n"...)
	case KeepAliveHTTP10:
		dst = append(dst, "Connection: keep-alive\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// AppendErrorResponse appends the response to a request Parse refused: the *Error's
// status (500 for any other error) with its message as a text/plain body, and
// Connection: close, since the stream's framing can no longer be trusted.
func AppendErrorResponse(dst []byte, date *DateClock, err error) []byte {
	status, msg := 500, "internal server error"
	if e, ok := err.(*Error); ok {
		status, msg = e.Status, e.Msg
	}
	dst = AppendResponseHead(dst, date, status, Close, int64(len(msg)+1),
		Header{Name: []byte("Content-Type"), Value: []byte("text/plain; charset=utf-8")})
	dst = append(dst, msg...)
	return append(dst, '\n')
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != 204 && status != 304
}

// dateLine is one second's "Date: ...\r\n" line. Lines are immutable once published,
// so readers on any goroutine never see one being written.
type dateLine struct {
	unix int64
	text []byte
}

// A DateClock keeps the Date header line current for responses formatted on any
// goroutine. Reading the clock costs more than the rest of a response on some
// virtual machines (about 170 ns here), so a response only loads an atomic pointer,
// and the DateClock's own goroutine re-formats the line once a second from
// NewDateClock until Stop. The Date may therefore lag by up to a second, which RFC
// 9110 6.6.1 allows: it is the best available approximation. A server owns one,
// started with it and stopped when it stops.
type DateClock struct {
	line atomic.Pointer[dateLine]
	stop chan struct{}
	once sync.Once
}

// NewDateClock returns a running DateClock; Stop ends its goroutine.
func NewDateClock() *DateClock {
	d := &DateClock{stop: make(chan struct{})}
	d.line.Store(formatDate(time.Now()))
	go d.run()
	return d
}

func (d *DateClock) run() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			d.line.Store(formatDate(now))
		case <-d.stop:
			return
		}
	}
}

// Stop ends d's goroutine; d keeps appending the last line it formatted. Calling
// Stop more than once is harmless.
func (d *DateClock) Stop() { d.once.Do(func() { close(d.stop) }) }

// AppendDate appends the "Date: ...\r\n" header line. A nil d formats the current
// time instead, for callers that format too few responses to keep a DateClock.
func (d *DateClock) AppendDate(dst []byte) []byte {
	if d == nil {
		return append(dst, formatDate(time.Now()).text...)
	}
	return append(dst, d.line.Load().text...)
}

func formatDate(t time.Time) *dateLine {
	d := &dateLine{unix: t.Unix(), text: make([]byte, 0, 37)}
	d.text = append(d.text, "Date: "...)
	d.text = t.UTC().AppendFormat(d.text, "Mon, 02 Jan 2006 15:04:05 GMT")
	d.text = append(d.text, "\r\n"...)
	return d
}

// StatusText returns the reason phrase for code, or "" for a code it does not know
// (an empty reason phrase is valid HTTP/1.1).
func StatusText(code int) string {
	switch code {
	case 100:
		return "Continue"
	case 101:
		return "Switching Protocols"
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 202:
		return "Accepted"
	case 204:
		return "No Content"
	case 206:
		return "Partial Content"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Found"
	case 304:
		return "Not Modified"
	case 307:
		return "Temporary Redirect"
	case 308:
		return "Permanent Redirect"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 408:
		return "Request Timeout"
	case 409:
		return "Conflict"
	case 411:
		return "Length Required"
	case 413:
		return "Content Too Large"
	case 414:
		return "URI Too Long"
	case 415:
		return "Unsupported Media Type"
	case 417:
		return "Expectation Failed"
	case 426:
		return "Upgrade Required"
	case 429:
		return "Too Many Requests"
	case 431:
		return "Request Header Fields Too Large"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	case 505:
		return "HTTP Version Not Supported"
	case 507:
		return "Insufficient Storage"
	}
	return ""
}
