package aof

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
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

// maxArgs and maxBulk bound what the loader allocates for one command, so a
// corrupt length cannot ask for gigabytes: Redis's own limits.
const (
	maxArgs = 1 << 31
	maxBulk = 512 << 20
)

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
	r := &reader{br: bufio.NewReaderSize(f, 1<<20)}
	var args [][]byte
	nextProgress := int64(16 << 20)
	multiAt := int64(-1) // offset of a MULTI whose EXEC has not been read
	for {
		start := r.off
		args, err = r.command(args[:0])
		if err == io.EOF && r.off == start {
			if multiAt < 0 {
				break
			}
			// A transaction without its EXEC: cut it off whole, so that
			// a replay applies all of a transaction or none (Redis's
			// "Revert incomplete MULTI/EXEC transaction").
			err = errTruncated
		}
		if err == errTruncated || err == io.EOF || err == io.ErrUnexpectedEOF {
			if multiAt >= 0 {
				start = multiAt
			}
			cut := r.off - start
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
			return st, &CorruptError{Path: path, Offset: start, Reason: err.Error()}
		}
		switch {
		case isName(args[0], "multi"):
			multiAt = start
		case isName(args[0], "exec"):
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

// reader parses RESP multibulk commands from a stream, counting offsets.
type reader struct {
	br    *bufio.Reader
	off   int64
	arena []byte // the current command's arguments, each followed by CRLF
	ends  []int  // where each argument ends in arena
}

// command reads one command into args. At a clean end of file it returns
// io.EOF without consuming anything; an end inside a command is
// errTruncated; anything else malformed is a descriptive error.
func (r *reader) command(args [][]byte) ([][]byte, error) {
	r.arena, r.ends = r.arena[:0], r.ends[:0]
	if cap(r.arena) > 1<<20 {
		r.arena = nil // after a huge value, do not pin it for the rest of the load
	}
	n, err := r.header('*')
	if err != nil {
		return args, err
	}
	if n < 1 || n > maxArgs {
		return args, fmt.Errorf("multibulk count %d out of range 1..%d", n, maxArgs)
	}
	for i := int64(0); i < n; i++ {
		l, err := r.header('$')
		if err == io.EOF {
			return args, errTruncated
		}
		if err != nil {
			return args, err
		}
		if l < 0 || l > maxBulk {
			return args, fmt.Errorf("bulk length %d out of range 0..%d", l, maxBulk)
		}
		start := len(r.arena)
		r.arena = slices.Grow(r.arena, int(l)+2)[:start+int(l)+2]
		b := r.arena[start:]
		m, err := io.ReadFull(r.br, b)
		r.off += int64(m)
		if err != nil {
			return args, errTruncated
		}
		if b[l] != '\r' || b[l+1] != '\n' {
			return args, fmt.Errorf("bulk of length %d not followed by CRLF", l)
		}
		r.ends = append(r.ends, len(r.arena)-2)
	}
	// The arguments are slices of one arena, reused by the next command:
	// cut only now, since growing the arena may have moved it.
	from := 0
	for _, end := range r.ends {
		args = append(args, r.arena[from:end:end])
		from = end + 2
	}
	return args, nil
}

// header reads a line "<kind><integer>\r\n".
func (r *reader) header(kind byte) (int64, error) {
	line, err := r.br.ReadSlice('\n')
	r.off += int64(len(line))
	if err == io.EOF {
		if len(line) == 0 {
			return 0, io.EOF
		}
		return 0, errTruncated
	}
	if err == bufio.ErrBufferFull {
		return 0, fmt.Errorf("header line longer than %d bytes", r.br.Size())
	}
	if err != nil {
		return 0, err
	}
	if len(line) < 3 || line[0] != kind || line[len(line)-2] != '\r' {
		return 0, fmt.Errorf("expected '%c<integer>\\r\\n', got %q", kind, truncate(line, 32))
	}
	n, err := strconv.ParseInt(string(line[1:len(line)-2]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad integer in %q", truncate(line, 32))
	}
	return n, nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// isName reports whether a command name is name (lower case), in any case.
func isName(arg []byte, name string) bool {
	if len(arg) != len(name) {
		return false
	}
	for i := range arg {
		if arg[i]|0x20 != name[i] {
			return false
		}
	}
	return true
}
