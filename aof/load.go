package aof

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/proto/resp"
)

// CorruptError reports a malformed command in the middle of an append-only
// file: something that is not a truncated last command.
type CorruptError struct {
	Path   string
	Offset int64 // byte offset of the start of the bad command
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("bad file format reading the append only file %s at byte offset %d: %s (redis-check-aof --fix can truncate the file there, losing what follows)", e.Path, e.Offset, e.Reason)
}

// LoadStats describes a completed load.
type LoadStats struct {
	Commands  int64
	Bytes     int64 // size of the valid file, after any repair
	Truncated int64 // bytes cut from a truncated last command, 0 if none
}

// maxArgs bounds the argument count of one command, as Redis's loader reads
// it into an int; the parser grows its argument slice only as arguments
// arrive, so a corrupt count cannot ask for gigabytes.
const maxArgs = 1 << 31

// limits are the loader's: Redis's 512 MiB proto-max-bulk-len for a bulk,
// maxArgs arguments, and header lines ended within 64 KiB.
var limits = resp.Limits{MaxBulkLen: resp.DefaultMaxBulkLen, MaxMultibulkLen: maxArgs}

// errTruncated marks a command cut short by the end of the file.
var errTruncated = errors.New("truncated")

// Load replays the append-only file at path through exec, one command at a
// time in file order; args are valid only during the call. A missing file loads nothing. A last command cut short
// by the end of the file (a crash mid-write) is cut off the file when
// repairTruncated is set, as Redis's aof-load-truncated yes does, and is an
// error otherwise; so is a MULTI without its EXEC at the end (cut from the
// MULTI on), so that a transaction is replayed whole or not at all. A malformed command before the end is a *CorruptError
// naming its offset; the file is left as it is. An error from exec stops the
// load and is returned with the command's offset. progress, if not nil, is
// called about every 16 MiB read.
func Load(path string, repairTruncated bool, exec func(args [][]byte) error, progress func(offset int64)) (LoadStats, error) {
	var st LoadStats
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	defer f.Close()
	r := &reader{file: f}
	r.p.Limits = &limits
	nextProgress := int64(16 << 20)
	multiAt := int64(-1) // offset of a MULTI whose EXEC has not been read
	for {
		start := r.off
		args, err := r.command()
		if err == io.EOF {
			if multiAt < 0 {
				break
			}
			// A transaction without its EXEC: cut it off whole, so that
			// a replay applies all of a transaction or none (Redis's
			// "Revert incomplete MULTI/EXEC transaction").
			err = errTruncated
		}
		if err == errTruncated {
			if multiAt >= 0 {
				start = multiAt
			}
			cut := r.end() - start
			if !repairTruncated {
				what := "a truncated command"
				if multiAt >= 0 {
					what = "a transaction without its EXEC"
				}
				return st, fmt.Errorf("append only file %s ends with %s at byte offset %d (%d bytes); start with aof-load-truncated yes to cut it off", path, what, start, cut)
			}
			if err := os.Truncate(path, start); err != nil {
				return st, fmt.Errorf("truncating the append only file %s at byte offset %d: %w", path, start, err)
			}
			st.Truncated = cut
			st.Bytes = start
			return st, nil
		}
		if err != nil {
			if bad, ok := err.(*formatError); ok {
				return st, &CorruptError{Path: path, Offset: start, Reason: bad.reason}
			}
			return st, fmt.Errorf("reading the append only file %s at byte offset %d: %w", path, r.end(), err)
		}
		switch {
		case ascii.EqualFold(args[0], "multi"):
			multiAt = start
		case ascii.EqualFold(args[0], "exec"):
			multiAt = -1
		}
		if err := exec(args); err != nil {
			return st, fmt.Errorf("append only file %s, command at byte offset %d: %w", path, start, err)
		}
		st.Commands++
		if progress != nil && r.off >= nextProgress {
			progress(r.off)
			nextProgress = r.off + 16<<20
		}
	}
	st.Bytes = r.off
	return st, nil
}

// formatError is a malformed command; reason says what is wrong.
type formatError struct{ reason string }

func (e *formatError) Error() string { return e.reason }

func badFormat(format string, args ...any) error {
	return &formatError{reason: fmt.Sprintf(format, args...)}
}

// Reads from the file are readSize bytes; a buffer grown past maxRetained
// by a huge command is dropped once that command is consumed, so it is not
// pinned for the rest of the load.
const (
	readSize    = 1 << 20
	maxRetained = 8 << 20
)

// reader reads the commands of an append-only file: resp.Parser over a
// buffer of what has been read, so arguments are slices of that buffer.
type reader struct {
	file io.Reader
	p    resp.Parser
	buf  []byte // buf[pos:] has been read and not consumed
	pos  int
	off  int64 // file offset of buf[pos]
	eof  bool  // file has nothing more after buf
}

// end is the file offset just past what has been read.
func (r *reader) end() int64 { return r.off + int64(len(r.buf)-r.pos) }

// command returns the next command. The arguments are valid until the next
// call. At a clean end of file it returns io.EOF; an end inside a command
// is errTruncated; anything malformed is a *formatError.
func (r *reader) command() ([][]byte, error) {
	for {
		if b := r.buf[r.pos:]; len(b) > 0 {
			args, n, err := parseCommand(&r.p, b)
			if err == nil {
				r.pos += n
				r.off += int64(n)
				return args, nil
			}
			if err != resp.ErrIncomplete {
				return nil, err
			}
		}
		if r.eof {
			if r.pos == len(r.buf) {
				return nil, io.EOF
			}
			return nil, errTruncated
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more of the file after the unconsumed bytes, which it first
// moves to the front of the buffer (so a command the parser has partly
// read still starts at the front, where resp.Parser resumes it). The
// buffer doubles when full, so a huge bulk costs a linear number of copies.
func (r *reader) fill() error {
	rest := len(r.buf) - r.pos
	switch {
	case cap(r.buf) > maxRetained && rest <= readSize:
		r.buf = append(make([]byte, 0, 2*readSize), r.buf[r.pos:]...)
	case cap(r.buf)-rest < readSize:
		r.buf = append(make([]byte, 0, max(2*cap(r.buf), 2*readSize)), r.buf[r.pos:]...)
	case r.pos > 0:
		r.buf = r.buf[:copy(r.buf, r.buf[r.pos:])]
	}
	r.pos = 0
	n, err := r.file.Read(r.buf[len(r.buf):cap(r.buf)])
	r.buf = r.buf[:len(r.buf)+n]
	if err == io.EOF {
		r.eof = true
		return nil
	}
	return err
}

// parseCommand parses the command at the front of b. resp.Parser reads
// what clients may send, and an append-only file is held to less:
//   - an inline command is an error (Redis's loader, too, wants '*');
//   - "*0" and "*-1", which Parse consumes and skips, are errors, as a
//     count below 1 is in Redis's loader;
//   - the bytes must be exactly what resp.AppendCommandBytes writes for
//     the arguments read. Parse, like Redis's networking code, does not
//     check the CRLF ending a header line or following bulk data; here a
//     bulk not followed by CRLF (a length that does not match its data)
//     is corrupt. This also refuses lengths written with a '+' or leading
//     zeros, which no writer produces.
//
// A command cut short by the end of b is resp.ErrIncomplete.
func parseCommand(p *resp.Parser, b []byte) ([][]byte, int, error) {
	if b[0] != '*' {
		line := b
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		return nil, 0, badFormat("expected '*<count>\\r\\n', got %q", prefix(line, 32))
	}
	args, n, err := p.Parse(b)
	if err != nil {
		if pe, ok := err.(*resp.ProtocolError); ok {
			return nil, 0, badFormat("%s", pe.Detail)
		}
		return nil, 0, err
	}
	if count, _ := ascii.ParseInt(headerDigits(b)); count < 1 {
		return nil, 0, badFormat("multibulk count %q out of range 1..%d", headerDigits(b), maxArgs)
	}
	if at, want := misframed(b[:n], args); want != nil {
		return nil, 0, badFormat("expected %q at byte %d of the command, got %q", want, at, prefix(b[at:], len(want)))
	}
	return args, n, nil
}

// misframed compares cmd with what resp.AppendCommandBytes writes for args,
// which are slices of cmd, and returns where they first differ and the
// bytes expected there (nil if nowhere). The data of each argument is cmd's
// own, so only the framing around it is compared.
func misframed(cmd []byte, args [][]byte) (at int, want []byte) {
	var line [24]byte
	h := resp.AppendArrayHeader(line[:0], len(args))
	if !bytes.HasPrefix(cmd, h) {
		return 0, bytes.Clone(h)
	}
	at = len(h)
	for _, a := range args {
		h = strconv.AppendInt(append(line[:0], '$'), int64(len(a)), 10)
		h = append(h, '\r', '\n')
		if !bytes.HasPrefix(cmd[at:], h) {
			return at, bytes.Clone(h)
		}
		at += len(h) + len(a)
		if !bytes.HasPrefix(cmd[at:], []byte("\r\n")) {
			return at, []byte("\r\n")
		}
		at += 2
	}
	return at, nil
}

// headerDigits returns the count of the header line at the front of b.
func headerDigits(b []byte) []byte {
	line := b[1:]
	if i := bytes.IndexByte(line, '\r'); i >= 0 {
		line = line[:i]
	}
	return prefix(line, 32)
}

func prefix(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
