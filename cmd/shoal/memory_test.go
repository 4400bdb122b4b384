package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/procfs"
)

// rssSlack is the documented bound on what a shoal process holds beyond maxmemory when
// filled past it with eviction on (README, "Memory"): the Go runtime and binary, the
// connections' buffers, partly used arena pages and the index's load-factor slack.
const rssSlack = 32 << 20

// processRSS is VmRSS of pid in bytes.
func processRSS(t *testing.T, pid int) int64 {
	t.Helper()
	rss, err := procfs.RSS(pid)
	if err != nil {
		t.Skipf("no resident set size: %v", err)
	}
	return rss
}

// TestRSSStaysWithinMaxMemory writes three times maxmemory of small keys into a shoal
// process with allkeys-lru and checks that its RSS ends within maxmemory + rssSlack,
// that it evicted, and that used_memory respects maxmemory.
func TestRSSStaysWithinMaxMemory(t *testing.T) {
	const maxMemory = 64 << 20
	p := startBinary(t, "--maxmemory", strconv.Itoa(maxMemory), "--maxmemory-policy", "allkeys-lru")
	conn := p.dial(t)
	w, r := bufio.NewWriterSize(conn, 1<<16), bufio.NewReaderSize(conn, 1<<16)
	value := strings.Repeat("v", 100)
	// A key costs a 128-byte block (key + value) plus 36 bytes of entry and index.
	const perKey = 128 + 36
	const keys, batch = 3 * maxMemory / perKey, 1000
	for i := 0; i < keys; i += batch {
		for j := i; j < i+batch; j++ {
			k := "key:" + strconv.Itoa(j)
			fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(value), value)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < batch; j++ {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line != "+OK\r\n" {
				t.Fatalf("SET #%d: %q", i+j, line)
			}
		}
	}
	fmt.Fprintf(w, "*2\r\n$4\r\nINFO\r\n$3\r\nall\r\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	head, err := r.ReadString('\n')
	if err != nil || (head[0] != '$' && head[0] != '=') {
		t.Fatalf("INFO reply header %q: %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	info := map[string]string{}
	for _, line := range strings.Split(string(body), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[k] = v
		}
	}
	used, _ := strconv.ParseInt(info["used_memory"], 10, 64)
	evicted, _ := strconv.ParseInt(info["evicted_keys"], 10, 64)
	infoRSS, _ := strconv.ParseInt(info["used_memory_rss"], 10, 64)
	rss := processRSS(t, p.cmd.Process.Pid)
	t.Logf("%d SETs: used_memory %d, evicted %d, RSS %d (INFO %d), maxmemory %d", keys, used, evicted, rss, infoRSS, maxMemory)
	if evicted < keys/2 || used > maxMemory || used < maxMemory*3/4 {
		t.Fatalf("evicted %d of %d keys, used_memory %d, maxmemory %d: the fill did not go past maxmemory", evicted, keys, used, maxMemory)
	}
	if rss > maxMemory+rssSlack {
		t.Errorf("RSS %d MiB > maxmemory %d MiB + %d MiB", rss>>20, maxMemory>>20, rssSlack>>20)
	}
	if infoRSS <= 0 || infoRSS > 2*rss || rss > 2*infoRSS {
		t.Errorf("INFO used_memory_rss %d, /proc says %d", infoRSS, rss)
	}
}
