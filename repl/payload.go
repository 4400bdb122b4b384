package repl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// EOFMarkLen is the length of the mark that ends a diskless payload.
const EOFMarkLen = 40

// Payload is the header of the snapshot a primary sends after
// +FULLRESYNC: either its length ($<len>, a file written to disk first),
// or the random mark that follows its last byte ($EOF:<mark>, streamed
// while it is produced: diskless).
type Payload struct {
	Length int64  // the $<len> form; -1 for the $EOF form
	Mark   []byte // the $EOF form's 40-byte mark
}

// ErrLineTooLong is a header line longer than MaxLine.
var ErrLineTooLong = errors.New("line from the primary too long")

// MaxLine bounds a line of the handshake: replies, the payload header.
const MaxLine = 4096

// ReadLine reads one line of the handshake, without its "\r\n". A primary
// preparing a snapshot sends bare newlines to keep the link alive; those
// are skipped (each counts as activity: alive is called for it, if set).
func ReadLine(r *bufio.Reader, alive func()) (string, error) {
	for {
		line, err := readLine(r)
		if err != nil {
			return "", err
		}
		if line == "" {
			if alive != nil {
				alive()
			}
			continue
		}
		return line, nil
	}
}

func readLine(r *bufio.Reader) (string, error) {
	var buf []byte
	for {
		frag, err := r.ReadSlice('\n')
		buf = append(buf, frag...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		if len(buf) > MaxLine {
			return "", ErrLineTooLong
		}
	}
	if len(buf) > MaxLine {
		return "", ErrLineTooLong
	}
	return string(bytes.TrimRight(buf, "\r\n")), nil
}

// ParsePayloadHeader reads the line that announces the snapshot.
func ParsePayloadHeader(line string) (Payload, error) {
	if len(line) == 0 || line[0] != '$' {
		if len(line) > 0 && line[0] == '-' {
			return Payload{}, fmt.Errorf("the primary aborted the sync: %s", truncate(line[1:]))
		}
		return Payload{}, fmt.Errorf("bad payload header %q: want $<length> or $EOF:<mark>", truncate(line))
	}
	if rest := line[1:]; len(rest) >= 4 && rest[:4] == "EOF:" {
		mark := rest[4:]
		if len(mark) != EOFMarkLen {
			return Payload{}, fmt.Errorf("bad payload header %q: the EOF mark has %d bytes, want %d", truncate(line), len(mark), EOFMarkLen)
		}
		return Payload{Length: -1, Mark: []byte(mark)}, nil
	}
	n, err := strconv.ParseInt(line[1:], 10, 64)
	if err != nil || n < 0 {
		return Payload{}, fmt.Errorf("bad payload header %q: the length is not a number from 0", truncate(line))
	}
	return Payload{Length: n}, nil
}

// CopyPayload copies the snapshot that p announced from r to w and reports
// how many bytes of it were written (the mark of the $EOF form is not
// part of the snapshot). progress, if set, is told the running count as
// data arrives. An error means the snapshot is incomplete: the primary went
// away (io.ErrUnexpectedEOF) or the reader or writer failed.
func CopyPayload(w io.Writer, r *bufio.Reader, p Payload, progress func(int64)) (int64, error) {
	if p.Length >= 0 {
		if progress != nil {
			w = &progressWriter{w: w, progress: progress}
		}
		n, err := io.CopyN(w, r, p.Length)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	}
	return copyUntilMark(w, r, p.Mark, progress)
}

// copyUntilMark copies until mark, consuming nothing past it: what follows
// the mark is the start of the command stream. It looks at r's buffered
// bytes (Peek) and holds back the last EOFMarkLen-1 bytes written, which
// may be the start of the mark.
func copyUntilMark(w io.Writer, r *bufio.Reader, mark []byte, progress func(int64)) (int64, error) {
	var written int64
	var held, window []byte
	for {
		if _, err := r.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return written, err
		}
		buf, _ := r.Peek(r.Buffered())
		window = append(append(window[:0], held...), buf...)
		if i := bytes.Index(window, mark); i >= 0 {
			m, err := w.Write(window[:i])
			written += int64(m)
			if err == nil {
				_, err = r.Discard(i + EOFMarkLen - len(held))
			}
			if progress != nil {
				progress(written)
			}
			return written, err
		}
		keep := max(len(window)-(EOFMarkLen-1), 0)
		m, err := w.Write(window[:keep])
		written += int64(m)
		if err != nil {
			return written, err
		}
		held = append(held[:0], window[keep:]...)
		if _, err := r.Discard(len(buf)); err != nil {
			return written, err
		}
		if progress != nil {
			progress(written)
		}
	}
}

// progressWriter tells progress the running count of what it wrote.
type progressWriter struct {
	w        io.Writer
	n        int64
	progress func(int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	p.progress(p.n)
	return n, err
}
