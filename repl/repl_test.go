package repl

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

const mark = "0123456789abcdef0123456789abcdef01234567"

func TestParsePSYNCReply(t *testing.T) {
	id := strings.Repeat("a", 40)
	for _, tc := range []struct {
		line string
		want Resync
		err  error
	}{
		{"+FULLRESYNC " + id + " 123", Resync{Full: true, ID: id, Offset: 123}, nil},
		{"+CONTINUE", Resync{}, nil},
		{"+CONTINUE " + id, Resync{ID: id}, nil},
		{"-NOMASTERLINK Can't SYNC while not connected with my master", Resync{}, ErrTryAgain},
		{"-LOADING Redis is loading the dataset in memory", Resync{}, ErrTryAgain},
		{"-ERR unknown command 'PSYNC'", Resync{}, ErrNoPSYNC},
	} {
		got, err := ParsePSYNCReply(tc.line)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%q: %+v, %v; want %+v, %v", tc.line, got, err, tc.want, tc.err)
		}
	}
	for _, bad := range []string{"+FULLRESYNC", "+FULLRESYNC abc 1", "+FULLRESYNC " + id + " -1", "+FULLRESYNC " + id + " x", "+CONTINUE zz", "+OK", ""} {
		if _, err := ParsePSYNCReply(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestReadLineSkipsKeepaliveNewlines(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("\n\n\n+FULLRESYNC x 0\r\n"))
	pings := 0
	line, err := ReadLine(r, func() { pings++ })
	if err != nil || line != "+FULLRESYNC x 0" || pings != 3 {
		t.Fatalf("%q %v after %d newlines", line, err, pings)
	}
	if _, err := ReadLine(bufio.NewReader(strings.NewReader("+OK")), nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a line cut short: %v", err)
	}
	long := strings.Repeat("x", MaxLine+10) + "\r\n"
	if _, err := ReadLine(bufio.NewReaderSize(strings.NewReader(long), 16), nil); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("a long line: %v", err)
	}
}

func TestCopyPayloadBothForms(t *testing.T) {
	body := bytes.Repeat([]byte("REDIS0010 payload "), 10000)
	stream := "*1\r\n$4\r\nPING\r\n"
	for _, tc := range []struct {
		name   string
		header string
		in     string
	}{
		{"disk", "$" + itoa(len(body)), string(body) + stream},
		{"diskless", "$EOF:" + mark, string(body) + mark + stream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePayloadHeader(tc.header)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int{16, 4096, 1 << 20} {
				r := bufio.NewReaderSize(strings.NewReader(tc.in), size)
				var out bytes.Buffer
				var last int64
				n, err := CopyPayload(&out, r, p, func(n int64) {
					if n < last {
						t.Fatalf("progress went back from %d to %d", last, n)
					}
					last = n
				})
				if err != nil || n != int64(len(body)) || !bytes.Equal(out.Bytes(), body) || last != n {
					t.Fatalf("buffer %d: %d bytes (progress said %d), %v", size, n, last, err)
				}
				rest, _ := io.ReadAll(r)
				if string(rest) != stream {
					t.Fatalf("buffer %d: the stream after the payload is %q", size, rest)
				}
			}
		})
	}
}

func TestCopyPayloadCutShort(t *testing.T) {
	for _, header := range []string{"$100", "$EOF:" + mark} {
		p, _ := ParsePayloadHeader(header)
		r := bufio.NewReader(strings.NewReader("REDIS0010 only part"))
		if _, err := CopyPayload(io.Discard, r, p, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: %v, want an unexpected EOF", header, err)
		}
	}
}

func TestParsePayloadHeaderRefuses(t *testing.T) {
	for _, bad := range []string{"", "+OK", "$-5", "$abc", "$EOF:short", "-ERR no"} {
		if _, err := ParsePayloadHeader(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzHandshake: no reply or payload header crashes the parsers, and a
// payload copied through any buffer size comes out whole or as an error.
func FuzzHandshake(f *testing.F) {
	f.Add("+FULLRESYNC "+strings.Repeat("a", 40)+" 1", "$EOF:"+mark, []byte("abc"+mark+"rest"), 16)
	f.Add("+CONTINUE", "$3", []byte("abcrest"), 1)
	f.Fuzz(func(t *testing.T, reply, header string, in []byte, size int) {
		_, _ = ParsePSYNCReply(reply)
		p, err := ParsePayloadHeader(header)
		if err != nil || p.Length > 1<<20 {
			return
		}
		size = min(max(size, 16), 1<<16)
		var out bytes.Buffer
		n, err := CopyPayload(&out, bufio.NewReaderSize(bytes.NewReader(in), size), p, nil)
		if n != int64(out.Len()) {
			t.Fatalf("reported %d bytes, wrote %d", n, out.Len())
		}
		if err == nil && p.Length < 0 && !bytes.Contains(in, append(out.Bytes(), p.Mark...)) {
			t.Fatalf("the copy and the mark are not in the input")
		}
	})
}
