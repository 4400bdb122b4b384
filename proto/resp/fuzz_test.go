package resp

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

var parseSeeds = []string{
	"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
	"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n*1\r\n$4\r\nPING\r\n",
	"*0\r\n*-1\r\n\r\nPING\r\n",
	"*1\rX$4\rYPINGxy",
	"*x\r\n", "*1\r\n$x\r\n", "*1\r\n:1\r\n", "*1\r\n\r\n", "*1\r\n$-1\r\n", "*99999999999999999999\r\n",
	"*-9223372036854775808\r\n", "*1\r\n$9223372036854775807\r\n",
	"GET k\r\n", `SET k "a\x41\n\"" 'b\'c'` + "\n", `ECHO ab"c d"` + "\n", `"a"b` + "\n", `'x` + "\n",
	`"\` + "\n", "a\vb\f\tc\rd\n", "\x00\n", " \t\r\n",
}

// FuzzParse checks Parse's promises on arbitrary input: no panic, n within
// the input, an error consumes nothing, arguments alias the consumed bytes or
// the parser's scratch, no prefix of a command parses differently, a parsed
// command survives re-encoding, and inline splitting agrees with a literal
// port of Redis's sdssplitargs.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	defer func(old int64) { resumeMinArgs = old }(resumeMinArgs)
	resumeMinArgs = 2 // exercise resuming on the small inputs a fuzzer makes
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		if len(data) <= 4096 { // feed copies per read: quadratic
			checkChunked(t, data)
		}
		checkParse(t, &Parser{}, data, true)
		checkParse(t, &Parser{Limits: &Limits{MaxBulkLen: 8, MaxMultibulkLen: 4, MaxInlineLen: 16}}, data, false)
		checkParse(t, &Parser{Unauthenticated: true}, data, false)
		if !bytes.Equal(data, orig) {
			t.Fatalf("Parse modified its input")
		}
		if i := bytes.IndexByte(data, '\n'); i >= 0 && bytes.IndexByte(data[:i], 0) < 0 {
			line := bytes.TrimSuffix(data[:i], []byte("\r"))
			var p Parser
			got, ok := p.splitArgs(line)
			want, wantOK := refSplitArgs(line)
			if ok != wantOK || (ok && !slices.Equal(strs(got), strs(want))) {
				t.Fatalf("splitArgs(%q) = %q, %v; sdssplitargs gives %q, %v", line, strs(got), ok, strs(want), wantOK)
			}
		}
	})
}

// checkChunked feeds data in small reads to one Parser, as an event loop
// would, and checks that it yields the same commands and the same error as
// parsing the whole input at once.
func checkChunked(t *testing.T, data []byte) {
	var whole Parser
	want, wantErr := feed(t, &whole, data, func() int { return len(data) + 1 })
	size := 1
	if len(data) > 0 {
		size += int(data[0] % 13)
	}
	var chunked Parser
	got, err := feed(t, &chunked, data, func() int { return size })
	if len(got) != len(want) || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%q in %d-byte reads: %q, %v; whole: %q, %v", data, size, got, err, want, wantErr)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("%q in %d-byte reads: command %d %q, whole %q", data, size, i, got[i], want[i])
		}
	}
}

func checkParse(t *testing.T, p *Parser, buf []byte, deep bool) {
	for pos := 0; pos < len(buf); {
		rest := buf[pos:]
		args, n, err := p.Parse(rest)
		if err != nil {
			var pe *ProtocolError
			if !errors.Is(err, ErrIncomplete) && !errors.As(err, &pe) {
				t.Fatalf("Parse(%q): unexpected error type %T", rest, err)
			}
			if n != 0 || args != nil {
				t.Fatalf("Parse(%q): n %d, %d args with error %v", rest, n, len(args), err)
			}
			return
		}
		if n <= 0 || n > len(rest) {
			t.Fatalf("Parse(%q): n = %d of %d bytes", rest, n, len(rest))
		}
		var scratch []byte
		if p.rare != nil {
			scratch = p.rare.scratch[:cap(p.rare.scratch)]
		}
		for _, a := range args {
			if !within(a, rest[:n]) && !within(a, scratch) {
				t.Fatalf("Parse(%q): arg %q is neither in the consumed input nor in scratch", rest, a)
			}
		}
		if deep {
			if n <= 256 { // quadratic: keep the fuzzer fast
				checkPrefixes(t, rest, n)
			}
			if len(args) > 0 {
				checkReencode(t, args)
			}
		}
		pos += n
	}
}

// checkPrefixes asserts that every strict prefix of a command is incomplete
// (or just skips the blank lines in front of it): a server that sees the
// command split across reads must not act on part of it.
func checkPrefixes(t *testing.T, buf []byte, n int) {
	var p Parser
	for k := 0; k < n; k++ {
		args, m, err := p.Parse(buf[:k])
		if errors.Is(err, ErrIncomplete) || (err == nil && len(args) == 0 && m <= k) {
			continue
		}
		t.Fatalf("prefix %q of %q: %q, %d, %v", buf[:k], buf[:n], strs(args), m, err)
	}
}

func checkReencode(t *testing.T, args [][]byte) {
	want := strs(args)
	enc := AppendCommandBytes(nil, args...)
	var p Parser
	got, n, err := p.Parse(enc)
	if err != nil || n != len(enc) || !slices.Equal(strs(got), want) {
		t.Fatalf("re-encoded %q parsed as %q, %d, %v", want, strs(got), n, err)
	}
}

// refSplitArgs is a literal port of Redis 7's sdssplitargs (src/sds.c) over
// a NUL-terminated copy, kept deliberately close to the C to serve as the
// reference for splitArgs.
func refSplitArgs(line []byte) ([][]byte, bool) {
	s := append(bytes.Clone(line), 0)
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	cIsSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' }
	var vector [][]byte
	p := 0
	for {
		for at(p) != 0 && cIsSpace(at(p)) {
			p++
		}
		if at(p) == 0 {
			return vector, true
		}
		inq, insq, done := false, false, false
		current := []byte{}
		for !done {
			if inq {
				if at(p) == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)) {
					current = append(current, unhex(at(p+2))*16+unhex(at(p+3)))
					p += 3
				} else if at(p) == '\\' && at(p+1) != 0 {
					p++
					current = append(current, unescape(at(p)))
				} else if at(p) == '"' {
					if at(p+1) != 0 && !cIsSpace(at(p+1)) {
						return nil, false
					}
					done = true
				} else if at(p) == 0 {
					return nil, false
				} else {
					current = append(current, at(p))
				}
			} else if insq {
				if at(p) == '\\' && at(p+1) == '\'' {
					p++
					current = append(current, '\'')
				} else if at(p) == '\'' {
					if at(p+1) != 0 && !cIsSpace(at(p+1)) {
						return nil, false
					}
					done = true
				} else if at(p) == 0 {
					return nil, false
				} else {
					current = append(current, at(p))
				}
			} else {
				switch at(p) {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					current = append(current, at(p))
				}
			}
			if at(p) != 0 {
				p++
			}
		}
		vector = append(vector, current)
	}
}

var replySeeds = []string{
	"+OK\r\n", "-ERR x\r\n", ":-1\r\n", "$5\r\nhello\r\n", "$-1\r\n", "*-1\r\n", "*2\r\n$1\r\na\r\n:1\r\n",
	"_\r\n", ",1.5\r\n", ",inf\r\n", "#t\r\n", "(123\r\n", "=8\r\ntxt:abcd\r\n", "!3\r\nERR\r\n",
	"%1\r\n+k\r\n*1\r\n_\r\n", "~1\r\n#f\r\n", ">2\r\n+a\r\n+b\r\n", "|1\r\n+a\r\n:1\r\n+v\r\n",
	"$9223372036854775807\r\n", "*4294967296\r\n", "x\r\n", "+a\rb",
}

// FuzzReadReply checks the reply reader on arbitrary input: no panic, n
// within the input, Data aliasing the consumed bytes, every strict prefix of
// a complete reply reported incomplete, and SkipReply covering at least the
// header ReadReply read.
func FuzzReadReply(f *testing.F) {
	for _, s := range replySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, n, err := ReadReply(data)
		if err != nil {
			if n != 0 || (!errors.Is(err, ErrIncomplete) && !errors.Is(err, ErrInvalidReply)) {
				t.Fatalf("ReadReply(%q) = %d, %v", data, n, err)
			}
		} else {
			if n <= 0 || n > len(data) {
				t.Fatalf("ReadReply(%q) n = %d", data, n)
			}
			if r.Data != nil && !within(r.Data, data[:n]) {
				t.Fatalf("ReadReply(%q) Data %q outside the reply", data, r.Data)
			}
			for k := 0; k < n; k++ {
				if _, _, err := ReadReply(data[:k]); !errors.Is(err, ErrIncomplete) {
					t.Fatalf("prefix %q of reply %q: %v", data[:k], data[:n], err)
				}
			}
		}
		sn, serr := SkipReply(data)
		if serr != nil {
			if sn != 0 {
				t.Fatalf("SkipReply(%q) = %d with %v", data, sn, serr)
			}
			return
		}
		if err != nil || sn < n || sn > len(data) {
			t.Fatalf("SkipReply(%q) = %d but ReadReply = %d, %v", data, sn, n, err)
		}
		if sn <= 256 {
			for k := 0; k < sn; k++ {
				if _, err := SkipReply(data[:k]); !errors.Is(err, ErrIncomplete) {
					t.Fatalf("prefix %q of whole reply %q: %v", data[:k], data[:sn], err)
				}
			}
		}
	})
}

// isHex and unhex are the model's own (sds.c's is_hex_digit and
// hex_digit_to_int), kept apart from the parser's ascii.Unhex so the model
// checks it rather than shares it.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
