package aof

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestLoadRefusesWhatOnlyClientsMaySend: the loader reads with resp.Parser,
// which accepts what clients may send; an append-only file holds only what
// AppendCommand writes, so each of these is corrupt at its offset, and the
// reason names what was wrong.
func TestLoadRefusesWhatOnlyClientsMaySend(t *testing.T) {
	good := cmds([]string{"SET", "a", "1"})
	cases := []struct{ name, bad, reason string }{
		{"inline command", "PING\r\n", `expected '*<count>\r\n', got "PING\r\n"`},
		{"empty multibulk", "*0\r\n", `multibulk count "0" out of range`},
		{"null multibulk", "*-1\r\n", `multibulk count "-1" out of range`},
		{"empty multibulk before a command", "*0\r\n*1\r\n$4\r\nPING\r\n", `multibulk count "0" out of range`},
		{"header not ended by CRLF", "*1\rX$4\r\nPING\r\n", `expected "*1\r\n" at byte 0`},
		{"bulk header not ended by CRLF", "*1\r\n$4\r PING\r\n", `expected "$4\r\n" at byte 4`},
		{"length with a leading zero", "*1\r\n$04\r\nPING\r\n", `bulk length "04" is not a non-negative integer`},
		{"count with a plus", "*+1\r\n$4\r\nPING\r\n", `multibulk length "+1" is not an integer`},
		{"length shorter than its data", "*1\r\n$2\r\nGET\r\n", `expected "\r\n" at byte 10 of the command, got "T\r"`},
		{"length of more than 20 digits", "*1\r\n$" + strings.Repeat("9", 70000) + "\r\n", `bulk length "99999999999999999999999999999999" is not`},
		{"too many arguments", "*2147483649\r\n", "exceeds limit 2147483648"},
	}
	for _, c := range cases {
		data := append(append(append([]byte{}, good...), c.bad...), good...)
		_, _, path, err := loadBytes(t, data, true)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Offset != int64(len(good)) || !strings.Contains(ce.Reason, c.reason) {
			t.Errorf("%s: %v, want a CorruptError at %d saying %q", c.name, err, len(good), c.reason)
			continue
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
			t.Errorf("%s: the file was changed", c.name)
		}
	}
}

// TestLoadLargeCommands: a value of several read buffers, and a command of
// many arguments that spans reads (which the parser resumes rather than
// re-reads), load whole; cut anywhere inside, each is a truncated tail.
func TestLoadLargeCommands(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*readSize/16+5) // 3 MiB and a bit
	many := [][]byte{[]byte("RPUSH"), []byte("list")}
	for i := 0; i < 300000; i++ {
		many = append(many, []byte(fmt.Sprintf("e%d", i)))
	}
	head := cmds([]string{"SET", "a", "1"})
	data := AppendCommand(append([]byte{}, head...), []byte("SET"), []byte("big"), big)
	bigEnd := len(data)
	data = AppendCommand(data, many...)
	var lens []int
	var last []byte
	stats, err := Load(writeFile(t, data), false, func(args [][]byte) error {
		lens = append(lens, len(args))
		last = append(last[:0], args[len(args)-1]...)
		if len(args) == 3 && string(args[1]) == "big" && !bytes.Equal(args[2], big) {
			t.Error("the big value came back different")
		}
		return nil
	}, nil)
	if err != nil || fmt.Sprint(lens) != fmt.Sprint([]int{3, 3, len(many)}) || string(last) != "e299999" || stats.Bytes != int64(len(data)) {
		t.Fatalf("loaded %v (last %q), %+v, %v", lens, last, stats, err)
	}
	for _, cut := range []int{len(head) + 10, len(head) + readSize, bigEnd - 1, bigEnd + 5, bigEnd + readSize + 7, len(data) - 1} {
		path := writeFile(t, data[:cut])
		n := 0
		st, err := Load(path, true, func([][]byte) error { n++; return nil }, nil)
		wantCommands, wantBytes := 1, len(head)
		if cut > bigEnd {
			wantCommands, wantBytes = 2, bigEnd
		}
		if err != nil || n != wantCommands || st.Bytes != int64(wantBytes) || st.Truncated != int64(cut-wantBytes) {
			t.Errorf("cut at %d: %d commands, %+v, %v; want %d commands, %d bytes", cut, n, st, err, wantCommands, wantBytes)
		}
	}
}

// FuzzLoadReadsBackWhatAppendCommandWrote: any sequence of commands written
// with AppendCommand loads back argument for argument.
func FuzzLoadReadsBackWhatAppendCommandWrote(f *testing.F) {
	f.Add([]byte("SET k v"), byte(3))
	f.Add([]byte("\r\n*1\r\n$0\r\n"), byte(1))
	f.Add([]byte(""), byte(0))
	f.Fuzz(func(t *testing.T, text []byte, width byte) {
		var want [][][]byte
		var data []byte
		fields := bytes.Split(text, []byte(" "))
		step := int(width%8) + 1
		for i := 0; i < len(fields); i += step {
			args := fields[i:min(i+step, len(fields))]
			want = append(want, args)
			data = AppendCommand(data, args...)
		}
		var got [][][]byte
		_, err := Load(writeFile(t, data), false, func(args [][]byte) error {
			c := make([][]byte, len(args))
			for i, a := range args {
				c[i] = bytes.Clone(a)
			}
			got = append(got, c)
			return nil
		}, nil)
		if err != nil || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("wrote %q, loaded %q, %v", want, got, err)
		}
	})
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	path := t.TempDir() + "/appendonly.aof"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// BenchmarkLoad replays a file of small SETs.
func BenchmarkLoad(b *testing.B) {
	var data []byte
	for i := 0; len(data) < 8<<20; i++ {
		data = AppendCommand(data, []byte("SET"), []byte(fmt.Sprintf("key:%d", i)), []byte("value"))
	}
	path := writeFile(b, data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path, false, func([][]byte) error { return nil }, nil); err != nil {
			b.Fatal(err)
		}
	}
}
