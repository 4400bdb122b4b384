package resp

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// strs turns parsed arguments into strings for comparison.
func strs(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

func TestParseAcceptsCommands(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
		n    int // bytes consumed; -1 means all of in
	}{
		{"multibulk", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", []string{"GET", "k"}, -1},
		{"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{"ECHO", ""}, -1},
		{"binary bulk", "*1\r\n$5\r\na\r\n\x00b\r\n", []string{"a\r\n\x00b"}, -1},
		{"only first of pipeline", "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", []string{"PING"}, 14},
		// Redis skips any byte after '\r' in headers and any two bytes after data.
		{"header CR then any byte", "*1\rX$4\rYPING\r\n", []string{"PING"}, -1},
		{"data then any two bytes", "*1\r\n$4\r\nPINGxy", []string{"PING"}, -1},
		{"star zero skipped", "*0\r\n*1\r\n$4\r\nPING\r\n", []string{"PING"}, -1},
		{"star minus one skipped", "*-1\r\n*1\r\n$4\r\nPING\r\n", []string{"PING"}, -1},
		{"star minus five skipped", "*-5\r\n", nil, 5},
		{"only star zero", "*0\r\n", nil, 4},
		{"inline", "GET k\r\n", []string{"GET", "k"}, -1},
		{"inline LF only", "GET k\n", []string{"GET", "k"}, -1},
		{"inline blanks", " \t GET   k \v\f\r\n", []string{"GET", "k"}, -1},
		{"inline vertical tab inside token", "a\vb\n", []string{"a\vb"}, -1},
		{"inline bare CR splits", "a\rb\n", []string{"a", "b"}, -1},
		{"inline double quotes", `SET k "hello world"` + "\r\n", []string{"SET", "k", "hello world"}, -1},
		{"inline empty quotes", `SET k ""` + "\n", []string{"SET", "k", ""}, -1},
		{"inline escapes", `ECHO "a\n\r\t\b\a\\\"\q"` + "\n", []string{"ECHO", "a\n\r\t\b\a\\\"q"}, -1},
		{"inline hex", `ECHO "\x41\x7a\xff\x0"` + "\n", []string{"ECHO", "Az\xffx0"}, -1},
		{"inline hex uppercase", `ECHO "\xAB"` + "\n", []string{"ECHO", "\xab"}, -1},
		{"inline single quotes", `ECHO 'it\'s "raw" \n'` + "\n", []string{"ECHO", `it's "raw" \n`}, -1},
		{"inline quote mid token", `ECHO ab"c d"` + "\n", []string{"ECHO", "abc d"}, -1},
		{"inline two quoted parts", `ECHO 'a'` + "\t" + `"b"` + "\n", []string{"ECHO", "a", "b"}, -1},
		{"inline quote then vertical tab", "ECHO \"a\"\vb\n", []string{"ECHO", "a", "b"}, -1},
		{"inline backslash outside quotes", `ECHO a\nb` + "\n", []string{"ECHO", `a\nb`}, -1},
		{"blank lines skipped", "\r\n\n  \r\nPING\r\n", []string{"PING"}, -1},
		{"only blank lines", "\r\n\r\n", nil, 4},
		{"blank then incomplete", "\r\nPIN", nil, 2},
		{"blank then error", "\r\n*x\r\n", nil, 2},
		{"inline NUL is a byte", "ECHO a\x00b\n", []string{"ECHO", "a\x00b"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Parser
			args, n, err := p.Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse(%q) error %v", tt.in, err)
			}
			want := tt.n
			if want < 0 {
				want = len(tt.in)
			}
			if n != want {
				t.Errorf("Parse(%q) n = %d, want %d", tt.in, n, want)
			}
			if got := strs(args); !slices.Equal(got, tt.want) {
				t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseReportsIncomplete(t *testing.T) {
	for _, in := range []string{
		"", "*", "*2", "*2\r", "*2\r\n", "*2\r\n$", "*2\r\n$3", "*2\r\n$3\r",
		"*2\r\n$3\r\nGET", "*2\r\n$3\r\nGET\r", "*2\r\n$3\r\nGET\r\n",
		"*2\r\n$3\r\nGET\r\n$1\r\nk", "*2\r\n$3\r\nGET\r\n$1\r\nk\r",
		"*1\r\n$536870912\r\nabc", // a huge claim waits, it does not allocate
		"*1\r\nfoo",               // wrong type byte, but Redis waits for the CR first
		"*1\r\n\r",                // line of a bare CR still needs the byte after it
		"GET k", "GET k\r", `SET "a b`,
	} {
		var p Parser
		args, n, err := p.Parse([]byte(in))
		if !errors.Is(err, ErrIncomplete) || n != 0 || args != nil {
			t.Errorf("Parse(%q) = %q, %d, %v; want ErrIncomplete", in, strs(args), n, err)
		}
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	big := strings.Repeat("x", 64*1024+1)
	tests := []struct {
		name, in, want string
		lim            Limits
		unauth         bool
	}{
		{"count not a number", "*x\r\n", msgInvalidMultibulk, Limits{}, false},
		{"count empty", "*\r\n", msgInvalidMultibulk, Limits{}, false},
		{"count plus sign", "*+1\r\n", msgInvalidMultibulk, Limits{}, false},
		{"count leading zero", "*01\r\n", msgInvalidMultibulk, Limits{}, false},
		{"count minus zero", "*-0\r\n", msgInvalidMultibulk, Limits{}, false},
		{"count space", "*1 \r\n", msgInvalidMultibulk, Limits{}, false},
		{"count overflow", "*99999999999999999999\r\n", msgInvalidMultibulk, Limits{}, false},
		{"count over limit", "*1048577\r\n", msgInvalidMultibulk, Limits{}, false},
		{"count over custom limit", "*3\r\n", msgInvalidMultibulk, Limits{MaxMultibulkLen: 2}, false},
		{"count too long without CR", "*" + big, msgBigMbulkCount, Limits{}, false},
		{"count too long custom", "*12345", msgBigMbulkCount, Limits{MaxInlineLen: 4}, false},
		{"bulk not a number", "*1\r\n$x\r\n", msgInvalidBulk, Limits{}, false},
		{"bulk negative", "*1\r\n$-1\r\n", msgInvalidBulk, Limits{}, false},
		{"bulk empty", "*1\r\n$\r\n", msgInvalidBulk, Limits{}, false},
		{"bulk over proto-max-bulk-len", "*1\r\n$536870913\r\n", msgInvalidBulk, Limits{}, false},
		{"bulk over custom limit", "*1\r\n$11\r\n", msgInvalidBulk, Limits{MaxBulkLen: 10}, false},
		{"bulk header too long", "*1\r\n$" + big, msgBigBulkCount, Limits{}, false},
		{"wrong type byte", "*1\r\n:1\r\n", "ERR Protocol error: expected '$', got ':'", Limits{}, false},
		{"wrong type second arg", "*2\r\n$1\r\na\r\nfoo\r\n", "ERR Protocol error: expected '$', got 'f'", Limits{}, false},
		{"wrong type is CR", "*1\r\n\r\n", "ERR Protocol error: expected '$', got ' '", Limits{}, false},
		{"wrong type is LF", "*1\r\n\n\r\n", "ERR Protocol error: expected '$', got ' '", Limits{}, false},
		{"unterminated double quote", `SET k "abc` + "\r\n", msgUnbalanced, Limits{}, false},
		{"unterminated single quote", "SET k 'abc\n", msgUnbalanced, Limits{}, false},
		{"backslash ends quoted", `SET k "abc\` + "\n", msgUnbalanced, Limits{}, false},
		{"escaped single quote at end", `SET k 'abc\'` + "\n", msgUnbalanced, Limits{}, false},
		{"text after closing double quote", `SET k "a"b` + "\n", msgUnbalanced, Limits{}, false},
		{"text after closing single quote", `SET k 'a'b` + "\n", msgUnbalanced, Limits{}, false},
		{"inline too long without newline", big, msgBigInline, Limits{}, false},
		{"inline line too long", big + "\n", msgBigInline, Limits{}, false},
		{"inline custom limit", "PING\n", msgBigInline, Limits{MaxInlineLen: 3}, false},
		{"unauth multibulk", "*11\r\n", msgUnauthMultibulk, Limits{}, true},
		{"unauth bulk", "*1\r\n$16385\r\n", msgUnauthBulk, Limits{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parser{Limits: &tt.lim, Unauthenticated: tt.unauth}
			args, n, err := p.Parse([]byte(tt.in))
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%.40q) = %q, %d, %v; want ProtocolError", tt.in, strs(args), n, err)
			}
			if pe.Error() != tt.want {
				t.Errorf("error %q, want %q", pe.Error(), tt.want)
			}
			if pe.Detail == "" {
				t.Errorf("error %q has no detail", pe.Error())
			}
			if n != 0 || args != nil {
				t.Errorf("got args %q n %d with an error", strs(args), n)
			}
		})
	}
}

func TestParseUnauthenticatedLimitsAllowSmallCommands(t *testing.T) {
	p := Parser{Unauthenticated: true}
	in := AppendCommand(nil, "AUTH", strings.Repeat("p", 16384))
	args, n, err := p.Parse(in)
	if err != nil || n != len(in) || len(args) != 2 || len(args[1]) != 16384 {
		t.Fatalf("Parse = %d args, n %d, err %v", len(args), n, err)
	}
}

func TestParseDetailNamesValueAndLimit(t *testing.T) {
	var p Parser
	_, _, err := p.Parse([]byte("*1\r\n$600000000\r\n"))
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(pe.Detail, "600000000") || !strings.Contains(pe.Detail, "536870912") {
		t.Errorf("detail %q lacks the value or the limit", pe.Detail)
	}
}

// TestParseEveryPrefixIsIncomplete feeds a pipeline byte by byte: every
// strict prefix of a command must be ErrIncomplete (or skip blank lines), and
// the commands must come out whole and in order.
func TestParseEveryPrefixIsIncomplete(t *testing.T) {
	stream := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n\r\nECHO \"a\\x41\" 'b'\r\n*0\r\n*1\r\n$4\r\nPING\r\n"
	want := [][]string{{"SET", "k", "hello"}, {"ECHO", "aA", "b"}, {"PING"}}
	var p Parser
	var got [][]string
	buf := []byte{}
	for i := 0; i < len(stream); i++ {
		buf = append(buf, stream[i])
		for {
			args, n, err := p.Parse(buf)
			if errors.Is(err, ErrIncomplete) {
				break
			}
			if err != nil {
				t.Fatalf("after %d bytes: %v", i+1, err)
			}
			if n <= 0 || n > len(buf) {
				t.Fatalf("n = %d for %d bytes", n, len(buf))
			}
			if len(args) > 0 {
				got = append(got, strs(args))
			}
			buf = buf[n:]
		}
	}
	if len(buf) != 0 {
		t.Errorf("left %q unconsumed", buf)
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("command %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestParseArgsAreSubslices checks the zero-copy promise: multibulk and
// unescaped inline arguments alias the input.
func TestParseArgsAreSubslices(t *testing.T) {
	var p Parser
	for _, in := range []string{"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", "GET key\r\n", `GET "key"` + "\r\n"} {
		buf := []byte(in)
		args, _, err := p.Parse(buf)
		if err != nil || len(args) != 2 {
			t.Fatalf("Parse(%q) = %q, %v", in, strs(args), err)
		}
		if !within(args[1], buf) {
			t.Errorf("Parse(%q): %q is not a sub-slice of the input", in, args[1])
		}
		if cap(args[1]) != len(args[1]) {
			t.Errorf("Parse(%q): arg capacity %d lets appends overwrite the input", in, cap(args[1]))
		}
	}
}

func TestParseReusesArgSlice(t *testing.T) {
	var p Parser
	cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	p.Parse(cmd)
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := p.Parse(cmd); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Parse allocates %.1f times per command", allocs)
	}
	inline := []byte(`SET k "a\tb" 'c'` + "\r\n")
	p.Parse(inline)
	allocs = testing.AllocsPerRun(100, func() {
		if _, _, err := p.Parse(inline); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("inline Parse allocates %.1f times per command", allocs)
	}
}

func TestParseReleasesHugeArgSlice(t *testing.T) {
	var p Parser
	args := make([]string, maxRetainedArgs+1)
	for i := range args {
		args[i] = "x"
	}
	got, _, err := p.Parse(AppendCommand(nil, args...))
	if err != nil || len(got) != len(args) {
		t.Fatalf("Parse = %d args, %v", len(got), err)
	}
	if _, _, err := p.Parse([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if cap(p.args) > maxRetainedArgs {
		t.Errorf("parser kept %d arg slots after a small command", cap(p.args))
	}
}

// TestReleaseDropsHugeArgSliceWithoutParsing: the idle-connection case, where
// no next command comes to trigger Parse's own release.
func TestReleaseDropsHugeArgSliceWithoutParsing(t *testing.T) {
	var p Parser
	small := AppendCommand(nil, "SET", "k", "v")
	if _, _, err := p.Parse(small); err != nil {
		t.Fatal(err)
	}
	p.Release()
	if p.args == nil {
		t.Error("Release dropped the arg slice of a small command, which is reused")
	}
	args := make([]string, maxRetainedArgs+1)
	for i := range args {
		args[i] = "x"
	}
	if got, _, err := p.Parse(AppendCommand(nil, args...)); err != nil || len(got) != len(args) {
		t.Fatalf("Parse = %d args, %v", len(got), err)
	}
	p.Release()
	if cap(p.args) > maxRetainedArgs {
		t.Errorf("Release kept %d arg slots after a huge command", cap(p.args))
	}
}

func TestParseMinInt64CountIsEmptyCommand(t *testing.T) {
	var p Parser
	in := "*-9223372036854775808\r\n"
	args, n, err := p.Parse([]byte(in))
	if err != nil || n != len(in) || len(args) != 0 {
		t.Errorf("Parse(%q) = %q, %d, %v; want no command, all consumed", in, strs(args), n, err)
	}
}

// within reports whether sub lies inside buf's backing array.
func within(sub, buf []byte) bool {
	if len(sub) == 0 {
		return true
	}
	for i := range buf {
		if &buf[i] == &sub[0] {
			return i+len(sub) <= len(buf)
		}
	}
	return false
}

// TestParseMemoryDoesNotFollowClaims sends headers that claim huge sizes
// without the bytes: the parser must wait without reserving memory for them.
func TestParseMemoryDoesNotFollowClaims(t *testing.T) {
	for _, in := range []string{
		"*1048576\r\n$3\r\nfoo\r\n",
		"*1\r\n$536870912\r\nabc",
		"*1000000\r\n",
		"*2147483647\r\n$3\r\nfoo\r\n",
	} {
		p := Parser{Limits: &Limits{MaxMultibulkLen: 1<<31 - 1}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < 10; i++ {
			p.Reset()
			if _, _, err := p.Parse([]byte(in)); !errors.Is(err, ErrIncomplete) {
				t.Fatalf("Parse(%q) = %v", in, err)
			}
		}
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
			t.Errorf("Parse(%q) x10 allocated %d bytes", in, grew)
		}
	}
}

func TestParseHugeBulkLimitDoesNotOverflow(t *testing.T) {
	p := Parser{Limits: &Limits{MaxBulkLen: 1<<63 - 1}}
	_, _, err := p.Parse([]byte("*1\r\n$9223372036854775807\r\nabc\r\n"))
	if !errors.Is(err, ErrIncomplete) {
		t.Errorf("claim of MaxInt64 bytes: %v, want ErrIncomplete", err)
	}
}

// TestSwapArgsLendsTheSlice: a slice lent with SwapArgs is the one Parse
// fills (no allocation once it is big enough), and swapping back returns
// it, leaving the Parser with what the lender held before.
func TestSwapArgsLendsTheSlice(t *testing.T) {
	var p Parser
	lent := make([][]byte, 0, 8)
	buf := lent
	p.SwapArgs(&buf)
	if buf != nil {
		t.Fatalf("a new Parser had an args slice of %d", cap(buf))
	}
	args, _, err := p.Parse(AppendCommand(nil, "SET", "k", "v"))
	if err != nil || len(args) != 3 {
		t.Fatalf("Parse = %q, %v", args, err)
	}
	if &args[0] != &lent[:1][0] {
		t.Error("Parse did not fill the lent slice")
	}
	p.SwapArgs(&buf)
	if cap(buf) != 8 || &buf[:1][0] != &lent[:1][0] {
		t.Errorf("swapping back returned a slice of cap %d, not the lent one", cap(buf))
	}
	if p.args != nil {
		t.Errorf("the Parser kept a slice of cap %d after swapping back", cap(p.args))
	}
}

// TestParserStaysSmall: a server keeps one Parser per connection, so its
// size is paid 100,000 times at 100k connections; what only large or
// escaped-inline commands need lives behind one pointer.
func TestParserStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(Parser{}); n > 48 {
		t.Errorf("Parser is %d bytes, want at most 48", n)
	}
	var p Parser
	if _, _, err := p.Parse([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")); err != nil || p.rare != nil {
		t.Errorf("a plain command allocated the rare state (err %v)", err)
	}
	if args, _, err := p.Parse([]byte("SET k \"a\\x41\"\r\n")); err != nil || string(args[2]) != "aA" || p.rare == nil {
		t.Errorf("escaped inline: args %q err %v", args, err)
	}
}
