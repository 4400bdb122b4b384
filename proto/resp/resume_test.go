package resp

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// feed parses stream as an event loop would: chunks arrive, unconsumed
// bytes are copied to a fresh buffer (so old arguments cannot alias the new
// bytes) and presented again with the next chunk appended.
func feed(t *testing.T, p *Parser, stream []byte, chunk func() int) (cmds [][]string, err error) {
	t.Helper()
	var pendingBytes []byte
	for off := 0; off < len(stream) || len(pendingBytes) > 0; {
		k := min(chunk(), len(stream)-off)
		buf := append(bytes.Clone(pendingBytes), stream[off:off+k]...)
		off += k
		for {
			args, n, err := p.Parse(buf)
			if errors.Is(err, ErrIncomplete) {
				break
			}
			if err != nil {
				return cmds, err
			}
			if len(args) > 0 {
				cmds = append(cmds, strs(args))
			}
			buf = buf[n:]
		}
		pendingBytes = buf
		if off == len(stream) {
			break
		}
	}
	return cmds, nil
}

func largeCommand(n int, rng *rand.Rand) []string {
	args := []string{"MSET"}
	for i := 0; i < n; i++ {
		args = append(args, strings.Repeat(string(rune('a'+i%26)), rng.Intn(40)))
	}
	return args
}

func TestParseResumesLargeCommandAcrossReads(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	want := [][]string{largeCommand(2000, rng), {"PING"}, largeCommand(300, rng), largeCommand(70, rng)}
	var stream []byte
	for _, c := range want {
		stream = AppendCommand(stream, c...)
	}
	for _, size := range []int{50, 500, 4096, 65536} {
		var p Parser
		got, err := feed(t, &p, stream, func() int { return 1 + rng.Intn(size) })
		if err != nil {
			t.Fatalf("chunks up to %d: %v", size, err)
		}
		if len(got) != len(want) {
			t.Fatalf("chunks up to %d: %d commands, want %d", size, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("chunks up to %d: command %d differs (%d args, want %d)", size, i, len(got[i]), len(want[i]))
			}
		}
	}
}

func TestParseResumeReportsLaterErrors(t *testing.T) {
	cmd := AppendCommand(nil, largeCommand(200, rand.New(rand.NewSource(2)))...)
	cut := len(cmd) / 2
	var p Parser
	if _, _, err := p.Parse(cmd[:cut]); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("first half: %v", err)
	}
	// The rest of the stream is corrupt: the parser must notice it after
	// resuming, with Redis's text.
	bad := append(bytes.Clone(cmd[:cut]), []byte("$x\r\n"+strings.Repeat("z", 5000))...)
	_, _, err := p.Parse(bad)
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("corrupt continuation: %v", err)
	}
	if pe.Msg != msgInvalidBulk && !strings.HasPrefix(pe.Msg, "ERR Protocol error: expected '$'") {
		t.Errorf("corrupt continuation: %q", pe.Msg)
	}
}

func TestParseDropsResumeStateForOtherBuffers(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	a := AppendCommand(nil, largeCommand(100, rng)...)
	bArgs := largeCommand(100, rng)
	bArgs[0] = "DEL"
	b := AppendCommand(nil, bArgs...)
	var p Parser
	if _, _, err := p.Parse(a[:len(a)-10]); !errors.Is(err, ErrIncomplete) {
		t.Fatal(err)
	}
	args, n, err := p.Parse(b)
	if err != nil || n != len(b) || !slices.Equal(strs(args), bArgs) {
		t.Fatalf("unrelated buffer after a pending one: %d args, n %d, %v", len(args), n, err)
	}
	// Reset makes the same explicit.
	if _, _, err := p.Parse(a[:len(a)-10]); !errors.Is(err, ErrIncomplete) {
		t.Fatal(err)
	}
	p.Reset()
	if args, _, err := p.Parse(AppendCommand(nil, "PING")); err != nil || len(args) != 1 {
		t.Fatalf("after Reset: %q, %v", strs(args), err)
	}
}

// BenchmarkParseLargeCommandInReads parses a 100k-argument command that
// arrives in 64 KiB reads, the case resuming exists for.
func BenchmarkParseLargeCommandInReads(b *testing.B) {
	args := make([]string, 100000)
	for i := range args {
		args[i] = fmt.Sprintf("k%07d", i)
	}
	cmd := AppendCommand(nil, args...)
	b.SetBytes(int64(len(cmd)))
	b.ReportAllocs()
	var p Parser
	buf := make([]byte, 0, len(cmd))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = buf[:0]
		for off := 0; off < len(cmd); {
			k := min(64<<10, len(cmd)-off)
			buf = append(buf, cmd[off:off+k]...)
			off += k
			got, _, err := p.Parse(buf)
			if err == nil && len(got) != len(args) {
				b.Fatalf("%d args", len(got))
			}
		}
	}
}
