package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// TestSIGTERMAnswersDeepPipeline: 20,000 pipelined GETs of 1 KB values
// (20 MB of replies) are sent before SIGTERM, the client reading nothing
// yet. Then it reads: every reply arrives, in order, and then a clean EOF,
// not a reset, and the server exits 0. This is the README's promise that
// SIGTERM answers every request already received.
func TestSIGTERMAnswersDeepPipeline(t *testing.T) {
	const keys, gets = 100, 20000
	p := startBinary(t)
	values := make([]string, keys)
	var setup []byte
	for i := range values {
		values[i] = fmt.Sprintf("value-%03d-", i) + strings.Repeat("x", 1014)
		setup = append(setup, resp.AppendCommand(nil, "SET", fmt.Sprintf("k%d", i), values[i])...)
	}
	c := p.dial(t)
	rd := bufio.NewReaderSize(c, 64<<10)
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.Write(setup); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < keys; i++ {
		if line, err := rd.ReadString('\n'); err != nil || line != "+OK\r\n" {
			t.Fatalf("SET %d: %q %v", i, line, err)
		}
	}
	var req bytes.Buffer
	for i := 0; i < gets; i++ {
		req.Write(resp.AppendCommand(nil, "GET", fmt.Sprintf("k%d", i%keys)))
	}
	if _, err := c.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the server's output back up
	exited := make(chan error, 1)
	go func() { exited <- p.stop(t, syscall.SIGTERM) }()

	for i := 0; i < gets; i++ {
		v := values[i%keys]
		want := string(resp.AppendBulkString(nil, v))
		got := make([]byte, len(want))
		if _, err := io.ReadFull(rd, got); err != nil {
			t.Fatalf("reply %d of %d: %v; server log:\n%s", i, gets, err, p.stderr.String())
		}
		if string(got) != want {
			t.Fatalf("reply %d is %.20q..., want %.20q...", i, got, want)
		}
	}
	if rest, err := io.ReadAll(rd); err != nil || len(rest) > 0 {
		t.Fatalf("after the last reply: %d more bytes, err %v (want a clean EOF)", len(rest), err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("exit after SIGTERM: %v; log:\n%s", err, p.stderr.String())
	}
}

// TestShutdownCommandStopsCleanly: SHUTDOWN (as redis-cli sends it) stops
// the server as SIGTERM does: exit status 0, the AOF closed, so a write
// acknowledged just before is there after a restart.
func TestShutdownCommandStopsCleanly(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, aofArgs(dir, "no")...)
	c := client(t, p.addr())
	ctx := context.Background()
	if err := c.Set(ctx, "before-shutdown", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	shutdownBy(t, p, "SHUTDOWN", "NOSAVE")
	if log := p.stderr.String(); !strings.Contains(log, "user requested shutdown") || !strings.Contains(log, "stopped cleanly") {
		t.Fatalf("the log does not tell the shutdown:\n%s", log)
	}
	p2 := startBinary(t, aofArgs(dir, "no")...)
	if v := client(t, p2.addr()).Get(ctx, "before-shutdown").Val(); v != "kept" {
		t.Fatalf("after the restart the key is %q, want the value written before SHUTDOWN", v)
	}
}

// shutdownBy sends the SHUTDOWN command args with redis-cli and waits for
// p to exit with status 0.
func shutdownBy(t *testing.T, p *shoalProc, args ...string) {
	t.Helper()
	out, err := exec.Command("redis-cli", append([]string{"-p", fmt.Sprint(p.port)}, args...)...).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "not connected") && len(out) != 0 {
		t.Fatalf("redis-cli %s: %v: %s", args, err, out)
	}
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("exit after %s: %v; log:\n%s", args, err, p.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10 s after %s; log:\n%s", args, p.stderr.String())
	}
}

// TestShutdownSaveModes: as Redis, SHUTDOWN SAVE writes dump.rdb even
// without a save policy, SHUTDOWN NOSAVE writes none even with one, and a
// plain SHUTDOWN saves when a policy is set; the next start loads it.
func TestShutdownSaveModes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		policy string
		args   []string
		saved  bool
	}{
		{"", []string{"SHUTDOWN", "SAVE"}, true},
		{"3600 1", []string{"SHUTDOWN", "NOSAVE"}, false},
		{"3600 1", []string{"SHUTDOWN"}, true},
		{"", []string{"SHUTDOWN"}, false},
	} {
		dir := t.TempDir()
		p := startBinary(t, "--dir", dir, "--save", tc.policy)
		if err := client(t, p.addr()).Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		shutdownBy(t, p, tc.args...)
		_, err := os.Stat(filepath.Join(dir, "dump.rdb"))
		if saved := err == nil; saved != tc.saved {
			t.Errorf("save %q, %s: dump.rdb written %v, want %v", tc.policy, tc.args, saved, tc.saved)
			continue
		}
		if !tc.saved {
			continue
		}
		p2 := startBinary(t, "--dir", dir)
		if v := client(t, p2.addr()).Get(ctx, "k").Val(); v != "v" {
			t.Errorf("save %q, %s: after a restart k is %q", tc.policy, tc.args, v)
		}
	}
}
